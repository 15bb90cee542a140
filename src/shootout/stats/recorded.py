"""Recorded amounts: what a trial counted that may be zero (tabs the OOM killer took, stall
time, swap traffic). They are not speed-ups; each configuration gets its own interval, and
one of them, a workload's *guard* (tabs lost), decides before any speed-up does.

- median_interval: the median over rounds with a distribution-free interval from order
  statistics (binomial): it holds its confidence for any distribution, counts with ties
  included (the closed interval is then conservative).
- guarded_verdict: a configuration that lost more than the baseline (summed over the rounds
  both measured) is WORSE on that workload, whatever its latency; one that lost less is
  BETTER; equal losses leave the speed-up's verdict alone. The guarded verdicts are not
  speed words: the latency of a setup that lost tabs is not comparable, so its speed-up is
  shown but not judged, and "faster"/"slower" never disagree with the number beside them. Losing a tab is
  worse than any latency a user would feel, and a killed tab frees memory that makes the
  survivors faster: without this rule a setup that kills tabs would look fast. The rule
  compares observed counts; it states no interval, so it makes no probabilistic claim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import bdtr

from shootout.stats.estimate import as_finite_array
from shootout.stats.verdict import Verdict


@dataclass(frozen=True)
class Interval:
    median: float
    low: float
    high: float
    confidence: float
    n: int


def median_interval(values: Sequence[float], confidence: float = 0.95) -> Interval | None:
    """Median with the order-statistic interval [x_(k), x_(n+1-k)], k the largest rank with
    P(Binomial(n, 1/2) <= k-1) <= alpha/2. None when too few values reach the confidence
    (fewer than 6 at 95%)."""
    x = np.sort(as_finite_array(values, "values"))
    n = len(x)
    alpha = 1.0 - confidence
    if n == 0:
        return None
    ranks = np.arange(1, n // 2 + 1)
    ok = ranks[bdtr(ranks - 1, n, 0.5) <= alpha / 2]
    if len(ok) == 0:
        return None
    k = int(ok[-1])
    return Interval(float(np.median(x)), float(x[k - 1]), float(x[n - k]), confidence, n)


@dataclass(frozen=True)
class Lost:
    """What a guard counted on both sides, summed over the rounds both measured."""

    lost: float  # the configuration
    baseline: float
    rounds: int

    def why(self) -> str:
        return f"lost {self.lost:g} (baseline {self.baseline:g}) over {self.rounds} rounds"


def guarded_verdict(speedup: Verdict, lost_baseline: Mapping[int, float], lost_config: Mapping[int, float]
                    ) -> tuple[Verdict, Lost | None]:
    """The verdict after the guard, and the counts that decided it (None when they did not).

    lost_*: round -> count (e.g. tabs killed); only rounds present on both sides count."""
    rounds = lost_baseline.keys() & lost_config.keys()
    lost = Lost(sum(lost_config[r] for r in rounds), sum(lost_baseline[r] for r in rounds), len(rounds))
    if lost.lost == lost.baseline:
        return speedup, None
    return (Verdict.WORSE if lost.lost > lost.baseline else Verdict.BETTER), lost
