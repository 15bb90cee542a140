"""Recorded amounts of a run: what its trials counted that may be zero, per configuration.

Three sources, all stored with each trial: a workload's `recorded` values (tabs the OOM
killer took, major faults: Trial.values beside the metrics) and what the configuration's
parts saw during the trial (pressure stall time, swap traffic, zswap's pool: Trial.observed,
described by each Part's `observes`), and the energy the trial used where the machine reports
it (counters/pertrial.py). They are not speed-ups: each configuration gets the
median over its rounds with a distribution-free interval (stats.recorded.median_interval).
A workload's `guard` (tabs lost) decides its headline verdict before any speed-up does
(stats.recorded.guarded_verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shootout.base.model import Metric, Run, Trial, WorkloadSpec
from shootout.counters import pertrial
from shootout.parts import PARTS
from shootout.stats.recorded import Interval, Lost, guarded_verdict, median_interval
from shootout.stats.verdict import Verdict


@dataclass(frozen=True)
class Amount:
    workload: str
    name: str  # the workload's recorded metric, or "part.figure" for what a part observed
    unit: str
    description: str
    config: str
    interval: Interval | None  # None: too few rounds for the confidence asked
    values: tuple[float, ...]


def _observed_metrics() -> dict[str, Metric]:
    parts = {f"{part.name}.{m.name}": m for part in PARTS.values() for m in part.observes}
    return parts | {f"{pertrial.ENERGY}.{pertrial.JOULES.name}": pertrial.JOULES}


def by_round(trials: Sequence[Trial], workload: str, name: str, config: str) -> dict[int, float]:
    """Round -> the amount in that round's successful trial (warm-up left out)."""
    part, _, figure = name.partition(".")
    out = {}
    for t in trials:
        if t.spec.round <= 0 or not t.ok or t.spec.workload != workload or t.spec.config != config:
            continue
        value = t.observed.get(part, {}).get(figure) if figure else t.values.get(name)
        if value is not None:
            out[t.spec.round] = float(value)
    return out


def amounts(run: Run, trials: Sequence[Trial]) -> tuple[Amount, ...]:
    """Every recorded amount of every workload and configuration that has values."""
    observed = _observed_metrics()
    out = []
    for spec in run.workloads:
        named = {m.name: m for m in spec.recorded} | observed
        for name, metric in named.items():
            for config in run.configs:
                values = list(by_round(trials, spec.name, name, config.name).values())
                if values:
                    out.append(Amount(spec.name, name, metric.unit, metric.description, config.name,
                                      median_interval(values, run.settings.confidence), tuple(values)))
    return tuple(out)


@dataclass(frozen=True)
class Decided:
    """A headline verdict the workload's guard decided: the amount it counted on both sides."""

    amount: str  # e.g. "tabs_killed"
    lost: Lost

    def figure(self) -> str:
        """The number behind the verdict, in its place: 'tabs_killed 0 vs 400'."""
        return f"{self.amount} {self.lost.lost:g} vs {self.lost.baseline:g}"

    def flag(self, metric: str) -> str:
        # a lost tab frees memory and makes the survivors look fast: their latency is not comparable
        return f"{self.amount}: {self.lost.why()}; this decides, the {metric} speed-up is not judged"


def guard(spec: WorkloadSpec, trials: Sequence[Trial], baseline: str, config: str,
          speedup: Verdict) -> tuple[Verdict, Decided | None]:
    """The headline verdict after the workload's guard, and what decided it when the guard did."""
    if not spec.guard:
        return speedup, None
    verdict, lost = guarded_verdict(speedup, by_round(trials, spec.name, spec.guard, baseline),
                                    by_round(trials, spec.name, spec.guard, config))
    return verdict, (Decided(spec.guard, lost) if lost else None)
