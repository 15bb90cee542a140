"""Paired estimate: Hodges–Lehmann shift of per-round log-ratios with the Wilcoxon interval."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from shootout.stats.estimate import MIN_PAIRED_ROUNDS, Estimate, as_finite_array
from shootout.stats.ranknull import (
    exact_critical_rank,
    normal_critical_rank,
    signed_rank_counts,
)

# Above this many rounds the signed-rank null is close enough to normal; at or below it we
# use the exact distribution.
EXACT_MAX_ROUNDS = 50


def walsh_averages(values: np.ndarray) -> np.ndarray:
    """All (d_i + d_j) / 2 with i <= j, sorted ascending."""
    i, j = np.triu_indices(len(values))
    return np.sort((values[i] + values[j]) / 2.0)


@lru_cache(maxsize=4096)
def critical_rank(n: int, confidence: float) -> int:
    """k of the Wilcoxon interval for n rounds: the largest k with P(W+ <= k-1) <= alpha/2.

    Exact null for n <= 50, normal with continuity correction above; 0 when no interval
    reaches `confidence`. Cached: the sequential rule asks for the same n many times.
    """
    if n <= EXACT_MAX_ROUNDS:
        return exact_critical_rank(signed_rank_counts(n), confidence)
    mean = n * (n + 1) / 4.0
    variance = n * (n + 1) * (2 * n + 1) / 24.0
    return normal_critical_rank(mean, variance, confidence)


def method_name(n: int) -> str:
    return "wilcoxon-exact" if n <= EXACT_MAX_ROUNDS else "wilcoxon-normal"


def hodges_lehmann(d: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise over d (shape (..., n)): median, k-th smallest and k-th largest Walsh average.

    The simulation tests call this on thousands of rows at once, the runner on one.
    """
    i, j = np.triu_indices(d.shape[-1])
    sums = np.take(d, i, axis=-1)
    sums += np.take(d, j, axis=-1)
    sums.sort(axis=-1)  # numpy's sort beats partition here; halving after sorting keeps the order
    size = sums.shape[-1]
    centre = (sums[..., (size - 1) // 2] + sums[..., size // 2]) / 4.0
    return centre, sums[..., k - 1] / 2.0, sums[..., size - k] / 2.0


def paired_estimate(log_ratios: Sequence[float], confidence: float = 0.95) -> Estimate | None:
    """Speed-up estimate from per-round log-ratios d_r = ln(perf_B / perf_A), one look.

    Point estimate: median of the Walsh averages. Interval: the k-th smallest and k-th
    largest Walsh averages, k the largest integer with P(W+ <= k-1) <= alpha/2 (exact
    null for n <= 50, normal with continuity correction above). Coverage is therefore
    1 - 2 P(W+ <= k-1) >= confidence. For n = 6 at 95%, P(W+ <= 0) = 1/64 <= 0.025 but
    P(W+ <= 1) = 2/64 > 0.025, so k = 1 and the interval is [min, max] of the Walsh
    averages, i.e. [min d, max d], with actual coverage 62/64.

    This is the interval of a single look at fixed n; a run that looks after every round
    uses stats.design.Design, which calls this with its per-look level.

    Returns None with fewer than MIN_PAIRED_ROUNDS rounds, or when no interval reaches the
    requested confidence (k = 0, e.g. 99% with 6 rounds).
    """
    d = as_finite_array(log_ratios, "log_ratios")
    n = len(d)
    if n < MIN_PAIRED_ROUNDS:
        return None
    k = critical_rank(n, confidence)
    if k < 1:
        return None
    centre, low, high = hodges_lehmann(d, k)
    return Estimate(
        ratio=math.exp(float(centre)),
        low=math.exp(float(low)),
        high=math.exp(float(high)),
        n=n,
        confidence=confidence,
        method=method_name(n),
    )
