"""Unpaired Hodges–Lehmann shift and Mann–Whitney interval."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from shootout.stats import unpaired_estimate


def brute_interval(a: list[float], b: list[float], confidence: float) -> tuple[float, float]:
    """Bounds from the Mann–Whitney null built by enumerating every placement of A among A+B."""
    m, n = len(a), len(b)
    us = []
    for a_slots in itertools.combinations(range(m + n), m):
        b_slots = [s for s in range(m + n) if s not in a_slots]
        us.append(sum(1 for x in a_slots for y in b_slots if y > x))
    half_alpha = (1 - Fraction(str(confidence))) / 2
    k = 0
    while Fraction(sum(1 for u in us if u <= k), len(us)) <= half_alpha:
        k += 1
    diffs = sorted(y - x for x in a for y in b)
    return diffs[k - 1], diffs[-k]


@pytest.mark.parametrize("m,n", [(3, 5), (4, 4), (5, 5), (4, 7), (6, 6), (2, 9)])
def test_interval_matches_brute_force(m: int, n: int) -> None:
    rng = np.random.default_rng(10 * m + n)
    a, b = list(rng.normal(0.0, 0.05, m)), list(rng.normal(0.1, 0.05, n))
    est = unpaired_estimate(a, b)
    assert est is not None
    low, high = brute_interval(a, b, 0.95)
    assert math.log(est.low) == pytest.approx(low, abs=1e-15)
    assert math.log(est.high) == pytest.approx(high, abs=1e-15)
    assert math.log(est.ratio) == pytest.approx(np.median([y - x for x in a for y in b]))
    assert est.n == m + n and est.method == "mann-whitney-exact"


def test_known_simple_case() -> None:
    # a = 1..4, b = 5..8 (x0.01): differences 1..7 with multiplicities 1,2,3,4,3,2,1, median 4.
    # C(8,4) = 70: P(U <= 0) = 1/70 <= 0.025 < P(U <= 1) = 2/70, so k = 1: [min, max] = [1, 7].
    a = [0.01, 0.02, 0.03, 0.04]
    b = [0.05, 0.06, 0.07, 0.08]
    est = unpaired_estimate(a, b)
    assert est is not None
    assert est.ratio == pytest.approx(math.exp(0.04))
    assert est.low == pytest.approx(math.exp(0.01))
    assert est.high == pytest.approx(math.exp(0.07))
    assert est.ratio > 1  # B has the higher performance: B faster


@pytest.mark.parametrize("m,n", [(6, 8), (10, 12)])
def test_interval_is_inverted_scipy_mannwhitneyu(m: int, n: int) -> None:
    rng = np.random.default_rng(m * n)
    a, b = rng.normal(0, 1, m), rng.normal(0.5, 1, n)
    est = unpaired_estimate(a, b)
    assert est is not None
    diffs = np.sort(np.subtract.outer(b, a).ravel())
    eps = float(np.min(np.diff(diffs))) / 3
    low, high = math.log(est.low), math.log(est.high)

    def p(theta: float, alternative: str) -> float:
        return stats.mannwhitneyu(b - theta, a, alternative=alternative, method="exact").pvalue

    assert p(low - eps, "greater") <= 0.025 < p(low + eps, "greater")
    assert p(high + eps, "less") <= 0.025 < p(high - eps, "less")


def test_too_few_values_gives_none() -> None:
    # 3 and 4 values: P(U = 0) = 1/35 > 0.025; 3 and 5: 1/56 <= 0.025.
    assert unpaired_estimate([0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4]) is None
    assert unpaired_estimate([0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4, 0.5]) is not None
    assert unpaired_estimate([], [0.1] * 10) is None


def test_swapping_sides_inverts_the_ratio() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 0.1, 9), rng.normal(0.05, 0.1, 11)
    ab, ba = unpaired_estimate(a, b), unpaired_estimate(b, a)
    assert ab is not None and ba is not None
    assert ba.ratio == pytest.approx(1 / ab.ratio)
    assert ba.low == pytest.approx(1 / ab.high)
    assert ba.high == pytest.approx(1 / ab.low)


def test_normal_approximation_for_large_samples() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(0, 0.1, 60), rng.normal(0.1, 0.1, 60)
    est = unpaired_estimate(a, b)
    assert est is not None and est.method == "mann-whitney-normal"
    assert est.low < est.ratio < est.high
    # close to the Welch interval for normal data
    t = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    width = math.log(est.high) - math.log(est.low)
    assert width == pytest.approx(t.high - t.low, rel=0.15)
    assert math.log(est.ratio) == pytest.approx(np.mean(b) - np.mean(a), abs=0.03)
