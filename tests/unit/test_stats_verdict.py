"""Verdict boundaries and the stopping predicate."""

from __future__ import annotations

import math

import pytest

from shootout.stats import Estimate, Verdict, decided, verdict

DELTA = 0.01
UPPER = 1.0 + DELTA
LOWER = 1.0 / (1.0 + DELTA)


def est(low: float, high: float) -> Estimate:
    return Estimate(math.sqrt(low * high), low, high, 10, 0.95, "wilcoxon-exact")


def above(x: float) -> float:
    return math.nextafter(x, math.inf)


def below(x: float) -> float:
    return math.nextafter(x, -math.inf)


@pytest.mark.parametrize(
    "low,high,expected",
    [
        (1.05, 1.10, Verdict.FASTER),
        (above(UPPER), 1.10, Verdict.FASTER),  # just outside the band
        (UPPER, 1.10, Verdict.INCONCLUSIVE),  # touching 1+delta is not wholly above it
        (0.90, 0.95, Verdict.SLOWER),
        (0.90, below(LOWER), Verdict.SLOWER),
        (0.90, LOWER, Verdict.INCONCLUSIVE),
        (LOWER, UPPER, Verdict.SAME),  # exactly the band counts as inside
        (0.999, 1.001, Verdict.SAME),
        (below(LOWER), UPPER, Verdict.INCONCLUSIVE),
        (LOWER, above(UPPER), Verdict.INCONCLUSIVE),
        (UPPER, UPPER, Verdict.SAME),  # degenerate interval on the edge is inside
        (0.95, 1.05, Verdict.INCONCLUSIVE),
        (1.0, 1.05, Verdict.INCONCLUSIVE),
    ],
)
def test_verdict_boundaries(low: float, high: float, expected: Verdict) -> None:
    assert verdict(est(low, high), DELTA) is expected


def test_none_is_inconclusive() -> None:
    assert verdict(None, DELTA) is Verdict.INCONCLUSIVE


def test_verdict_is_a_string() -> None:
    assert Verdict.FASTER == "faster" and str(Verdict.INCONCLUSIVE) == "inconclusive"


def test_negative_threshold_is_rejected() -> None:
    with pytest.raises(ValueError):
        verdict(est(1.0, 1.1), -0.01)


def test_half_width() -> None:
    assert est(1.0, 1.21).half_width() == pytest.approx(0.1)
    assert est(0.5, 2.0).half_width() == pytest.approx(1.0)
    assert est(1.1, 1.1).half_width() == 0.0


def test_decided_by_verdict_even_when_wide() -> None:
    assert decided(est(1.05, 2.0), DELTA, precision=0.005)


def test_decided_by_precision_when_inconclusive() -> None:
    narrow = est(1.005, 1.015)  # straddles 1.01: inconclusive, half-width ~0.5%
    assert verdict(narrow, DELTA) is Verdict.INCONCLUSIVE
    assert decided(narrow, DELTA, precision=0.01)
    assert not decided(narrow, DELTA, precision=0.001)
    # strictly under the precision
    assert not decided(narrow, DELTA, precision=narrow.half_width())


def test_undecided_without_estimate() -> None:
    assert not decided(None, DELTA, precision=1.0)
