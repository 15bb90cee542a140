"""What a run could resolve: the figures behind an "inconclusive" and behind a refused threshold.

An inconclusive verdict is an answer about the machine as much as about the configurations:
its noise did not let the rounds that were run decide at the threshold. These functions say
by how much, and what would settle it: the threshold at which the same data would read
"same", and how many rounds the threshold asked for would need at the noise seen.
Projections assume the interval narrows like 1/sqrt(rounds), so they are approximate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from shootout.stats.design import Design
from shootout.stats.estimate import Estimate

# Beyond this many rounds a projection means "the estimate sits on the threshold".
ROUNDS_CAP = 10_000
# Hodges–Lehmann's standard error is sqrt(pi/3) ~ 1.023 times the mean's under normal noise.
_HL_EFFICIENCY = math.sqrt(math.pi / 3.0)


@dataclass(frozen=True)
class Resolution:
    """Why one headline comparison ended inconclusive, in figures the user can act on."""

    resolves: float  # relative half-width of its interval: smaller differences were not resolvable
    same_at: float  # the smallest threshold at which this interval reads "same"
    rounds: int | None  # rounds the run's threshold would need at this noise (None: estimate at the threshold)
    seconds: float | None  # measuring time of those rounds, when the time per round is known


def resolution(est: Estimate, threshold: float, seconds_per_round: float | None = None) -> Resolution:
    low, high = math.log(est.low), math.log(est.high)
    centre, half = abs((low + high) / 2.0), (high - low) / 2.0
    band = math.log1p(threshold)
    gap = abs(band - centre)  # how far the middle of the interval is from the threshold
    rounds = None if gap == 0.0 else math.ceil(est.n * (half / gap) ** 2)
    if rounds is not None and rounds > ROUNDS_CAP:
        rounds = None
    seconds = None if rounds is None or seconds_per_round is None else rounds * seconds_per_round
    return Resolution(resolves=math.exp(half) - 1.0, same_at=math.exp(max(high, -low)) - 1.0,
                      rounds=rounds, seconds=seconds)


def smallest_resolvable(sd: float, rounds: int, design: Design) -> float:
    """The half-width (relative) a paired run reaches after `rounds` rounds at per-round noise sd.

    A threshold below this cannot be settled in that many rounds: neither "same" (needs the
    whole interval inside +-threshold) nor a difference of about the threshold.
    """
    z = NormalDist().inv_cdf(0.5 + design.per_look(rounds) / 2.0)
    return math.expm1(z * sd * _HL_EFFICIENCY / math.sqrt(rounds))
