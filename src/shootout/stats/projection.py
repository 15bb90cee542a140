"""How many rounds a comparison needs to decide at the noise measured so far: advice only.

At n rounds the signed-rank interval's half-width is close to z_n * sigma / sqrt(n) *
sqrt(pi / 3): sigma the standard deviation of the per-round log ratio, z_n the normal quantile
of the design's two-sided level at look n, and pi / 3 the Hodges-Lehmann estimate's variance
against the mean's under normal noise (its efficiency 3 / pi; the approximation is some 15% narrow
at 30 rounds, closer later). A comparison with no difference is judged "same" once its
estimate's distance from 0 plus the half-width is under delta, and one of 2 delta "faster"
once its distance from 2 delta plus the half-width is: with the estimate's median distance,
0.674 standard errors, the projection is the first look where (z_n + 0.674) * se_n <= delta,
the round by which half of such comparisons are decided. Differences near delta take
longer (the precision, stats.verdict.decided, bounds them). A comparison whose difference so far
lies clear of the threshold is decided sooner: once the half-width fits between the threshold and
that difference, taken 1.96 of its own standard errors nearer the threshold, so that noise alone
looks clear in one comparison of 20 (membw in the main job, 26% slower at 5% noise, is projected
at the first look; a difference near the threshold would need more than its 50 rounds at that noise).

The projection sizes the ETA and a notice; it never moves a look (the design is fixed before
the first measured round, stats/design.py).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from shootout.stats.design import Design

_HL_VARIANCE = math.pi / 3.0


_MEDIAN_DISTANCE = NormalDist().inv_cdf(0.75)  # median of |N(0, 1)|: 0.674
_CLEAR = NormalDist().inv_cdf(0.975)  # a difference so far this many standard errors out is seldom noise


def standard_error(sigma: float, n: int) -> float:
    """The Hodges-Lehmann estimate's standard error at n rounds (normal noise)."""
    return sigma / math.sqrt(n) * math.sqrt(_HL_VARIANCE)


def halfwidth(sigma: float, n: int, level: float) -> float:
    """The interval's half-width on the log scale at n rounds and a two-sided level."""
    return NormalDist().inv_cdf(0.5 + level / 2.0) * standard_error(sigma, n)


def rounds_needed(sigma: float, threshold: float, design: Design, shift: float = 0.0, seen: int = 0) -> int | None:
    """The first look by which half the comparisons at this noise with no difference (or one of
    twice the threshold) are projected to be decided, or sooner a difference `shift` (log scale)
    measured over `seen` rounds that lies clear of the threshold; None when no look up to the last is."""
    first = design.first_look()
    if first is None or design.looks is None:
        return None
    delta = math.log1p(threshold)
    clear = abs(shift) - _CLEAR * sigma / math.sqrt(seen) - delta if seen else 0.0
    for n in range(first, design.looks[1] + 1):
        width = halfwidth(sigma, n, design.per_look(n))
        if width + _MEDIAN_DISTANCE * standard_error(sigma, n) <= delta or width <= clear:
            return n
    return None


def round_noise(log_ratios: list[float], trial_logs: list[list[float]]) -> float | None:
    """The standard deviation of a comparison's per-round log ratio. From three rounds on, their
    own; with two, pooled with twice each side's round-to-round variance of its log performance
    (trial_logs: per configuration, over the same rounds), as one difference of two is a single
    degree of freedom. Conservative: a side's own spread holds drift that pairing removes."""
    n = len(log_ratios)
    if n >= 3:
        mean = sum(log_ratios) / n
        return math.sqrt(sum((d - mean) ** 2 for d in log_ratios) / (n - 1))
    if n < 2:
        return None
    estimates = [(log_ratios[0] - log_ratios[1]) ** 2 / 2.0]
    for logs in trial_logs:
        if len(logs) >= 2:
            mean = sum(logs) / len(logs)
            estimates.append(2.0 * sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    return math.sqrt(sum(estimates) / len(estimates))
