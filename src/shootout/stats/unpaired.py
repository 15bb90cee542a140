"""Unpaired estimate: Hodges–Lehmann two-sample shift with the Mann–Whitney interval.

Used when the two sides were not measured in interleaved rounds (other machine, other
day), so the interval also contains any drift between the runs; callers label it so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from shootout.stats.estimate import Estimate, as_finite_array
from shootout.stats.ranknull import (
    exact_critical_rank,
    normal_critical_rank,
    rank_sum_counts,
)

# The exact DP costs about min(m, n) * m * n steps; up to 50x50 that is instant.
EXACT_MAX_PAIRS = 2500


def pairwise_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """All b_j - a_i, sorted ascending."""
    return np.sort(np.subtract.outer(b, a).ravel())


def unpaired_estimate(
    log_perf_a: Sequence[float],
    log_perf_b: Sequence[float],
    confidence: float = 0.95,
) -> Estimate | None:
    """Speed-up of B over A from unpaired log-performances (ratio > 1: B faster).

    Point estimate: median of all b_j - a_i. Interval: the k-th smallest and k-th largest
    of those differences, k the largest integer with P(U <= k-1) <= alpha/2 under the
    Mann–Whitney null (exact when m*n <= 2500, normal with continuity correction above).
    Ties are not corrected for; timings are continuous. Returns None when no interval
    reaches the requested confidence (e.g. 3 and 4 values: P(U = 0) = 1/35 > 0.025).
    """
    a = as_finite_array(log_perf_a, "log_perf_a")
    b = as_finite_array(log_perf_b, "log_perf_b")
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        return None
    diffs = pairwise_differences(a, b)
    if m * n <= EXACT_MAX_PAIRS:
        k = exact_critical_rank(rank_sum_counts(m, n), confidence)
        method = "mann-whitney-exact"
    else:
        k = normal_critical_rank(m * n / 2.0, m * n * (m + n + 1) / 12.0, confidence)
        method = "mann-whitney-normal"
    if k < 1:
        return None
    return Estimate(
        ratio=math.exp(float(np.median(diffs))),
        low=math.exp(float(diffs[k - 1])),
        high=math.exp(float(diffs[len(diffs) - k])),
        n=m + n,
        confidence=confidence,
        method=method,
    )
