"""The clock of a timed command's headline: its own CPU time when the warm-up shows it CPU-bound.

A command timed by the wall clock also pays for whatever else the machine ran meanwhile: on
a busy machine (other programs, an on/off load, a hypervisor's steal) a trial that waited
for a CPU looks slower, and that noise decides how many rounds a verdict takes. A command
that only computes is measured better by its own CPU time (user + sys from wait4's rusage,
which covers its whole process tree), as the native kernels time themselves.

The rule, stated in the output: in the warm-up, the command's CPU time plus the time its
process waited for a CPU (its run delay from /proc/PID/schedstat, read before it is reaped)
was within 5% of its wall time on every configuration. So a command that only computes
qualifies however busy the machine is, and one that sleeps, waits on I/O or the network
keeps its wall time (the sum is well below); one that runs threads or processes in parallel
keeps it too (the sum is well above: a configuration that parallelises better must show as
faster; a command started through a shell counts only the shell's wait, so on a busy machine
it qualifies only when it had a CPU to itself). A limit: a parallel command whose processes
other programs kept to one CPU's worth in the warm-up can pass for a computing one; its
verdict is then on CPU time, and the output says so. Where the run delay is unknown (a
remote machine) CPU time alone must be within 5%. The choice is made from the warm-up alone,
before any measured round, so it cannot favour a verdict; it is kept with the run
(Run.headline_clocks) and the wall time stays beside the headline as a sub-metric. """

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shootout.base.model import Run, Trial, WorkloadSpec

WALL, CPU = "wall", "cpu"
WITHIN = 0.05  # CPU time within 5% of wall time: the command did nothing but compute
SCHED = "sched"  # Trial.observed[SCHED]["run_delay_s"]: time the command waited for a CPU
# Run.headline_clocks: {workload: {"clock": "cpu"|"wall", "cpu_per_wall": {config: r}}}, r the
# warm-up trial's (CPU time + run delay) / wall time


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


def pick(spec: WorkloadSpec, warmup: Sequence[Trial]) -> dict[str, Any] | None:
    """The clock for this workload from its warm-up trials (one per configuration), or None
    when there is nothing to choose (no CPU metric, a failed or missing warm-up trial)."""
    mine = [t for t in warmup if t.spec.workload == spec.name and t.spec.round == 0]
    if not offers_cpu(spec) or not mine or not all(t.ok and t.wall_s > 0 for t in mine):
        return None
    ratios = {t.spec.config: round(_ratio(t.values, t.wall_s, t.observed.get(SCHED, {}).get("run_delay_s")) or 0.0,
                                   4) for t in mine}
    bound = all(abs(r - 1.0) <= WITHIN for r in ratios.values())
    return {"clock": CPU if bound else WALL, "cpu_per_wall": ratios}


def record(run: Run, specs: Iterable[WorkloadSpec], trials: Sequence[Trial]) -> list[str]:
    """After the warm-up: pick and keep the clock of every workload that offers one and has
    none yet (a resumed run keeps its choice). Returns a line per new choice, for the output."""
    kept = run.headline_clocks
    lines = []
    for spec in specs:
        if spec.name in kept or (choice := pick(spec, trials)) is None:
            continue
        kept[spec.name] = choice
        lines.append(note(spec.name, choice))
    return lines


def headline(run: Run, spec: WorkloadSpec) -> str:
    """The metric that carries this workload's verdict in this run."""
    choice = run.headline_clocks.get(spec.name)
    return CPU if offers_cpu(spec) and choice is not None and choice["clock"] == CPU else spec.headline


def note(name: str, choice: dict[str, Any]) -> str:
    """The rule and its figures, in words."""
    ratios = ", ".join(f"{r:.3f} on {c}" for c, r in choice["cpu_per_wall"].items())
    if choice["clock"] == CPU:
        return (f"{name}: the headline is the command's CPU time (user + sys), wall time beside it: in the warm-up "
                f"its CPU time plus its wait for a CPU was within {WITHIN:.0%} of its wall time on every "
                f"configuration ({ratios})")
    return (f"{name}: the headline is wall time: in the warm-up its CPU time plus its wait for a CPU was not "
            f"within {WITHIN:.0%} of its wall time on every configuration ({ratios}): "
            "it waits or runs in parallel")


def notes(run: Run) -> list[str]:
    """Every choice of the run, for the report."""
    return [note(name, choice) for name, choice in run.headline_clocks.items()]
