"""Equal-weight suite geomean with a bootstrap-over-rounds interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shootout.stats import geomean, geomean_by_category


def series(values: list[float] | np.ndarray, start: int = 0) -> dict[int, float]:
    return {start + i: float(v) for i, v in enumerate(values)}


def test_point_is_exp_of_mean_of_workload_means() -> None:
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(0.1, 0.02, 10), rng.normal(-0.05, 0.02, 10), rng.normal(0, 0.02, 10)
    est = geomean({"a": series(a), "b": series(b), "c": series(c)})
    assert est is not None
    expected = math.exp((np.mean(a) + np.mean(b) + np.mean(c)) / 3)
    assert est.ratio == pytest.approx(expected, rel=1e-12)
    assert est.method == "bootstrap" and est.n == 10 and est.confidence == 0.95


def test_a_workload_counts_once_whatever_its_round_count() -> None:
    # "a" stopped after 2 rounds, "b" ran 10: equal weight gives (0.2 + 0)/2, not a pooled mean.
    est = geomean({"a": series([0.2, 0.2]), "b": series([0.0] * 10)})
    assert est is not None
    assert est.ratio == pytest.approx(math.exp(0.1))
    assert est.n == 10


@pytest.mark.parametrize("extra", [1, 3, 7])
def test_neutral_workloads_dilute(extra: int) -> None:
    base = {"x": series([0.08, 0.12, 0.10, 0.09, 0.11])}
    neutral = {f"n{i}": series([0.0] * 5) for i in range(extra)}
    alone, diluted = geomean(base), geomean({**base, **neutral})
    assert alone is not None and diluted is not None
    assert alone.ratio == pytest.approx(math.exp(0.10))
    assert diluted.ratio == pytest.approx(math.exp(0.10 / (extra + 1)))


def test_interval_contains_point_and_is_deterministic() -> None:
    rng = np.random.default_rng(1)
    data = {name: series(rng.normal(mu, 0.05, 12)) for name, mu in [("a", 0.1), ("b", 0.0)]}
    first, again = geomean(data, seed=7), geomean(data, seed=7)
    other = geomean(data, seed=8)
    assert first is not None and other is not None
    assert first.low < first.ratio < first.high
    assert first == again
    assert (other.low, other.high) != (first.low, first.high)
    assert other.ratio == first.ratio


def test_result_does_not_depend_on_mapping_order() -> None:
    rng = np.random.default_rng(2)
    data = {name: series(rng.normal(0, 0.05, 8)) for name in ("b", "a", "c")}
    reordered = {name: data[name] for name in ("c", "a", "b")}
    assert geomean(data) == geomean(reordered)


def test_interval_width_matches_standard_error() -> None:
    # One workload, 40 rounds: the percentile interval is about mean +- 1.96 s/sqrt(n).
    d = np.random.default_rng(3).normal(0.05, 0.1, 40)
    est = geomean({"w": series(d)}, n_boot=4000)
    assert est is not None
    half = (math.log(est.high) - math.log(est.low)) / 2
    assert half == pytest.approx(1.96 * np.std(d) / math.sqrt(len(d)), rel=0.12)


def test_short_workload_keeps_its_own_spread() -> None:
    # "few" has 8 rounds, "many" 40 constant ones. The geomean's spread comes from "few" alone:
    # half of 1.96 s/sqrt(8). Padding "few" to 40 draws would shrink this by sqrt(5).
    few = np.random.default_rng(4).normal(0.0, 0.1, 8)
    est = geomean({"few": series(few), "many": series([0.0] * 40)}, n_boot=4000)
    assert est is not None
    half = (math.log(est.high) - math.log(est.low)) / 2
    assert half == pytest.approx(1.96 * np.std(few) / math.sqrt(8) / 2, rel=0.25)


def test_rounds_present_in_one_workload_only() -> None:
    # Disjoint round sets still work (every replicate falls back where needed).
    est = geomean({"a": series([0.1, 0.2, 0.15]), "b": series([0.0, 0.01, -0.01], start=100)})
    assert est is not None
    assert est.n == 6
    assert est.low <= est.ratio <= est.high


def test_none_when_too_little_data() -> None:
    assert geomean({}) is None
    assert geomean({"a": series([0.1, 0.2]), "b": series([0.3])}) is None


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        geomean({"a": series([0.1, float("inf")])})
    with pytest.raises(ValueError):
        geomean({"a": series([0.1, 0.2])}, n_boot=0)
    with pytest.raises(ValueError):
        geomean({"a": series([0.1, 0.2])}, confidence=0)


def test_by_category() -> None:
    rng = np.random.default_rng(5)
    data = {name: series(rng.normal(mu, 0.02, 10)) for name, mu in
            [("sha", 0.2), ("aes", 0.1), ("zstd", -0.1), ("lone", 0.0)]}
    cats = {"sha": "crypto", "aes": "crypto", "zstd": "compress", "lone": "misc", "unused": "x"}
    out = geomean_by_category(data, cats, seed=3)
    assert list(out) == ["compress", "crypto", "misc"]
    assert out["crypto"] == geomean({"sha": data["sha"], "aes": data["aes"]}, seed=3)
    assert out["compress"] is not None
    assert out["compress"].ratio == pytest.approx(math.exp(np.mean(list(data["zstd"].values()))))


def test_by_category_refuses_uncategorised_workloads() -> None:
    with pytest.raises(ValueError, match="orphan"):
        geomean_by_category({"orphan": series([0.1, 0.2])}, {})
