"""The rule behind every paired interval shown with a verdict: which looks, how many comparisons.

Why an adjustment at all. The runner looks after every round from --min-rounds to
--max-rounds and stops a workload as soon as it is decided. A plain 95% interval at each
look misses the truth far more than 5% of the time somewhere along the way (P("faster") was
12% at a true difference of exactly delta with 5% noise), and one run judges many workloads.

The rule (Pocock-type, calibrated): every look uses the same per-look level, chosen so that
the chance that *any* look's interval misses the true shift is at most alpha/2 on each side.
For the signed-rank statistic that chance does not depend on the noise distribution (the signs
of d - theta are fair coins independent of the ranks of |d - theta| for any symmetric noise),
and its standardised path over rounds is close to a Gaussian random walk. So the per-look
level comes from the crossing probability of a Gaussian random walk S_n with the boundary
c*sqrt(n) at every look, computed by numerical integration of its density from look to look
(Armitage, McPherson and Rowe's recursion; Jennison and Turnbull, ch. 19), and is then used
for the exact Wilcoxon interval at each n. The exact intervals' discreteness only widens
them. The seeded simulation tests (tests/unit/test_stats_simulation.py) check the resulting
error rates with normal and heavy-tailed noise.

Stopping early is free under this rule: an interval that holds at every look at once also
holds at whichever look the run stops, for whatever reason (decided, precision, budget).

Headline verdicts are a family too: with m headline comparisons in a run each one gets
alpha/m (Bonferroni). Holm's step-down would reject a little more often, but it has no
interval to show beside each verdict, and the output promises one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from shootout.stats.estimate import MIN_PAIRED_ROUNDS, Estimate, as_finite_array
from shootout.stats.paired import critical_rank, hodges_lehmann, method_name

_GRID_STEP = 0.1  # integration grid on the S_n scale (unit steps); c is then accurate to ~0.001
_SIGNIFICANT = 3  # per-look alpha is rounded down to this many digits: stable output, never larger
_C_TOLERANCE = 1e-4  # the boundary c is found to this accuracy


def _gauss(x: np.ndarray, sd: float) -> np.ndarray:
    return np.exp(-0.5 * (x / sd) ** 2) / (sd * math.sqrt(2.0 * math.pi))


def _crossing(c: float, first: int, last: int) -> float:
    """P(S_n >= c*sqrt(n) for some n in first..last), S_n a sum of n independent N(0, 1)."""
    h = _GRID_STEP
    x = np.arange(-9.0 * math.sqrt(last), c * math.sqrt(last) + h, h)
    mass = _gauss(x, math.sqrt(first)) * h
    mass[x >= c * math.sqrt(first)] = 0.0
    half = math.ceil(8.0 / h)
    step = _gauss(np.arange(-half, half + 1) * h, 1.0) * h  # one round's increment
    for n in range(first + 1, last + 1):
        mass = np.convolve(mass, step)[half: half + len(x)]  # a few hundred points: direct is fast
        mass[x >= c * math.sqrt(n)] = 0.0  # paths that crossed at look n leave
    return 1.0 - float(mass.sum())


def _boundary(alpha_side: float, first: int, last: int) -> float:
    """The c whose crossing probability is alpha_side. The probability falls as c grows, so
    bisection finds it; scipy.optimize would cost every run 0.3 s of imports for the same."""
    low, high = 0.5, 9.0
    while high - low > _C_TOLERANCE:
        mid = (low + high) / 2.0
        low, high = (mid, high) if _crossing(mid, first, last) > alpha_side else (low, mid)
    return (low + high) / 2.0


def _round_down(alpha: float) -> float:
    scale = 10.0 ** (_SIGNIFICANT - 1 - math.floor(math.log10(alpha)))
    return math.floor(alpha * scale) / scale


def percent(level: float) -> str:
    """A level close to 1 with its alpha to three digits: 0.99203 -> '99.203%'."""
    alpha = 100.0 * (1.0 - level)
    digits = max(1, 2 - math.floor(math.log10(alpha))) if alpha > 0 else 1
    return f"{100.0 * level:.{digits}f}%"


def first_interval(n_from: int, n_to: int, confidence: float) -> int | None:
    """Smallest n in n_from..n_to where a Wilcoxon interval at this level exists."""
    return next((n for n in range(max(n_from, MIN_PAIRED_ROUNDS), n_to + 1) if critical_rank(n, confidence) >= 1),
                None)


@lru_cache(maxsize=64)
def calibrate(alpha_side: float, first: int, last: int) -> tuple[float, int | None]:
    """(per-look two-sided confidence, first look with an interval) for looks first..last.

    Looks where the exact interval cannot exist at the per-look level can never stop a run,
    so they are left out of the calibration; that moves the first look, which changes the
    level a little: iterate until the two agree (two or three passes).
    """
    start = first_interval(first, last, 1.0 - 2.0 * alpha_side)
    confidence = 1.0 - 2.0 * alpha_side
    for _ in range(10):
        if start is None or start >= last:
            return confidence, start
        c = _boundary(alpha_side, start, last)
        confidence = 1.0 - _round_down(2.0 * (1.0 - NormalDist().cdf(c)))
        moved = first_interval(first, last, confidence)
        if moved == start:
            break
        start = moved
    return confidence, start


@dataclass(frozen=True)
class Design:
    """How intervals are built for one kind of comparison of a run.

    confidence  what the interval promises over all looks and the whole family (0.95)
    family      Bonferroni divisor: the run's headline comparisons (1 for sub-metrics)
    looks       (first, last) rounds at which the runner may stop; None for one look at a
                fixed n (imported or fixed-length runs)
    """

    confidence: float = 0.95
    family: int = 1
    looks: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be strictly between 0 and 1, got {self.confidence!r}")
        if self.family < 1:
            raise ValueError(f"family must be >= 1, got {self.family}")

    @property
    def sequential(self) -> bool:
        return self.looks is not None and self.looks[1] > self.looks[0]

    def _calibrated(self) -> tuple[float, int | None]:
        alpha = (1.0 - self.confidence) / self.family
        if not self.sequential:
            return 1.0 - alpha, None
        assert self.looks is not None
        return calibrate(alpha / 2.0, self.looks[0], self.looks[1])

    def per_look(self) -> float:
        """The confidence level of each look's interval."""
        return self._calibrated()[0]

    def first_look(self) -> int | None:
        """The first round at which an interval (and so a verdict) can exist."""
        if self.sequential:
            return self._calibrated()[1]
        last = self.looks[1] if self.looks else 10_000
        return first_interval(MIN_PAIRED_ROUNDS, last, self.per_look())

    def rule(self) -> str:
        parts = []
        if self.sequential:
            assert self.looks is not None
            first = self.first_look()
            span = f"rounds {first}\u2013{self.looks[1]}" if first is not None else "no round reaches it"
            parts.append(f"sequential: {percent(self.per_look())} per look, {span}")
        if self.family > 1:
            parts.append(f"Bonferroni over {self.family} headline comparisons")
        return "; ".join(parts)

    def adopt(self, est: Estimate | None) -> Estimate | None:
        """An interval computed at per_look() by another estimator, labelled with this design's
        promise (confidence) and rule."""
        return None if est is None else dataclasses.replace(est, confidence=self.confidence, rule=self.rule())

    def estimate(self, log_ratios: Sequence[float]) -> Estimate | None:
        """The interval of this design after n = len(log_ratios) rounds; None before the first look."""
        d = as_finite_array(log_ratios, "log_ratios")
        out = self.estimates(d[np.newaxis, :])
        return out[0]

    def estimates(self, d: np.ndarray) -> list[Estimate | None]:
        """estimate() of every row of d (shape (rows, n)); vectorised for simulations."""
        rows, n = d.shape
        k = critical_rank(n, self.per_look()) if n >= MIN_PAIRED_ROUNDS else 0
        if k < 1:
            return [None] * rows
        centre, low, high = (np.exp(a).tolist() for a in hodges_lehmann(d, k))
        method, rule = method_name(n), self.rule()
        return [Estimate(c, lo, hi, n, self.confidence, method, rule) for c, lo, hi in zip(centre, low, high)]
