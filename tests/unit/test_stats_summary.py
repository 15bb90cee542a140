"""Equal-weight suite geomean with its jackknife t-interval (coverage: test_stats_simulation.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shootout.stats import (
    geomean,
    geomean_by_category,
    too_few_rounds,
    unpaired_geomean,
)


def series(values: list[float] | np.ndarray, start: int = 0) -> dict[int, float]:
    return {start + i: float(v) for i, v in enumerate(values)}


def half_width(est) -> float:
    return (math.log(est.high) - math.log(est.low)) / 2


def test_point_is_exp_of_mean_of_workload_means() -> None:
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(0.1, 0.02, 10), rng.normal(-0.05, 0.02, 10), rng.normal(0, 0.02, 10)
    est = geomean({"a": series(a), "b": series(b), "c": series(c)})
    assert est is not None
    expected = math.exp((np.mean(a) + np.mean(b) + np.mean(c)) / 3)
    assert est.ratio == pytest.approx(expected, rel=1e-12)
    assert est.method == "t (jackknife over rounds)" and est.n == 10 and est.confidence == 0.95


def test_complete_rounds_give_the_t_interval_on_per_round_suite_means() -> None:
    rng = np.random.default_rng(1)
    d = rng.normal(0.02, 0.03, (9, 4)) + rng.normal(0, 0.02, (9, 1))  # a shared round effect
    est = geomean({f"w{w}": series(d[:, w]) for w in range(4)})
    suite = d.mean(axis=1)
    half = stats.t.ppf(0.975, 8) * suite.std(ddof=1) / 3
    assert math.log(est.ratio) == pytest.approx(suite.mean(), abs=1e-12)
    assert half_width(est) == pytest.approx(half, rel=1e-9)


def test_a_workload_counts_once_whatever_its_round_count() -> None:
    # "a" stopped after 6 rounds, "b" ran 10: equal weight gives (0.2 + 0)/2, not a pooled mean.
    est = geomean({"a": series([0.2] * 6), "b": series([0.0] * 10)})
    assert est is not None
    assert est.ratio == pytest.approx(math.exp(0.1))
    assert est.n == 10


@pytest.mark.parametrize("extra", [1, 3, 7])
def test_neutral_workloads_dilute(extra: int) -> None:
    base = {"x": series([0.08, 0.12, 0.10, 0.09, 0.11, 0.10])}
    neutral = {f"n{i}": series([0.0] * 6) for i in range(extra)}
    alone, diluted = geomean(base), geomean({**base, **neutral})
    assert alone is not None and diluted is not None
    assert alone.ratio == pytest.approx(math.exp(0.10))
    assert diluted.ratio == pytest.approx(math.exp(0.10 / (extra + 1)))


def test_result_does_not_depend_on_mapping_order() -> None:
    rng = np.random.default_rng(2)
    data = {name: series(rng.normal(0, 0.05, 8)) for name in ("b", "a", "c")}
    reordered = {name: data[name] for name in ("c", "a", "b")}
    first, again = geomean(data), geomean(reordered)
    assert first.ratio == pytest.approx(again.ratio, rel=1e-12)
    assert first.low == pytest.approx(again.low, rel=1e-12) and first.high == pytest.approx(again.high, rel=1e-12)


def test_short_workload_keeps_its_own_spread() -> None:
    # "few" has 8 rounds, "many" 40 constant ones: the spread is that of few's mean, halved
    # (two workloads), with few's 7 degrees of freedom, widened by the jackknife's (R-1)n/(R(n-1)).
    few = np.random.default_rng(4).normal(0.0, 0.1, 8)
    est = geomean({"few": series(few), "many": series([0.0] * 40)})
    plain = stats.t.ppf(0.975, 7) * few.std(ddof=1) / math.sqrt(8) / 2
    assert half_width(est) == pytest.approx(plain * math.sqrt(39 * 8 / (40 * 7)), rel=1e-9)


def test_rounds_present_in_one_workload_only() -> None:
    est = geomean({"a": series([0.1, 0.2, 0.15, 0.1, 0.2, 0.15]), "b": series([0.0, 0.01, -0.01] * 2, start=100)})
    assert est is not None and est.n == 12
    assert est.low <= est.ratio <= est.high


def test_too_few_rounds_are_the_callers_to_leave_out() -> None:
    data = {"a": series([0.1] * 6), "b": series([0.3, 0.2])}
    assert too_few_rounds(data) == {"b": 2}
    with pytest.raises(ValueError, match="b"):
        geomean(data)
    assert geomean({}) is None


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        geomean({"a": series([0.1, float("inf"), 0, 0, 0, 0])})
    with pytest.raises(ValueError):
        geomean({"a": series([0.1, 0.2] * 3)}, confidence=0)


def test_by_category() -> None:
    rng = np.random.default_rng(5)
    data = {name: series(rng.normal(mu, 0.02, 10)) for name, mu in
            [("sha", 0.2), ("aes", 0.1), ("zstd", -0.1), ("lone", 0.0)]}
    cats = {"sha": "crypto", "aes": "crypto", "zstd": "compress", "lone": "misc", "unused": "x"}
    out = geomean_by_category(data, cats)
    assert list(out) == ["compress", "crypto", "misc"]
    assert out["crypto"] == geomean({"sha": data["sha"], "aes": data["aes"]})
    assert out["compress"] is not None
    assert out["compress"].ratio == pytest.approx(math.exp(np.mean(list(data["zstd"].values()))))


def test_by_category_refuses_uncategorised_workloads() -> None:
    with pytest.raises(ValueError, match="orphan"):
        geomean_by_category({"orphan": series([0.1, 0.2])}, {})


def test_unpaired_geomean_is_welch_for_one_workload() -> None:
    rng = np.random.default_rng(6)
    a, b = rng.normal(0.0, 0.02, 8), rng.normal(0.05, 0.04, 11)
    est = unpaired_geomean({"w": (a, b)})
    welch = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    assert math.log(est.low) == pytest.approx(welch.low, rel=1e-9)
    assert math.log(est.high) == pytest.approx(welch.high, rel=1e-9)
    assert unpaired_geomean({"w": (a[:1], b)}) is None
