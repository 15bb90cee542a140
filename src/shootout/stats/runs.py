"""Comparisons across runs where the runs are the units, so run-to-run variation is included.

Two runs of the same configuration differ by more than their trials suggest: another boot,
another physical memory layout, another hour of a shared host. An interval built from the
trials of one run per side knows nothing of that (it covered 0.77 with a 1% run-to-run
offset); an interval built from run means does. Each run contributes its mean log
performance (or, for configurations measured in the same runs, its mean paired log-ratio),
and those means are compared with Student/Welch t-intervals: every run mean carries its own
trial noise plus the run-to-run variance, so nothing needs to be modelled separately.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from shootout.stats.estimate import Estimate, as_finite_array
from shootout.stats.summary import t_estimate, welch_df


def between_runs(a_means: Sequence[float], b_means: Sequence[float], confidence: float = 0.95,
                 rule: str = "") -> Estimate | None:
    """Speed-up of B over A from per-run means of log performance.

    Both sides with two or more runs: Welch's interval. One side with a single run: its
    run-to-run variance is taken to be the other side's (pooled t, runs - 2 degrees of
    freedom). None when neither side has two runs. Estimate.n counts runs.
    """
    a = as_finite_array(a_means, "run means A")
    b = as_finite_array(b_means, "run means B")
    if len(a) < 1 or len(b) < 1 or max(len(a), len(b)) < 2:
        return None
    centre = float(b.mean() - a.mean())
    if min(len(a), len(b)) >= 2:
        parts = [float(a.var(ddof=1)) / len(a), float(b.var(ddof=1)) / len(b)]
        return t_estimate(centre, sum(parts), welch_df(parts, [len(a), len(b)]), confidence,
                          len(a) + len(b), "welch on run means", rule)
    spread = sum(float(((x - x.mean()) ** 2).sum()) for x in (a, b))
    df = len(a) + len(b) - 2
    variance = spread / df * (1.0 / len(a) + 1.0 / len(b))
    return t_estimate(centre, variance, df, confidence, len(a) + len(b), "pooled t on run means", rule)


def across_runs(effects: Sequence[float], confidence: float = 0.95, rule: str = "") -> Estimate | None:
    """Speed-up from per-run paired effects (both configurations measured in every run).

    t-interval on the runs' mean log-ratios, runs - 1 degrees of freedom; None with one run.
    """
    e = as_finite_array(effects, "per-run effects")
    if len(e) < 2:
        return None
    return t_estimate(float(np.mean(e)), float(e.var(ddof=1)) / len(e), len(e) - 1, confidence, len(e),
                      "t on per-run paired means", rule)
