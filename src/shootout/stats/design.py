"""The rule behind every paired interval shown with a verdict: which looks, how many comparisons.

Why an adjustment at all. The runner looks after every round from --min-rounds to
--max-rounds and stops a workload as soon as it is decided. A plain 95% interval at each
look misses the truth far more than 5% of the time somewhere along the way (P("faster") was
12% at a true difference of exactly delta with 5% noise), and one run judges many workloads.

The rule (repeated confidence intervals with alpha spending): the chance that *any* look's
interval misses the true shift is at most alpha/2 on each side, and the looks share that
alpha by a Hwang-Shih-DeCani spending function with gamma = -4 (close to O'Brien-Fleming):
strict early looks, late looks near the nominal level (96.7% at round 50 for one comparison
at 95%, where the flat per-look level this rule replaced stayed at 99.2%). Comparisons that
decide early are easy anyway; the hard ones, near the threshold or in noise, decide late,
where the level now costs little. For the signed-rank statistic the crossing chance does not
depend on the noise distribution (the signs of d - theta are fair coins independent of the
ranks of |d - theta| for any symmetric noise), and its standardised path over rounds is close
to a Gaussian random walk. So each look's level comes from the crossing probabilities of a
Gaussian random walk (stats/spending.py) and is then used for the exact Wilcoxon interval at
that n. The exact intervals' discreteness only widens them. The seeded simulation tests
(tests/unit/test_stats_simulation.py) check the resulting error rates with normal and
heavy-tailed noise, and hold the spending rule to the flat one on the same runs.

Stopping early is free under this rule: an interval that holds at every look at once also
holds at whichever look the run stops, for whatever reason (decided, precision, budget).
The last look must be fixed before the data it judges: without --max-rounds it is planned
from the warm-up's round time alone, before the first measured round (measure/roundplan.py).

Headline verdicts are a family too: with m headline comparisons in a run each one gets
alpha/m (Bonferroni). Holm's step-down would reject a little more often, but it has no
interval to show beside each verdict, and the output promises one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from shootout.stats.estimate import MIN_PAIRED_ROUNDS, Estimate, as_finite_array
from shootout.stats.paired import critical_rank, hodges_lehmann, method_name
from shootout.stats.spending import boundary
from shootout.stats.spending import name as spending_name
from shootout.stats.summary import geomean

_SIGNIFICANT = 3  # per-look alpha is rounded down to this many digits: stable output, never larger
# The Gaussian walk is a close but not exact model of the signed-rank path: spending all of
# alpha missed the truth somewhere in 5.35% of 20,000 simulated runs at 95% (the flat rule:
# 5.24%). The spending rule spends 90% of it and holds: 4.8% (test_stats_simulation.py).
SPENT_SHARE = 0.9
DEFAULT_SPENDING = "hsd:-4"  # see stats/spending.py for why, and tests/unit/test_stats_simulation.py


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


def _levels(alpha_side: float, start: int, last: int, rule: str) -> tuple[float, ...]:
    """Two-sided per-look confidence at looks start..last, each alpha rounded down (and kept
    above 1e-12, where no exact interval of up to 50 rounds exists anyway)."""
    return tuple(1.0 - _round_down(max(2.0 * (1.0 - NormalDist().cdf(c)), 1e-12))
                 for c in boundary(alpha_side, start, last, rule))


def _first_has_interval(alpha_side: float, start: int, last: int, rule: str) -> tuple[float, ...] | None:
    """The levels of looks start..last when the exact interval exists at look `start`, else None."""
    levels = _levels(alpha_side, start, last, rule) if start < last else (1.0 - 2.0 * alpha_side,)
    return levels if critical_rank(start, levels[0]) >= 1 else None


@lru_cache(maxsize=64)
def calibrate(alpha_side: float, first: int, last: int,
              rule: str = DEFAULT_SPENDING) -> tuple[tuple[float, ...], int | None]:
    """(per-look two-sided confidences for looks start..last, start): start is the first look
    from `first` on at which the exact interval exists at its level.

    Looks where it cannot exist can never stop a run, so the boundary begins at the first
    look that can: its alpha is not wasted on looks that cannot use it.
    """
    if rule == "flat":
        return _calibrate_flat(alpha_side, first, last)
    alpha_side *= SPENT_SHARE
    low, high = max(first, MIN_PAIRED_ROUNDS), last
    if low > high or _first_has_interval(alpha_side, high, last, rule) is None:
        return (1.0 - 2.0 * alpha_side,), None
    # Beginning later gives the first look more alpha and more rounds: bisect for the earliest
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if _first_has_interval(alpha_side, mid, last, rule) else (mid + 1, high)
    levels = _first_has_interval(alpha_side, low, last, rule)
    assert levels is not None
    return levels, low


def _calibrate_flat(alpha_side: float, first: int, last: int) -> tuple[tuple[float, ...], int | None]:
    """The flat rule that alpha spending replaced, as it was: one level, moved with the first look until they agree."""
    start = first_interval(first, last, 1.0 - 2.0 * alpha_side)
    levels = (1.0 - 2.0 * alpha_side,)
    for _ in range(10):
        if start is None or start >= last:
            return levels, start
        levels = _levels(alpha_side, start, last, "flat")
        moved = first_interval(first, last, levels[0])
        if moved == start:
            break
        start = moved
    return levels, start


@dataclass(frozen=True)
class Design:
    """How intervals are built for one kind of comparison of a run.

    confidence  what the interval promises over all looks and the whole family (0.95)
    family      Bonferroni divisor: the run's headline comparisons (1 for sub-metrics)
    looks       (first, last) rounds at which the runner may stop; None for one look at a
                fixed n (imported or fixed-length runs)
    spending    "obf" (O'Brien-Fleming-type alpha spending), or "flat" (the Pocock-type
                per-look level used before alpha spending, kept for the simulations' comparison)
    """

    confidence: float = 0.95
    family: int = 1
    looks: tuple[int, int] | None = None
    spending: str = DEFAULT_SPENDING  # how the looks share the error: stats/spending.py

    def __post_init__(self) -> None:
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be strictly between 0 and 1, got {self.confidence!r}")
        if self.family < 1:
            raise ValueError(f"family must be >= 1, got {self.family}")

    @property
    def sequential(self) -> bool:
        return self.looks is not None and self.looks[1] > self.looks[0]

    def _calibrated(self) -> tuple[tuple[float, ...], int | None]:
        alpha = (1.0 - self.confidence) / self.family
        if not self.sequential:
            return (1.0 - alpha,), None
        assert self.looks is not None
        return calibrate(alpha / 2.0, self.looks[0], self.looks[1], self.spending)

    def per_look(self, n: int | None = None) -> float:
        """The confidence level of the interval at look n (rounds); without n, at the last look.
        Before the first look, the first look's level: for projections only, since estimates()
        gives no interval there (the looks' error budget starts at the first look)."""
        levels, start = self._calibrated()
        if start is None or n is None:
            return levels[-1]
        return levels[min(max(n - start, 0), len(levels) - 1)]

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
            first, last = self.first_look(), self.looks[1]
            if first is None:
                parts.append(f"sequential: {spending_name(self.spending)}, no round reaches it")
            elif self.spending == "flat":
                parts.append(f"sequential: {percent(self.per_look())} per look, rounds {first}\u2013{last}")
            else:
                parts.append(f"sequential: {spending_name(self.spending)}, {percent(self.per_look(first))} at round "
                             f"{first} to {percent(self.per_look(last))} at round {last}")
        if self.family > 1:
            parts.append(f"Bonferroni over {self.family} headline comparisons")
        return "; ".join(parts)

    def adopt(self, est: Estimate | None) -> Estimate | None:
        """An interval computed at per_look(n) by another estimator, labelled with this design's
        promise (confidence) and rule."""
        return None if est is None else dataclasses.replace(est, confidence=self.confidence, rule=self.rule())

    def estimate(self, log_ratios: Sequence[float]) -> Estimate | None:
        """The interval of this design after n = len(log_ratios) rounds; None before the first look."""
        d = as_finite_array(log_ratios, "log_ratios")
        out = self.estimates(d[np.newaxis, :])
        return out[0]

    def before_first_look(self, n: int) -> bool:
        """Whether round n comes before the first look the rule allows for: a sequential look
        there would spend error the rule never budgeted, so it gives no interval."""
        first = self.first_look()
        return first is None or n < first

    def geomean(self, log_ratios: Mapping[str, Mapping[int, float]]) -> Estimate | None:
        """The geomean's t-interval under this rule, so that it never claims more than the rows
        it sums up: the level of the look of its shortest workload (the looks share alpha as the
        rows' do). Labelled with the rule; None for no workloads, and before the first look, as
        for the rows: looks before it would spend alpha the rule never set aside (the seeded
        simulation missed 1.49% of 18,000 suites against the 1.25% promised when it allowed them,
        1.23% without)."""
        if not log_ratios:
            return None
        n = min(len(series) for series in log_ratios.values())
        if self.before_first_look(n):
            return None
        return self.adopt(geomean(log_ratios, self.per_look(n)))

    def estimates(self, d: np.ndarray) -> list[Estimate | None]:
        """estimate() of every row of d (shape (rows, n)); vectorised for simulations."""
        rows, n = d.shape
        usable = n >= MIN_PAIRED_ROUNDS and not self.before_first_look(n)
        k = critical_rank(n, self.per_look(n)) if usable else 0
        if k < 1:
            return [None] * rows
        centre, low, high = (np.exp(a).tolist() for a in hodges_lehmann(d, k))
        method, rule = method_name(n), self.rule()
        return [Estimate(c, lo, hi, n, self.confidence, method, rule) for c, lo, hi in zip(centre, low, high)]
