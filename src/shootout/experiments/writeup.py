"""What a named experiment is, and the paragraph that sets its results beside the write-up's.

The write-ups (A-E) and their figures are restated in the repository's docs/writeups.md."""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from string import Template
from typing import TYPE_CHECKING, Any

from shootout.base.errors import UsageError
from shootout.configs.specs import FileSettings, load_data, parse_toml
from shootout.experiments.sizing import DEFAULT_SIZE, SIZES, WRITEUP_SIZE, Plan, Sizing, plan
from shootout.userspace.arches import headline_arches, host_arch, kernel_arch

# why an experiment whose every configuration has a network part needs root
NETWORK_NEEDS_ROOT = "network namespaces, veth pairs and tc rules for every configuration"
WRITEUPS = "docs/writeups.md"  # in shootout's repository: each write-up's setup and figures, by letter
_SECTION = re.compile(r"(?:^|; )([A-E])(?:'s\b|,)")  # "A, ...", "A's ...", "...; E, ..."

if TYPE_CHECKING:
    from shootout.judge.analysis import Analysis, Comparison


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str  # a few words for the one-line listing (shootout experiments)
    description: str
    reproduces: str  # the write-up, by its letter in docs/writeups.md (then its title or part)
    # [run], [[config]], [[workload]] and [params.WORKLOAD] tables, as in shootout.toml; $native and
    # $companion stand for this machine's 64-bit Debian architecture and its 32-bit companion
    toml: str
    sizing: Sizing  # its round time here, so its run carries a budget and rounds (sizing.py)
    # workload -> what the write-up found for it, shown beside the measured result
    found: dict[str, str] = field(default_factory=dict)
    # a paragraph of its own instead of the one-line-per-workload comparison (optional)
    explainer: Callable[[Analysis], list[str]] | None = None
    # workload -> how its headline result reads in that line, where a speed-up would mislead
    # (a capacity: rpi64's maxalloc); the others read "A vs B: speed-up, verdict"
    readings: dict[str, Callable[[Analysis, Comparison], str]] = field(default_factory=dict)
    # True: the user names the machines (-c, or [[config]] tables of --file) and their prices (--price)
    machines: bool = False
    # why it needs root, when every configuration does (said in one line before anything is made)
    needs_root: str = ""
    # its own δ, as its [run] table sets it (threshold = "5%"; None: the default 1%), declared beside
    # the table: the run's threshold is decided once (request/settings.py), --threshold winning
    threshold: float | None = None
    # why its [run] table sets a threshold other than the default 1% (said beside its verdicts)
    threshold_why: str = ""
    # The write-up's own sizes where `toml` cuts them (`shootout run --size writeup`), kept here
    # beside the toml: [params.WORKLOAD] keys that replace the toml's, and [[config]] keys by the
    # configuration's name (a scratch big enough for them); inline tables merge key by key.
    writeup_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    writeup_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # its rounds at those sizes, with a limit they fit (None: nothing is cut, the same as sizing)
    writeup_sizing: Sizing | None = None
    writeup_note: str = ""  # what --size writeup changes, in words

    @property
    def sections(self) -> list[str]:
        """The letters of the write-ups it reproduces, in docs/writeups.md: ['D', 'E']."""
        return list(dict.fromkeys(_SECTION.findall(self.reproduces)))

    @property
    def cited(self) -> str:
        """Where the write-up's figures are: 'docs/writeups.md, section A' (or 'sections D, E')."""
        letters = self.sections
        where = f"{WRITEUPS}, section{'s' if len(letters) > 1 else ''} {', '.join(letters)}"
        return where + (" and its reference numbers" if "reference numbers" in self.reproduces else "")

    def text(self) -> str:
        """Its TOML with $native and $companion replaced by this machine's pair."""
        text = self.toml
        if "$native" in text or "$companion" in text:
            native, companion = _sides(self.name)
            text = Template(text).substitute(native=native, companion=companion)
        return text

    def tables(self, size: str = DEFAULT_SIZE) -> dict[str, Any]:
        """Its tables as parsed TOML, at its own size or (WRITEUP_SIZE) the write-up's."""
        if size not in SIZES:
            raise UsageError(f"--size {size!r} is not a size", f"use one of: {', '.join(SIZES)}")
        data = parse_toml(self.text(), f"experiment {self.name}")
        if size == WRITEUP_SIZE:
            params = data.setdefault("params", {})
            for workload, table in self.writeup_params.items():
                params[workload] = _merged(params.get(workload, {}), table)
            for config in data.get("config", []):
                config.update(_merged(config, self.writeup_configs.get(config.get("name", ""), {})))
        return data

    def settings(self, size: str = DEFAULT_SIZE) -> FileSettings:
        at = " at the write-up's sizes" if size == WRITEUP_SIZE else ""
        return load_data(self.tables(size), f"experiment {self.name}{at}")

    def sizing_at(self, size: str = DEFAULT_SIZE) -> Sizing:
        """Its round time and limit at that size (the write-up's: its own where it cuts nothing)."""
        return self.writeup_sizing if size == WRITEUP_SIZE and self.writeup_sizing is not None else self.sizing

    @property
    def cuts(self) -> bool:
        """Whether its own size cuts the write-up's (then --size writeup runs something else)."""
        return bool(self.writeup_params or self.writeup_configs)

    def family(self) -> int:
        """Its run's headline comparisons: workloads x configurations after the baseline
        (the main job's two userspaces when it names none)."""
        run = self.settings().run
        sides = len(run.get("configs", [])) or 2
        return max(1, len(run.get("workloads", [])) * (sides - 1))

    def plan(self, confidence: float = 0.95, min_rounds: int = 6, size: str = DEFAULT_SIZE) -> Plan:
        return plan(self.sizing_at(size), self.family(), confidence, min_rounds)

    def explain(self, analysis: Analysis) -> list[str]:
        """Lines for the report: each headline result beside what the write-up found."""
        from shootout.experiments.differs import differences

        if self.explainer is not None:
            return (self.explainer(analysis) + self._size_line(analysis) + self._threshold_line(analysis)
                    + differences(analysis))
        from shootout.report.text import fmt_estimate

        by_id = {c.name: c.display for c in analysis.configs}
        lines = [f"{self.name}: {self.reproduces}"]
        for comp in analysis.comparisons:
            if not comp.headline:
                continue
            found = self.found.get(comp.workload)
            reading = self.readings.get(comp.workload)
            measured = (reading(analysis, comp) if reading is not None else
                        f"{by_id[comp.config]} vs {by_id[comp.baseline]}: {fmt_estimate(comp.estimate)}, {comp.verdict}")
            lines.append(f"{comp.workload}: {measured}" + (f"; the write-up: {found}" if found else ""))
        return lines + self._size_line(analysis) + self._threshold_line(analysis) + differences(analysis)

    def _size_line(self, analysis: Analysis) -> list[str]:
        """At the write-up's sizes (--size writeup): what they are, where they differ from its own."""
        if not self.cuts or not any(r.settings.size == WRITEUP_SIZE for r in analysis.runs):
            return []
        ran = {w.name for w in analysis.workloads}
        if not self.writeup_configs and not ran & set(self.writeup_params):  # -w left out what it changes
            return []
        return [f"at the write-up's sizes (--size writeup): {self.writeup_note}"]

    def _threshold_line(self, analysis: Analysis) -> list[str]:
        """Where the experiment sets its own threshold: which one the run used, and why."""
        own = self.threshold
        if own is None:
            return []
        why = f"the experiment's own threshold ±{own * 100:g}%: {self.threshold_why}"
        if math.isclose(analysis.threshold, own):
            return [f"threshold ±{own * 100:g}%: {why}"]
        return [f"threshold ±{analysis.threshold * 100:g}% (--threshold); {why}"]


def _merged(table: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """table with over's keys replacing its own; where both hold a table, merged key by key."""
    out = copy.deepcopy(dict(table))
    for k, v in over.items():
        out[k] = _merged(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else copy.deepcopy(v)
    return out


def _sides(name: str) -> tuple[str, str]:
    """This machine's 64-bit architecture and its 32-bit companion: amd64 and i386 on a PC, arm64
    and armhf on a Raspberry Pi (also under 32-bit Raspberry Pi OS on its 64-bit kernel) or an ARM server."""
    userspace, kernel = host_arch(), kernel_arch()
    if (pair := headline_arches(userspace, kernel)) is None:
        raise UsageError(f"experiment {name} compares a 64-bit userspace with its 32-bit companion, and this "
                         f"{userspace} machine has none", "run it on an x86-64 or arm64 machine")
    return pair


def host_ladder(workloads: list[str], settings: dict[str, str]) -> str:
    """The TOML of a run on the host whose configurations differ in one setting each:
    configuration name -> its setting line (e.g. 'drop = "nft"'), the first the baseline."""
    names = ", ".join(f'"{name}"' for name in settings)
    chosen = ", ".join(f'"{w}"' for w in workloads)
    return f"[run]\nconfigs = [{names}]\nworkloads = [{chosen}]\n" + "".join(
        f'\n[[config]]\nname = "{name}"\nspec = "host"\n{line}\n' for name, line in settings.items())
