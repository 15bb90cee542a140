"""The counters every trial records beside its headline: its rusage and, where the machine
reports them, its energy and the PMU's instructions and cycles. Each has a value per round, so
its ratio between two sides gets an interval like a speed-up's (judge/why.py); none of them
enters a verdict.

Instructions and cycles are never a headline, though noise moves them less than time: cycles
leave out the clock (a governor, a throttled or a faster-clocked core changes the time a user
waits, not the cycles), and instructions count work, not time (a 64-bit build runs fewer, and
not equally fast, instructions than its 32-bit companion). They say why a side was faster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shootout.base.model import Metric, Trial
from shootout.execution.process import ProcResult

RUSAGE = "rusage"  # Trial.observed key of the rest of the trial's rusage
ENERGY = "energy"  # Trial.observed key of the joules the trial used ({"joules": J})
PMU = "pmu"  # Trial.observed key of the PMU's counts ({"instructions": N, "cycles": C, "scope": "all"|"user"})
# ... and how the recorded amounts (judge/amounts.py) name it: a median per side, with an interval
JOULES = Metric("joules", "J", "energy one trial used (one run of the work), as this machine reported it")


@dataclass(frozen=True)
class TrialCounter:
    name: str
    label: str  # as the "why" line says it
    unit: str
    read: Callable[[Trial], float | None]


def _observed(key: str, figure: str) -> Callable[[Trial], float | None]:
    def read(trial: Trial) -> float | None:
        value = trial.observed.get(key, {}).get(figure)
        return None if value is None else float(value)
    return read


def _pmu(figure: str, scope: str) -> Callable[[Trial], float | None]:
    """A PMU count of one scope: a side that counted the kernel's code too is not compared with one
    that counted user space alone (a remote account that perf_event_paranoid limits)."""
    def read(trial: Trial) -> float | None:
        counts = trial.observed.get(PMU, {})
        return float(counts[figure]) if counts.get("scope") == scope and figure in counts else None
    return read


COUNTERS: tuple[TrialCounter, ...] = (
    TrialCounter("max_rss", "RSS", "KiB", lambda t: float(t.max_rss_kb)),
    TrialCounter("minor_faults", "page faults", "faults", _observed(RUSAGE, "minor_faults")),
    TrialCounter("major_faults", "major faults", "faults", _observed(RUSAGE, "major_faults")),
    TrialCounter("voluntary_switches", "waits (voluntary switches)", "switches", _observed(RUSAGE, "voluntary_switches")),
    TrialCounter("involuntary_switches", "preemptions", "switches", _observed(RUSAGE, "involuntary_switches")),
    TrialCounter("energy", "energy", "J", _observed(ENERGY, "joules")),
    TrialCounter("instructions", "instructions", "instructions", _pmu("instructions", "all")),
    TrialCounter("cycles", "cycles", "cycles", _pmu("cycles", "all")),
    TrialCounter("user_instructions", "user-space instructions", "instructions", _pmu("instructions", "user")),
    TrialCounter("user_cycles", "user-space cycles", "cycles", _pmu("cycles", "user")),
)


def rusage_of(result: ProcResult) -> dict[str, int]:
    """The rusage a trial keeps beyond its columns (max RSS, CPU time): {} where not known."""
    found = {"minor_faults": result.minor_faults, "major_faults": result.major_faults,
             "voluntary_switches": result.voluntary_switches, "involuntary_switches": result.involuntary_switches}
    return {k: v for k, v in found.items() if v is not None}


def pmu_of(result: ProcResult) -> dict[str, int | str]:
    """The PMU's counts of a trial, with their scope: {} where nothing was counted."""
    found = {"instructions": result.instructions, "cycles": result.cycles}
    counted: dict[str, int | str] = {k: v for k, v in found.items() if v is not None}
    return {**counted, "scope": result.pmu_scope or "all"} if counted else {}


def pmu_note(trials: Sequence[Trial]) -> list[str]:
    """One line where trials carry the PMU's counts: what they are, and why none is a headline."""
    scopes = {t.observed[PMU].get("scope") for t in trials if PMU in t.observed}
    if not scopes:
        return []
    limited = " (user space alone on a side whose kernel refused to count its own code)" if "user" in scopes else ""
    return [f"instructions and cycles: the PMU's counts of every trial{limited}, beside each headline and never "
            "one: cycles leave out the clock a user waits on, instructions count work, not time"]
