"""Paired Hodges–Lehmann estimate and exact Wilcoxon interval."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from shootout.stats import MIN_PAIRED_ROUNDS, paired_estimate
from shootout.stats.ranknull import exact_critical_rank, signed_rank_counts


def brute_interval(d: list[float], confidence: float) -> tuple[float, float, float]:
    """HL estimate and interval computed the slow way: all sign patterns, all Walsh pairs."""
    n = len(d)
    w_plus = [
        sum(r for r, pos in zip(range(1, n + 1), signs) if pos)
        for signs in itertools.product((False, True), repeat=n)
    ]
    half_alpha = (1 - Fraction(str(confidence))) / 2
    k = 0
    while Fraction(sum(1 for w in w_plus if w <= k), 2**n) <= half_alpha:
        k += 1
    walsh = sorted((x + y) / 2 for x, y in itertools.combinations_with_replacement(d, 2))
    mid = len(walsh) // 2
    median = walsh[mid] if len(walsh) % 2 else (walsh[mid - 1] + walsh[mid]) / 2
    return median, walsh[k - 1], walsh[-k]


@pytest.mark.parametrize("n", range(6, 13))
def test_interval_matches_brute_force(n: int) -> None:
    d = list(np.random.default_rng(n).normal(0.05, 0.02, n))
    est = paired_estimate(d)
    assert est is not None
    median, low, high = brute_interval(d, 0.95)
    assert math.log(est.ratio) == pytest.approx(median, abs=1e-15)
    assert math.log(est.low) == pytest.approx(low, abs=1e-15)
    assert math.log(est.high) == pytest.approx(high, abs=1e-15)
    assert est.n == n and est.method == "wilcoxon-exact" and est.confidence == 0.95


@pytest.mark.parametrize("n", [6, 9, 12, 20])
def test_interval_is_inverted_scipy_wilcoxon_test(n: int) -> None:
    # theta just outside a bound is rejected by scipy's exact one-sided test at alpha/2,
    # theta just inside is not: the interval is exactly the set of unrejected shifts.
    d = np.random.default_rng(100 + n).normal(0.0, 0.1, n)
    est = paired_estimate(d)
    assert est is not None
    walsh = np.sort([(x + y) / 2 for x, y in itertools.combinations_with_replacement(d, 2)])
    eps = float(np.min(np.diff(walsh))) / 3
    low, high = math.log(est.low), math.log(est.high)

    def p_greater(theta: float) -> float:
        return stats.wilcoxon(d - theta, alternative="greater", method="exact").pvalue

    def p_less(theta: float) -> float:
        return stats.wilcoxon(d - theta, alternative="less", method="exact").pvalue

    assert p_greater(low - eps) <= 0.025 < p_greater(low + eps)
    assert p_less(high + eps) <= 0.025 < p_less(high - eps)


def test_n6_interval_is_range_of_data() -> None:
    # n = 6: P(W+ <= 0) = 1/64 < 0.025 but P(W+ <= 1) = 2/64 > 0.025, so k = 1 and the
    # bounds are the smallest and largest Walsh averages, which are min(d) and max(d).
    d = [0.03, -0.01, 0.08, 0.02, 0.05, 0.04]
    est = paired_estimate(d)
    assert est is not None
    assert est.low == pytest.approx(math.exp(-0.01))
    assert est.high == pytest.approx(math.exp(0.08))


def test_too_few_rounds_gives_none() -> None:
    assert MIN_PAIRED_ROUNDS == 6
    assert paired_estimate([0.01, 0.02, 0.03, 0.04, 0.05]) is None
    assert paired_estimate([]) is None
    assert paired_estimate([0.01] * 6) is not None


def test_unreachable_confidence_gives_none() -> None:
    # 99% needs P(W+ = 0) = 1/2**n <= 0.005, i.e. n >= 8.
    d = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07]
    assert paired_estimate(d, confidence=0.99) is None
    assert paired_estimate(d + [0.08], confidence=0.99) is not None


def test_hodges_lehmann_resists_an_outlier() -> None:
    # Walsh averages of 1..5 (15 of them) sort to 1,1.5,2,2,2.5,2.5,3,3,3,3.5,3.5,...; the six
    # involving 100 are all larger, so the 11th of 21 (the median) is 3.5. The mean is 19.2.
    d = [x / 100 for x in (1, 2, 3, 4, 5, 100)]
    est = paired_estimate(d)
    assert est is not None
    assert est.ratio == pytest.approx(math.exp(0.035))


def test_hodges_lehmann_hand_case_mostly_zero() -> None:
    # 15 Walsh averages are 0, five are 0.6, one is 1.2: the median (11th) is 0.
    est = paired_estimate([0, 0, 0, 0, 0, 1.2])
    assert est is not None
    assert est.ratio == 1.0
    assert est.low == 1.0
    assert est.high == pytest.approx(math.exp(1.2))


def test_symmetric_data_gives_its_centre_exactly() -> None:
    # Dyadic values keep the arithmetic exact: symmetric about 0.25 -> HL is exactly 0.25.
    centre = 0.25
    offsets = [0.0625, 0.125, 0.5, 0.03125]
    d = [centre + o for o in offsets] + [centre - o for o in offsets]
    est = paired_estimate(d)
    assert est is not None
    assert est.ratio == math.exp(centre)
    assert math.log(est.low) + math.log(est.high) == pytest.approx(2 * centre, abs=1e-15)


def test_sign_flip_mirrors_the_estimate() -> None:
    d = list(np.random.default_rng(5).normal(0.02, 0.05, 15))
    est, neg = paired_estimate(d), paired_estimate([-x for x in d])
    assert est is not None and neg is not None
    assert neg.ratio == pytest.approx(1 / est.ratio)
    assert neg.low == pytest.approx(1 / est.high)
    assert neg.high == pytest.approx(1 / est.low)


def test_normal_approximation_above_50_rounds_roughly_matches_exact() -> None:
    n = 60
    d = np.random.default_rng(60).normal(0.03, 0.04, n)
    est = paired_estimate(d)
    assert est is not None and est.method == "wilcoxon-normal"
    k = exact_critical_rank(signed_rank_counts(n), 0.95)
    walsh = np.sort([(x + y) / 2 for x, y in itertools.combinations_with_replacement(d, 2)])
    assert math.log(est.low) == pytest.approx(walsh[k - 1], abs=0.002)
    assert math.log(est.high) == pytest.approx(walsh[-k], abs=0.002)
    # and it agrees with the textbook t-interval on normal data to within ~15% of width
    t_low, t_high = stats.t.interval(0.95, n - 1, loc=np.mean(d), scale=stats.sem(d))
    width = math.log(est.high) - math.log(est.low)
    assert width == pytest.approx(t_high - t_low, rel=0.15)


def test_method_switches_after_50_rounds() -> None:
    rng = np.random.default_rng(50)
    exact = paired_estimate(rng.normal(0, 0.01, 50))
    normal = paired_estimate(rng.normal(0, 0.01, 51))
    assert exact is not None and exact.method == "wilcoxon-exact"
    assert normal is not None and normal.method == "wilcoxon-normal"


def test_higher_confidence_gives_wider_interval() -> None:
    d = np.random.default_rng(7).normal(0.0, 0.05, 20)
    narrow, wide = paired_estimate(d, 0.8), paired_estimate(d, 0.99)
    assert narrow is not None and wide is not None
    assert wide.low < narrow.low and wide.high > narrow.high


def test_bad_input_is_rejected() -> None:
    with pytest.raises(ValueError):
        paired_estimate([0.1, 0.2, float("nan"), 0.3, 0.1, 0.2])
    with pytest.raises(ValueError):
        paired_estimate([0.1] * 6, confidence=1.0)
