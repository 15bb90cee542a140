"""The counters pass: once per side and workload, untimed, after the rounds, what the side did.

Where the machine has a CPU PMU the trial's command runs once under `perf stat`; elsewhere (a
VM, most clouds, qemu) under valgrind's cachegrind, a model of the caches named with its
figures. Both run inside the side (its userspace's perf or valgrind, installed there like a
workload's tools), with the run's parameters. Cachegrind slows a program 10-50 times, so a
pass has a cap (all passes together: a tenth of the rounds' time): a workload that sizes its
work by one parameter (calibrate_param) runs it scaled down so that the pass ends within the
cap (both sides at the same size); any other is stopped at the cap by SIGTERM and compared by
its rates per instruction. The size of
the code that ran and the OpenSSL paths of each side are read beside it. Nothing here enters a
verdict (judge/why.py); a pass that cannot run is one line in the run's notes.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Any

from shootout.base.errors import ShootoutError
from shootout.base.model import Config
from shootout.counters import cachegrind, codepaths, codesize, perfstat
from shootout.judge.confounders import is_emulated
from shootout.measure.runstate import Live
from shootout.places.kind import KINDS
from shootout.places.target import Target, layout_padding
from shootout.workloads.contract import Workload

# Of the time the rounds took, what all passes together may take: a tenth, as a bound on what
# the counters cost a run (at least MIN_CAP_S a pass: valgrind takes about a second to start)
SHARE = 0.10
MIN_CAP_S = 2.0
# cachegrind's slowdown to plan a scaled pass by: 8-30x here, and a 32-bit side may run twice the
# instructions; planned high, so that both sides of a scaled pass end within the cap
SLOWDOWN = 200.0
STARTUP_S = 1.0  # valgrind's own start, before the program runs
# perf stat's event names -> the names judge/why.py gives them
PERF_NAMES = {"instructions": "instructions", "cycles": "cycles", "ipc": "ipc", "L1-dcache-load-misses": "l1d_misses",
              "LLC-load-misses": "llc_misses", "dTLB-load-misses": "dtlb_misses", "branch-misses": "branch_misses"}
# commands that start the program that does the work: the code size is the program's
_LAUNCHERS = {"sh", "bash", "dash", "env", "timeout", "nice", "taskset", "chrt", "ionice"}


def cap_s(live: Live, passes: int) -> float:
    return max(MIN_CAP_S, SHARE * live.elapsed() / max(passes, 1))


def _trial_wall(live: Live, name: str) -> float:
    walls = [t.wall_s for t in live.trials if t.ok and t.spec.round > 0 and t.spec.workload == name]
    return statistics.median(walls) if walls else 1.0


def scaled_params(live: Live, workload: Workload, cap: float) -> tuple[dict[str, Any], str]:
    """The parameters of a cachegrind pass, and what was scaled ("" for the run's own)."""
    params = dict(live.run.params[workload.spec.name])
    param = getattr(workload, "calibrate_param", None)
    factor = max(cap - STARTUP_S, 0.5) / (SLOWDOWN * _trial_wall(live, workload.spec.name))
    if param is None or factor >= 1 or not isinstance(params.get(param), int):
        return params, ""
    full = params[param]
    params[param] = max(1, int(full * factor))
    return params, f"{param} {params[param]:,} of {full:,}"


def main_binary(target: Target, workload: Workload, argv: list[str]) -> str | None:
    """The program whose code ran: argv[0], or the workload's first tool behind a shell."""
    first = argv[0]
    if PurePosixPath(first).name in _LAUNCHERS and workload.tools:
        first = workload.tools[0].command
    return first if first.startswith("/") else target.which(first)


def _cachegrind(target: Target, argv: list[str], wrap: list[str], model: str, cap: float,
                out_dir: str) -> dict[str, Any]:
    target.remove(out_dir)
    target.mkdir(out_dir)
    capped = ["timeout", "--signal=TERM", "--kill-after=10", f"{cap:.0f}"]
    result = target.run([*capped, *cachegrind.prefix(cachegrind.MODELS[model], out_dir), *argv],
                        env=layout_padding(), timeout=cap + 60, wrap=wrap)
    partial = result.exit_status == 124  # timeout's: stopped at the cap, and valgrind wrote what it had
    if result.exit_status not in (0, 124):
        raise ShootoutError(f"exit {result.exit_status} under valgrind: {result.stderr_tail(1)[:120]}")
    names = target.run(["ls", out_dir], timeout=60).stdout.split()
    found = cachegrind.parse([target.read(f"{out_dir}/{n}").decode(errors="replace") for n in names])
    target.remove(out_dir)
    counts = {k: v for k, v in found.as_dict().items() if k not in ("caches", "processes")}
    return {"source": "cachegrind", "model": model, "caches": found.caches, "partial": partial,
            "processes": found.processes, "counts": counts}


def _perf(target: Target, argv: list[str], wrap: list[str], cap: float, out_dir: str) -> dict[str, Any]:
    target.mkdir(out_dir)
    out = f"{out_dir}/perf.csv"
    result = target.run([*perfstat.prefix(out), *argv], env=layout_padding(), timeout=cap * 10 + 60,
                        wrap=wrap)
    if result.exit_status != 0:
        raise ShootoutError(f"exit {result.exit_status} under perf stat: {result.stderr_tail(1)[:120]}")
    counts = perfstat.parse(target.read(out).decode(errors="replace"))
    target.remove(out_dir)
    return {"source": "perf", "partial": False, "multiplexed": counts.get("multiplexed"),
            "counts": {PERF_NAMES[k]: v for k, v in counts.items() if k in PERF_NAMES}}


class CounterPass:
    """One run's pass over its workloads and sides; `say` gets what could not be counted."""

    def __init__(self, live: Live, say: Callable[[str], None]) -> None:
        self.live = live
        self.say = say
        self.no_pmu = perfstat.pmu_here()  # None: the PMU counts
        self.tool = "valgrind" if self.no_pmu else "perf"
        self.package = "valgrind" if self.no_pmu else "linux-perf"
        # the configurations whose commands run for real here (not a test's scripted fake)
        self.sides = [c for c in live.run.configs if c.name in live.targets and not KINDS[c.target].scripted]

    def describe(self) -> str:
        if self.no_pmu:
            return f"cachegrind's {self.live.run.settings.cache_model} cache model: {self.no_pmu.partition(':')[0]}"
        return "perf stat: the PMU's counters"

    def run(self, workloads: list[str], cap: float) -> None:
        """Every workload on every side, each pass within `cap` seconds (cap_s)."""
        live = self.live
        usable = {c.name: self._usable(c) for c in self.sides}
        for config in self.sides:
            self._code_paths(config)
        for name in workloads:
            params, scaled = scaled_params(live, live.workloads[name], cap) if self.no_pmu else (
                live.run.params[name], "")
            for config in [c for c in self.sides if usable[c.name]]:
                self._one(name, config, params, scaled, cap)

    def _usable(self, config: Config) -> bool:
        """Whether the side can run the pass's tool: installed into a userspace, found elsewhere."""
        side = self.live.run.facts.side(config.name)
        if self.no_pmu and is_emulated(side):
            self.say(f"counters: {config.display} runs emulated: cachegrind does not run under qemu, "
                     "no model for it")
            return False
        target = self.live.targets[config.name]
        t0 = time.monotonic()
        try:
            if target.provide([self.package]):
                self.say(f"counters: installed {self.package} into {config.display} "
                         f"({time.monotonic() - t0:.0f} s, once)")
        except ShootoutError:
            pass  # a host is never changed: said below when the tool is missing
        if target.which(self.tool) is None:
            self.say(f"counters: {config.display} has no {self.tool} (Debian package {self.package}): "
                     "no counters for it")
            return False
        return True

    @contextmanager
    def _parts(self, config: Config) -> Iterator[list[str]]:
        """The configuration's parts around the pass as around a trial (a memory limit, swap)."""
        parts = self.live.parts
        if parts is None:
            yield []
            return
        with self.live.lock:
            parts.before_trial(config)
            wrap = list(parts.wrap(config))
        try:
            yield wrap
        finally:
            with self.live.lock:
                parts.after_trial(config)

    def _code_paths(self, config: Config) -> None:
        target = self.live.targets[config.name]
        try:
            result = target.run(["openssl", "version", "-c"], timeout=60) if target.which("openssl") else None
        except ShootoutError:
            result = None  # no openssl to ask: the side's facts say nothing of its paths
        if result is not None and (paths := codepaths.openssl_paths(result.stdout)):
            self.live.run.facts.side_for(config.name)["code_paths"] = {"openssl": list(paths)}

    def _one(self, name: str, config: Config, params: dict[str, Any], scaled: str, cap: float) -> None:
        live = self.live
        workload, target = live.workloads[name], live.targets[config.name]
        argv = workload.argv(live.prepared[(name, config.name)], params)
        out_dir = f"{target.workdir()}/counters-{name}"
        t0 = time.monotonic()
        try:
            with self._parts(config) as wrap:
                record = (_cachegrind(target, argv, wrap, live.run.settings.cache_model, cap, out_dir)
                          if self.no_pmu else _perf(target, argv, wrap, cap, out_dir))
            record.update(seconds=round(time.monotonic() - t0, 2), scaled=scaled)
            if (binary := main_binary(target, workload, argv)) is not None:
                record["code"] = codesize.code_size(target, binary)
        except ShootoutError as exc:  # a side without counters, said; never the run's failure
            self.say(f"counters: {name} on {config.display}: {exc.message}")
            return
        live.run.counters.setdefault(name, {})[config.name] = record
