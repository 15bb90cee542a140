"""Recorded amounts: the median interval holds its confidence, and a setup that loses tabs is
never called faster (seeded simulations that would fail if either were wrong)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shootout.stats import paired_estimate, verdict
from shootout.stats.recorded import guarded_verdict, median_interval
from shootout.stats.verdict import Verdict


def test_median_interval_by_hand():
    # n = 6 at 95%: P(Bin(6, 1/2) = 0) = 1/64 <= 0.025, so k = 1: the whole range
    got = median_interval([5, 1, 4, 2, 6, 3])
    assert (got.median, got.low, got.high, got.n) == (3.5, 1, 6, 6)
    assert median_interval([1, 2, 3, 4, 5]) is None  # 2/32 > 0.025: no 95% interval from 5 values
    # n = 20: k = 6 (P(Bin <= 5) = 0.0207), so [x_(6), x_(15)]
    got = median_interval(list(range(1, 21)))
    assert (got.low, got.high) == (6, 15)


@pytest.mark.parametrize("draw", ["lognormal", "poisson", "mostly-zero"])
def test_median_interval_covers_the_true_median(draw):
    rng = np.random.default_rng(11)
    samplers = {
        "lognormal": (lambda n: rng.lognormal(3.0, 0.5, n), math.exp(3.0)),
        "poisson": (lambda n: rng.poisson(2.5, n), 2.0),  # P(X <= 1) < 0.5 < P(X <= 2): the median is 2
        "mostly-zero": (lambda n: rng.binomial(1, 0.3, n) * rng.poisson(4, n), 0.0),
    }
    sample, true_median = samplers[draw]
    hits = trials = 0
    for n in (6, 9, 15, 30):
        for _ in range(500):
            got = median_interval(sample(n))
            trials += 1
            hits += got.low <= true_median <= got.high
    assert hits / trials >= 0.95 - 0.012  # 2000 draws: the standard error is 0.005


def _rounds(rng, n, speedup, loss_rate):
    """Paired rounds: p95 latencies (B faster by `speedup`) and tabs B lost per round."""
    base = rng.lognormal(math.log(100), 0.1, n)
    other = base / speedup * rng.lognormal(0, 0.05, n)
    lost_b = rng.binomial(3, loss_rate, n).astype(float)
    return base, other, lost_b


def _verdict(base, other, lost_a, lost_b):
    d = [math.log((1 / o) / (1 / b)) for b, o in zip(base, other, strict=True)]  # lower latency is better
    plain = verdict(paired_estimate(d), 0.01)
    return plain, guarded_verdict(plain, dict(enumerate(lost_a)), dict(enumerate(lost_b)))[0]


def test_a_setup_that_loses_tabs_is_never_faster():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(6, 30))
        base, other, lost_b = _rounds(rng, n, speedup=1.5, loss_rate=0.05)
        if lost_b.sum() == 0:
            lost_b[rng.integers(n)] = 1  # at least one tab lost in one round
        plain, guarded = _verdict(base, other, np.zeros(n), lost_b)
        assert guarded is Verdict.WORSE  # even where its latency alone says "faster"
        # and the guard is symmetric: as the baseline, it makes the other setup better
        assert guarded_verdict(plain, dict(enumerate(lost_b)), dict(enumerate(np.zeros(n))))[0] is Verdict.BETTER


def test_the_guard_leaves_setups_without_losses_alone():
    rng = np.random.default_rng(6)
    agree = 0
    for _ in range(200):
        base, other, _ = _rounds(rng, 12, speedup=1.3, loss_rate=0.0)
        plain, guarded = _verdict(base, other, np.zeros(12), np.zeros(12))
        assert guarded is plain
        agree += plain is Verdict.FASTER
    assert agree >= 190  # a 30% faster setup is found faster (the guard does not hide it)


def test_only_rounds_both_sides_measured_count():
    assert guarded_verdict(Verdict.FASTER, {1: 0, 2: 0}, {1: 0, 3: 5}) == (Verdict.FASTER, None)
    v, lost = guarded_verdict(Verdict.SAME, {1: 1, 2: 0}, {1: 2, 2: 1})
    assert v is Verdict.WORSE and lost is not None and lost.why() == "lost 3 (baseline 1) over 2 rounds"
