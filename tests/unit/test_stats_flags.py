"""Quality flags: each triggered and not triggered."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from shootout.stats import cv, has_trend, outlier_fraction, trial_flags
from shootout.stats.flags import kendall_p


def test_cv() -> None:
    assert cv([1.0, 2.0, 3.0]) == pytest.approx(0.5)  # std (ddof=1) = 1, mean = 2
    assert math.isnan(cv([1.0]))
    assert math.isnan(cv([1.0, -1.0]))


def test_cv_flag() -> None:
    assert "cv>10%" in trial_flags([1.0, 1.3, 0.8, 1.2], [], None, [])
    assert "cv>10%" not in trial_flags([1.0, 1.01, 0.99, 1.0], [], None, [])
    assert trial_flags([5.0], [], None, []) == []  # undefined CV raises no flag


def base_values() -> list[float]:
    # 20 values 1.00..1.19: median 1.095, MAD 0.05
    return [1.0 + i / 100 for i in range(20)]


def test_outlier_fraction() -> None:
    values = base_values()
    assert outlier_fraction(values) == 0.0
    # M = 0.6745 * (x - 1.095) / 0.05 > 10  <=>  x > 1.8363
    assert outlier_fraction(values[:-1] + [1.9]) == pytest.approx(1 / 20)
    assert outlier_fraction(values[:-1] + [1.8]) == 0.0
    assert outlier_fraction([2.0] * 10 + [50.0]) == 0.0  # MAD == 0: no judgement
    assert outlier_fraction([]) == 0.0


def test_outlier_flag_needs_more_than_five_percent() -> None:
    values = base_values()
    one = values[:-1] + [100.0]  # 1 of 20 = 5%: not more than 5%
    two = values[:-2] + [100.0, 0.001]  # 2 of 20 = 10%
    assert "outliers" not in trial_flags(one, [], None, [])
    assert "outliers" in trial_flags(two, [], None, [])


def test_trend() -> None:
    rounds = list(range(10))
    rising = [0.01 * r for r in rounds]
    assert has_trend(rounds, rising)
    assert has_trend(rounds, rising[::-1])
    assert not has_trend(rounds[:7], rising[:7])  # too few rounds to call it
    assert not has_trend(rounds, [0.05] * 10)  # constant: tau undefined, no flag
    noise = list(np.random.default_rng(0).normal(0, 0.01, 10))
    assert not has_trend(rounds, noise)
    with pytest.raises(ValueError):
        has_trend(rounds, rising[:-1])


def test_kendall_p_is_scipys_asymptotic_one_also_with_ties() -> None:
    rng = np.random.default_rng(3)
    for case in range(300):
        n = int(rng.integers(8, 60))
        x = np.arange(n, dtype=float) if case % 2 else rng.integers(0, 6, n).astype(float)
        y = rng.normal(size=n) + 0.03 * x * (case % 3)
        if case % 5 == 0:
            y = np.round(y)  # ties on both sides
        assert kendall_p(x, y) == pytest.approx(kendalltau(x, y, method="asymptotic").pvalue, abs=1e-12)
    assert math.isnan(kendall_p(np.arange(9.0), np.ones(9)))


def test_trend_flag() -> None:
    rounds = list(range(12))
    assert "trend" in trial_flags([1.0] * 12, rounds, [0.002 * r for r in rounds], [])
    assert "trend" not in trial_flags([1.0] * 12, rounds, [0.0, 0.01] * 6, [])
    assert "trend" not in trial_flags([1.0] * 12, rounds, None, [])


def test_short_trial_flag() -> None:
    assert "short-trial" in trial_flags([1.0], [], None, [0.01, 0.04, 0.2])
    assert "short-trial" not in trial_flags([1.0], [], None, [0.05, 0.05, 0.01])
    assert "short-trial" not in trial_flags([1.0], [], None, [])


def test_flags_come_in_a_fixed_order() -> None:
    values = [1.0 + i / 100 for i in range(18)] + [100.0, 0.001]
    rounds = list(range(20))
    flags = trial_flags(values, rounds, [0.01 * r for r in rounds], [0.001] * 20)
    assert flags == ["cv>10%", "outliers", "trend", "short-trial"]
