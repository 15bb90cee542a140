"""Why one side was faster: the counters whose ratio between the sides is furthest from 1.

Two kinds of counters (counters/): those every trial records (rusage, energy, the PMU's
instructions and cycles) have a value per round, so their ratio is the median of the per-round
ratios with the distribution-free interval of stats.recorded; those the counters pass recorded
once per side (the PMU's through perf, or cachegrind's model, and the code size) have a ratio
without an interval; where a trial's count has the pass's name, the trial's stands. None of
them enters a verdict or the geomean: they are read beside the headline, never instead of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from shootout.base.model import Run, Trial
from shootout.counters.pertrial import COUNTERS, TrialCounter
from shootout.stats.recorded import median_interval

# A counter "differs enough to matter" beyond this factor either way (and, with an interval,
# when the interval leaves 1 out): smaller differences are the noise of a quiet machine.
MATTERS = 1.1
SHOWN = 3  # counters on one "why" line

# The counters pass's counts -> how the line names them (perf's and cachegrind's share names)
PASS_LABELS = {"instructions": "instructions", "cycles": "cycles", "ipc": "IPC", "d1_misses": "D1 misses",
               "ll_misses": "LL misses", "i1_misses": "I1 misses", "l1d_misses": "L1d misses",
               "llc_misses": "LLC misses", "dtlb_misses": "dTLB misses", "branch_misses": "branch misses",
               "text_bytes": "code size"}
# A pass cut at its time cap counted a different amount of work on each side: only its rates
# per instruction compare
RATES = ("d1_misses", "ll_misses", "i1_misses", "l1d_misses", "llc_misses", "dtlb_misses", "branch_misses")
# ... and only when both sides got as far into the program itself: a cut pass that counted
# different processes (a program SIGKILLed at the cap leaves no count, its shell does),
# instructions this factor apart, or fewer than CUT_LEAST (a shell's start; valgrind runs 15-60
# million a second past its start, on a Pi too) counted different phases, or none of the
# program: membw's rates differed 1000x for that alone
CUT_APART = 10.0
CUT_LEAST = 10_000_000


@dataclass(frozen=True)
class CounterRatio:
    name: str
    label: str
    ratio: float  # the configuration's over the baseline's
    low: float | None = None  # the interval, where the counter has a value per round
    high: float | None = None
    source: str = ""  # "" for a trial's own counters; "cachegrind model", "perf", ... for the pass's

    def matters(self) -> bool:
        if not MATTERS ** -1 < self.ratio < MATTERS:
            return self.low is None or self.high is None or not self.low <= 1.0 <= self.high
        return False

    def text(self) -> str:
        """'RSS 0.55× [0.54–0.56]' or 'D1 misses 0.62× (cachegrind model)'."""
        shown = f"{self.label} {_times(self.ratio)}"
        if self.low is not None and self.high is not None and f"{self.low:.3f}" != f"{self.high:.3f}":
            digits = 2 if f"{self.low:.2f}" != f"{self.high:.2f}" else 3  # a narrow interval keeps two ends
            shown += f" [{_times(self.low, '', digits)}\u2013{_times(self.high, digits=digits)}]"
        return f"{shown} ({self.source})" if self.source else shown


@dataclass(frozen=True)
class Why:
    workload: str
    config: str
    ratios: tuple[CounterRatio, ...]  # furthest from 1 first

    def shown(self) -> tuple[CounterRatio, ...]:
        return tuple(r for r in self.ratios if r.matters())[:SHOWN]

    def line(self) -> str:
        return ", ".join(r.text() for r in self.shown())


def _times(ratio: float, unit: str = "\u00d7", digits: int = 2) -> str:
    return f"{ratio:.{digits}f}{unit}" if 0.01 <= ratio < 100 else f"{ratio:.3g}{unit}"


def _by_round(trials: Sequence[Trial], workload: str, config: str, counter: TrialCounter) -> dict[int, float]:
    out = {}
    for t in trials:
        if t.ok and t.spec.round > 0 and t.spec.workload == workload and t.spec.config == config:
            if (value := counter.read(t)) is not None:
                out[t.spec.round] = value
    return out


def trial_ratios(run: Run, trials: Sequence[Trial], workload: str, config: str) -> list[CounterRatio]:
    """Each per-trial counter's median per-round ratio, with its interval where the rounds reach
    the run's confidence; a counter at zero on a side in some round (no major fault) has none."""
    out = []
    base = run.baseline.name
    for counter in COUNTERS:
        a, b = _by_round(trials, workload, base, counter), _by_round(trials, workload, config, counter)
        ratios = [b[r] / a[r] for r in sorted(set(a) & set(b)) if a[r] > 0 and b[r] > 0]
        if not ratios or len(ratios) < len(set(a) & set(b)):
            continue
        found = median_interval(ratios, run.settings.confidence)
        if found is None:
            out.append(CounterRatio(counter.name, counter.label, float(sorted(ratios)[len(ratios) // 2])))
        else:
            out.append(CounterRatio(counter.name, counter.label, found.median, found.low, found.high))
    return out


def _source(record: dict[str, Any]) -> str:
    if record.get("source") == "cachegrind":
        return f"cachegrind {record.get('model', 'host')} model"
    return str(record.get("source", ""))


def _counts(record: dict[str, Any], rates: bool) -> dict[str, float]:
    """The pass's counts, as rates per instruction where either side's was cut at its cap."""
    counts = {k: float(v) for k, v in record.get("counts", {}).items() if isinstance(v, (int, float))}
    if rates:
        per = counts.get("instructions") or 0.0
        return {k: v / per for k, v in counts.items() if k in RATES and per > 0}
    return counts


def cut_apart(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """Why two sides' pass, cut at its cap, got to different places of the program; None when
    neither was cut or both got about as far."""
    if not (a.get("partial") or b.get("partial")):
        return None
    pa, pb = a.get("processes"), b.get("processes")
    if pa != pb:
        return f"it counted {pb} process{'' if pb == 1 else 'es'}, the baseline {pa}"
    ia, ib = (float(r.get("counts", {}).get("instructions") or 0) for r in (a, b))
    if min(ia, ib) < CUT_LEAST or max(ia, ib) / min(ia, ib) > CUT_APART:
        return f"it counted {ib:,.0f} instructions, the baseline {ia:,.0f}"
    return None


def pass_ratios(run: Run, workload: str, config: str) -> list[CounterRatio]:
    """The counters pass's ratios for one workload: its counts (unless cut apart) and the code
    size, one each."""
    records = run.counters.get(workload, {})
    a, b = records.get(run.baseline.name), records.get(config)
    if not a or not b or a.get("source") != b.get("source"):
        return []
    source, rates = _source(b), bool(a.get("partial") or b.get("partial"))
    ca, cb = ({}, {}) if cut_apart(a, b) else (_counts(a, rates), _counts(b, rates))
    out = [CounterRatio(k, PASS_LABELS.get(k, k) + (" per instruction" if rates else ""), cb[k] / ca[k],
                        source=source)
           for k in ca if k in cb and k in PASS_LABELS and ca[k] > 0 and cb[k] > 0]
    ta, tb = a.get("code", {}).get("text_bytes"), b.get("code", {}).get("text_bytes")
    if ta and tb:
        out.append(CounterRatio("text_bytes", "code size", tb / ta, source="ELF"))
    return out


def why(run: Run, trials: Sequence[Trial], workload: str, config: str) -> Why:
    """A count every trial made (with its interval) stands for the pass's one of the same name."""
    ratios = trial_ratios(run, trials, workload, config)
    ratios += [r for r in pass_ratios(run, workload, config) if r.name not in {t.name for t in ratios}]
    ratios.sort(key=lambda r: -abs(math.log(r.ratio)))
    return Why(workload, config, tuple(ratios))


def whys(run: Run, trials: Sequence[Trial]) -> tuple[Why, ...]:
    """Every workload against every configuration but the baseline, in the run's order."""
    return tuple(why(run, trials, spec.name, config.name)
                 for spec in run.workloads for config in run.configs[1:])
