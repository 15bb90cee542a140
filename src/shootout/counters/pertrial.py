"""The counters every trial records beside its headline: its rusage and, where the machine
reports it, its energy. Each has a value per round, so its ratio between two sides gets an
interval like a speed-up's (judge/why.py); none of them enters a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shootout.base.model import Metric, Trial
from shootout.execution.process import ProcResult

RUSAGE = "rusage"  # Trial.observed key of the rest of the trial's rusage
ENERGY = "energy"  # Trial.observed key of the joules the trial used ({"joules": J})
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


COUNTERS: tuple[TrialCounter, ...] = (
    TrialCounter("max_rss", "RSS", "KiB", lambda t: float(t.max_rss_kb)),
    TrialCounter("minor_faults", "page faults", "faults", _observed(RUSAGE, "minor_faults")),
    TrialCounter("major_faults", "major faults", "faults", _observed(RUSAGE, "major_faults")),
    TrialCounter("voluntary_switches", "waits (voluntary switches)", "switches", _observed(RUSAGE, "voluntary_switches")),
    TrialCounter("involuntary_switches", "preemptions", "switches", _observed(RUSAGE, "involuntary_switches")),
    TrialCounter("energy", "energy", "J", _observed(ENERGY, "joules")),
)


def rusage_of(result: ProcResult) -> dict[str, int]:
    """The rusage a trial keeps beyond its columns (max RSS, CPU time): {} where not known."""
    found = {"minor_faults": result.minor_faults, "major_faults": result.major_faults,
             "voluntary_switches": result.voluntary_switches, "involuntary_switches": result.involuntary_switches}
    return {k: v for k, v in found.items() if v is not None}
