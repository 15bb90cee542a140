"""The clock of a timed command's headline: its own CPU time when its trials show it CPU-bound.

A command timed by the wall clock also pays for whatever else the machine ran meanwhile: on
a busy machine (other programs, an on/off load, a hypervisor's steal) a trial that waited
for a CPU looks slower, and that noise decides how many rounds a verdict takes. A command
that only computes is measured better by its own CPU time (user + sys from wait4's rusage,
which covers its whole process tree), as the native kernels time themselves.

The rule, stated in the output: over the trials before the sequential rule's first look (the
warm-up and rounds 1 to --min-rounds), the median of the command's CPU time plus the time its
process waited for a CPU (its run delay from /proc/PID/schedstat, read before it is reaped),
over its wall time, was within 5% of 1 on every configuration. So a command that only computes
qualifies however busy the machine is, and one that sleeps, waits on I/O or the network
keeps its wall time (the sum is well below); one that runs threads or processes in parallel
keeps it too (the sum is well above: a configuration that parallelises better must show as
faster; a command started through a shell counts only the shell's wait, so on a busy machine
it qualifies only when it had a CPU to itself). The median is what makes the choice hold: one
trial stopped or interrupted (a warm-up that waited) does not move it, where a choice from the
warm-up trial alone changed between runs of the same file. A limit: a parallel command whose
processes other programs kept to one CPU's worth in most of those trials can pass for a
computing one; its verdict is then on CPU time, and the output says so. Where the run delay is
unknown (a remote machine) CPU time alone must be within 5%. The choice is made before the
first look from these ratios alone (never from a comparison of the configurations), so it
cannot favour a verdict; it is kept with the run (Run.headline_clocks, with its figures), so a
resumed run and `compare` judge the same metric; the wall time stays beside the headline as a
sub-metric. A [[workload]] that knows what it does declares its clock (clock = "cpu" or "wall"):
then nothing is chosen, and the output says it was declared. Where the machine has a PMU, each
trial's instructions and cycles are recorded too, never as the headline (counters/pertrial.py:
cycles leave out the clock, instructions count work, not time). """

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from shootout.base.model import Run, Trial, WorkloadSpec

WALL, CPU = "wall", "cpu"
WITHIN = 0.05  # CPU time within 5% of wall time: the command did nothing but compute
SCHED = "sched"  # Trial.observed[SCHED]["run_delay_s"]: time the command waited for a CPU
# Run.headline_clocks: {workload: {"clock": "cpu"|"wall", "cpu_per_wall": {config: r}, "trials": n}},
# r the median of (CPU time + run delay) / wall time over each configuration's trials up to round
# --min-rounds, n the fewest trials of a configuration (choices kept before there was "trials"
# came from the warm-up trial alone)


def offers_cpu(spec: WorkloadSpec) -> bool:
    """A workload timed by the wall clock that also records its CPU time."""
    names = {m.name for m in spec.metrics}
    return spec.headline == WALL and CPU in names


def _ratio(values: dict[str, float], wall: float, delay: float | None) -> float | None:
    """(CPU time + time waiting for a CPU) / wall time: 1 for a command that only computes,
    however busy the machine; below for one that waits; above for one that runs in parallel."""
    if wall <= 0 or CPU not in values:
        return None
    return (values[CPU] + (delay or 0.0)) / wall


def pick(spec: WorkloadSpec, trials: Sequence[Trial], last_round: int = 0) -> dict[str, Any] | None:
    """The clock for this workload: the one its file declares, or the one its trials of rounds 0
    (the warm-up) to last_round show; None when there is nothing to choose (no CPU metric, no
    trial, a failed one)."""
    if offers_cpu(spec) and spec.clock:
        return {"clock": spec.clock, "declared": True, "cpu_per_wall": {}}
    mine = [t for t in trials if t.spec.workload == spec.name and t.spec.round <= last_round]
    if not offers_cpu(spec) or not mine or not all(t.ok and t.wall_s > 0 for t in mine):
        return None
    per_config: dict[str, list[float]] = {}
    for t in mine:
        ratio = _ratio(t.values, t.wall_s, t.observed.get(SCHED, {}).get("run_delay_s"))
        per_config.setdefault(t.spec.config, []).append(ratio or 0.0)
    ratios = {c: round(statistics.median(rs), 4) for c, rs in per_config.items()}
    bound = all(abs(r - 1.0) <= WITHIN for r in ratios.values())
    return {"clock": CPU if bound else WALL, "cpu_per_wall": ratios,
            "trials": min(len(rs) for rs in per_config.values())}


def record(run: Run, specs: Iterable[WorkloadSpec], trials: Sequence[Trial]) -> list[str]:
    """Before the first look (or as the run ends, when it ends sooner): pick and keep the clock
    of every workload that offers one and has none yet (a resumed run keeps its choice), from
    its trials up to round --min-rounds. Returns a line per new choice, for the output."""
    kept = run.headline_clocks
    lines = []
    for spec in specs:
        if spec.name in kept or (choice := pick(spec, trials, run.settings.min_rounds)) is None:
            continue
        kept[spec.name] = choice
        lines.append(note(spec.name, choice))
    return lines


def headline(run: Run, spec: WorkloadSpec) -> str:
    """The metric that carries this workload's verdict in this run."""
    choice = {"clock": spec.clock} if spec.clock else run.headline_clocks.get(spec.name)
    return CPU if offers_cpu(spec) and choice is not None and choice["clock"] == CPU else spec.headline


def note(name: str, choice: dict[str, Any]) -> str:
    """The rule and its figures, in words."""
    if choice.get("declared"):
        what = "the command's CPU time (user + sys), wall time beside it" if choice["clock"] == CPU else "wall time"
        return f"{name}: the headline is {what}, as its [[workload]] declares (clock = \"{choice['clock']}\")"
    ratios = ", ".join(f"{r:.3f} on {c}" for c, r in choice["cpu_per_wall"].items())
    trials = choice.get("trials")
    over = f"in the median of {trials} trials" if trials else "in the warm-up"
    if choice["clock"] == CPU:
        return (f"{name}: the headline is the command's CPU time (user + sys), wall time beside it: {over} "
                f"its CPU time plus its wait for a CPU was within {WITHIN:.0%} of its wall time on every "
                f"configuration ({ratios})")
    return (f"{name}: the headline is wall time: {over} its CPU time plus its wait for a CPU was not "
            f"within {WITHIN:.0%} of its wall time on every configuration ({ratios}): "
            "it waits or runs in parallel")


def notes(run: Run) -> list[str]:
    """Every choice of the run, for the report."""
    return [note(name, choice) for name, choice in run.headline_clocks.items()]
