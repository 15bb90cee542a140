"""Paired estimate: Hodges–Lehmann shift of per-round log-ratios with the Wilcoxon interval."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from shootout.stats.estimate import MIN_PAIRED_ROUNDS, Estimate, as_finite_array
from shootout.stats.ranknull import (
    exact_critical_rank,
    normal_critical_rank,
    signed_rank_counts,
)

# Above this many rounds the signed-rank null is close enough to normal (and the DESIGN
# handbook says so); at or below it we use the exact distribution.
EXACT_MAX_ROUNDS = 50


def walsh_averages(values: np.ndarray) -> np.ndarray:
    """All (d_i + d_j) / 2 with i <= j, sorted ascending."""
    i, j = np.triu_indices(len(values))
    return np.sort((values[i] + values[j]) / 2.0)


def paired_estimate(log_ratios: Sequence[float], confidence: float = 0.95) -> Estimate | None:
    """Speed-up estimate from per-round log-ratios d_r = ln(perf_B / perf_A).

    Point estimate: median of the Walsh averages. Interval: the k-th smallest and k-th
    largest Walsh averages, k the largest integer with P(W+ <= k-1) <= alpha/2 (exact
    null for n <= 50, normal with continuity correction above). Coverage is therefore
    1 - 2 P(W+ <= k-1) >= confidence. For n = 6 at 95%, P(W+ <= 0) = 1/64 <= 0.025 but
    P(W+ <= 1) = 2/64 > 0.025, so k = 1 and the interval is [min, max] of the Walsh
    averages, i.e. [min d, max d], with actual coverage 62/64.

    Returns None with fewer than MIN_PAIRED_ROUNDS rounds, or when no interval reaches the
    requested confidence (k = 0, e.g. 99% with 6 rounds).
    """
    d = as_finite_array(log_ratios, "log_ratios")
    n = len(d)
    if n < MIN_PAIRED_ROUNDS:
        return None
    walsh = walsh_averages(d)
    if n <= EXACT_MAX_ROUNDS:
        k = exact_critical_rank(signed_rank_counts(n), confidence)
        method = "wilcoxon-exact"
    else:
        mean = n * (n + 1) / 4.0
        variance = n * (n + 1) * (2 * n + 1) / 24.0
        k = normal_critical_rank(mean, variance, confidence)
        method = "wilcoxon-normal"
    if k < 1:
        return None
    return Estimate(
        ratio=math.exp(float(np.median(walsh))),
        low=math.exp(float(walsh[k - 1])),
        high=math.exp(float(walsh[len(walsh) - k])),
        n=n,
        confidence=confidence,
        method=method,
    )
