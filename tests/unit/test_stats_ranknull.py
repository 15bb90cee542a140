"""Exact null distributions of W+ and U against brute-force enumeration and scipy."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from shootout.stats.ranknull import (
    alpha_of,
    exact_critical_rank,
    normal_critical_rank,
    rank_sum_counts,
    signed_rank_counts,
)


def brute_signed_rank(n: int) -> list[int]:
    """Counts of W+ over all 2**n sign patterns of ranks 1..n."""
    tally = Counter(
        sum(rank for rank, positive in zip(range(1, n + 1), signs) if positive)
        for signs in itertools.product((False, True), repeat=n)
    )
    return [tally[w] for w in range(n * (n + 1) // 2 + 1)]


def brute_rank_sum(m: int, n: int) -> list[int]:
    """Counts of U = #{(a, b): b > a} over all placements of m A's among m+n sorted slots."""
    tally: Counter[int] = Counter()
    for a_slots in itertools.combinations(range(m + n), m):
        b_slots = [s for s in range(m + n) if s not in a_slots]
        tally[sum(1 for a in a_slots for b in b_slots if b > a)] += 1
    return [tally[u] for u in range(m * n + 1)]


@pytest.mark.parametrize("n", range(0, 13))
def test_signed_rank_counts_match_enumeration(n: int) -> None:
    assert signed_rank_counts(n) == brute_signed_rank(n)


def test_signed_rank_counts_small_hand_case() -> None:
    # n=3: subsets of {1,2,3} by sum: 0:{}, 1:{1}, 2:{2}, 3:{3},{1,2}, 4:{1,3}, 5:{2,3}, 6:{1,2,3}
    assert signed_rank_counts(3) == [1, 1, 1, 2, 1, 1, 1]


@pytest.mark.parametrize("m,n", [(m, n) for m in range(0, 6) for n in range(0, 6)])
def test_rank_sum_counts_match_enumeration(m: int, n: int) -> None:
    counts = rank_sum_counts(m, n)
    assert counts == brute_rank_sum(m, n)
    assert sum(counts) == math.comb(m + n, m)


def test_signed_rank_cdf_matches_scipy_wilcoxon_at_n20() -> None:
    # Build data whose W+ is each chosen w (positive ranks picked greedily from the top),
    # then compare scipy's exact one-sided p-value P(W+ <= w) with our counts.
    n = 20
    counts = signed_rank_counts(n)
    cdf = np.cumsum(counts) / 2.0**n
    for w in (0, 5, 37, 60, 105, 150, 210):
        remaining, positive = w, set()
        for rank in range(n, 0, -1):
            if rank <= remaining:
                positive.add(rank)
                remaining -= rank
        assert remaining == 0
        x = [rank if rank in positive else -rank for rank in range(1, n + 1)]
        res = stats.wilcoxon(x, alternative="less", method="exact")
        assert res.pvalue == pytest.approx(cdf[w], rel=1e-12)


@pytest.mark.parametrize("m,n", [(3, 9), (7, 7), (10, 4)])
def test_rank_sum_cdf_matches_scipy_mannwhitneyu(m: int, n: int) -> None:
    counts = rank_sum_counts(m, n)
    cdf = np.cumsum(counts) / math.comb(m + n, m)
    rng = np.random.default_rng(1)
    for _ in range(10):
        pooled = rng.permutation(m + n).astype(float)
        a, b = pooled[:m], pooled[m:]
        u = int(sum(1 for x in a for y in b if y > x))
        res = stats.mannwhitneyu(b, a, alternative="less", method="exact")
        assert res.pvalue == pytest.approx(cdf[u], rel=1e-12)


def test_critical_rank_n6_is_one() -> None:
    # P(W+ <= 0) = 1/64 <= 0.025 < P(W+ <= 1) = 2/64
    assert exact_critical_rank(signed_rank_counts(6), 0.95) == 1
    assert exact_critical_rank(signed_rank_counts(5), 0.95) == 0  # 1/32 > 0.025


def test_critical_rank_uses_exact_decimal_alpha() -> None:
    # 3 vs 3: P(U <= 0) = 1/20 is exactly alpha/2 at 90%; "<=" must accept it even though
    # the float 1 - 0.9 is slightly below 0.1.
    assert alpha_of(0.9) * 2 == pytest.approx(0.2)
    assert exact_critical_rank(rank_sum_counts(3, 3), 0.9) == 1
    assert exact_critical_rank(rank_sum_counts(3, 3), 0.95) == 0


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 1.5])
def test_confidence_out_of_range_is_rejected(confidence: float) -> None:
    with pytest.raises(ValueError):
        alpha_of(confidence)


@pytest.mark.parametrize("n", [30, 50, 60])
def test_normal_critical_rank_close_to_exact(n: int) -> None:
    exact = exact_critical_rank(signed_rank_counts(n), 0.95)
    approx = normal_critical_rank(n * (n + 1) / 4, n * (n + 1) * (2 * n + 1) / 24, 0.95)
    assert abs(exact - approx) <= 1
    assert approx > 0


def test_normal_critical_rank_never_negative() -> None:
    assert normal_critical_rank(1.0, 100.0, 0.95) == 0
