"""A rate at the generator's own ceiling: the generator's figure, not the drop point's.

The drop ladder's trials measure, beside the rate the drop point took, the rate of the
generator alone with nothing receiving (`gen_ceiling_kpps`). A trial whose rate is within
GEN_BOUND of that ceiling measured the generator: the rung could have taken more, so a rate
ranked against another rung's is noise around one ceiling. The analysis adds this flag to
the rate's comparison (a sub-metric, an estimate without a verdict); the rungs are compared by
their receive-side cost per packet, the workload's headline.
"""

from __future__ import annotations

from collections.abc import Iterable

from shootout.base.model import Trial

CEILING = "gen_ceiling_kpps"  # the value a trial carries when it measured its generator's ceiling
RATE = "kpps"
GEN_BOUND = 0.8  # a rate at 80% or more of the generator's ceiling


def bound_share(trial: Trial) -> float | None:
    """The trial's rate as a share of its generator's ceiling, or None when it has no ceiling."""
    rate, ceiling = trial.values.get(RATE), trial.values.get(CEILING)
    return rate / ceiling if rate is not None and ceiling else None


def generator_flags(trials: Iterable[Trial], metric: str) -> list[str]:
    """At most one flag per configuration, on the rate only: 'generator-bound: ...'."""
    if metric != RATE:
        return []
    shares: dict[str, list[float]] = {}
    for t in trials:
        if (share := bound_share(t)) is not None:
            shares.setdefault(t.spec.config, []).append(share)
    flags = []
    for config, seen in shares.items():
        at = [s for s in seen if s >= GEN_BOUND]
        if 2 * len(at) >= len(seen):
            flags.append(f"generator-bound: {config} {len(at)}/{len(seen)} trials at ≥{GEN_BOUND:.0%} of the "
                         f"generator's own ceiling (no drop point): this rate is the generator's, not the drop "
                         f"point's; compare the receive-side cost per packet")
    return flags
