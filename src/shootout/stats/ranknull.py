"""Null distributions of rank statistics and the order-statistic index they give.

Both Hodges–Lehmann intervals (paired and two-sample) have the same shape: sort the
candidate shifts (Walsh averages or pairwise differences) and take the k-th smallest and the
k-th largest, where k is the largest integer with P(S <= k-1) <= alpha/2 under the null
distribution of the rank statistic S (signed-rank W+ or Mann–Whitney U). Both
distributions are symmetric, so the same k serves both ends. k == 0 means no interval at
the requested confidence exists.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from itertools import accumulate
from statistics import NormalDist


def alpha_of(confidence: float) -> Fraction:
    """1 - confidence as an exact fraction of the decimal the caller wrote (0.95 -> 1/20).

    Exact arithmetic matters: for a 3x3 two-sample case P(U <= 0) is exactly 1/20, and
    a float 1 - 0.9 is a hair below 0.1, which would wrongly reject that interval.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return 1 - Fraction(str(confidence))


def signed_rank_counts(n: int) -> list[int]:
    """Number of sign patterns of ranks 1..n giving each value w of W+ (w = 0..n(n+1)/2).

    Dynamic programming over ranks: rank i either is positive (adds i) or not.
    The counts sum to 2**n.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    counts = [1] + [0] * (n * (n + 1) // 2)
    top = 0  # highest reachable w so far; keeps each pass short
    for rank in range(1, n + 1):
        top += rank
        # Descending so that each pattern uses rank `rank` at most once.
        for w in range(top, rank - 1, -1):
            counts[w] += counts[w - rank]
    return counts


def rank_sum_counts(m: int, n: int) -> list[int]:
    """Number of orderings of m A-values and n B-values giving each u of U (u = 0..m*n).

    U counts the (a, b) pairs with b > a. The generating function is the Gaussian
    binomial prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i); we multiply and divide it out
    as power series truncated at degree m*n, which is exact because every partial
    product is itself a polynomial of degree <= m*n. The counts sum to C(m+n, m).
    """
    if m < 0 or n < 0:
        raise ValueError(f"sizes must be >= 0, got {m}, {n}")
    m, n = min(m, n), max(m, n)  # U's distribution is symmetric in the sizes; loop less
    size = m * n + 1
    coef = [1] + [0] * (size - 1)
    for i in range(1, m + 1):
        step = n + i
        for u in range(size - 1, step - 1, -1):  # times (1 - q^step)
            coef[u] -= coef[u - step]
        for u in range(i, size):  # divided by (1 - q^i): running sum with stride i
            coef[u] += coef[u - i]
    return coef


def exact_critical_rank(counts: Sequence[int], confidence: float) -> int:
    """Largest k with P(S <= k-1) <= alpha/2 for the exact distribution `counts` (0 if none)."""
    half_alpha = alpha_of(confidence) / 2
    total = sum(counts)
    limit = half_alpha * total  # compare integer counts with an exact rational
    k = 0
    for cumulative in accumulate(counts):
        if cumulative > limit:
            break
        k += 1
    return k


def normal_critical_rank(mean: float, variance: float, confidence: float) -> int:
    """k from the normal approximation with continuity correction (0 if none).

    P(S <= k-1) ~ Phi((k - 1 + 0.5 - mean) / sd) <= alpha/2  <=>  k <= mean + 0.5 - z*sd.
    """
    z = NormalDist().inv_cdf(1.0 - float(alpha_of(confidence)) / 2.0)
    k = math.floor(mean + 0.5 - z * math.sqrt(variance))
    return max(k, 0)
