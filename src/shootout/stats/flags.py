"""Quality flags for one trial series: warnings shown beside results, never silent drops."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

CV_LIMIT = 0.10  # coefficient of variation above this: "cv>10%"
OUTLIER_SCORE = 10.0  # |modified z-score| above this marks an outlier
OUTLIER_SHARE = 0.05  # flag when more than this share of values are outliers
TREND_P = 0.01  # Kendall tau p-value below this: "trend"
TREND_MIN_ROUNDS = 8  # fewer rounds cannot show a trend worth flagging
SHORT_TRIAL_S = 0.05  # median trial duration below this: "short-trial"

# 0.6745 is the 75th percentile of the standard normal, so M is on the z-score scale for
# normal data (Iglewicz and Hoaglin's modified z-score).
_MAD_TO_Z = 0.6745


def cv(values: Sequence[float]) -> float:
    """Sample coefficient of variation, std (ddof=1) / |mean|; NaN if undefined."""
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return math.nan
    mean = float(np.mean(arr))
    if mean == 0.0:
        return math.nan
    return float(np.std(arr, ddof=1)) / abs(mean)


def outlier_fraction(values: Sequence[float]) -> float:
    """Share of values with |0.6745 (x - median) / MAD| > 10; 0 when MAD is 0 or no values."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return 0.0
    median = float(np.median(arr))
    mad = float(np.median(np.abs(arr - median)))
    if mad == 0.0:
        # Over half the values are identical: no scale to judge outliers by.
        return 0.0
    score = _MAD_TO_Z * (arr - median) / mad
    return float(np.mean(np.abs(score) > OUTLIER_SCORE))


def has_trend(rounds: Sequence[int], log_ratios: Sequence[float]) -> bool:
    """Significant monotonic trend of log_ratios over rounds (Kendall tau, p < 0.01).

    Needs at least 8 rounds; a constant series has no trend.
    """
    if len(rounds) != len(log_ratios):
        raise ValueError("rounds and log_ratios must have the same length")
    if len(rounds) < TREND_MIN_ROUNDS:
        return False
    p = kendall_p(np.asarray(rounds, dtype=float), np.asarray(log_ratios, dtype=float))
    return not math.isnan(p) and p < TREND_P


def _tie_sums(values: np.ndarray) -> tuple[float, float, float]:
    t = np.unique(values, return_counts=True)[1].astype(float)
    return float((t * (t - 1)).sum()), float((t * (t - 1) * (t - 2)).sum()), float((t * (t - 1) * (2 * t + 5)).sum())


def kendall_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p-value of Kendall's tau by its normal approximation with tie corrections
    (Kendall 1970; scipy's kendalltau(method="asymptotic") gives the same). Written out
    because importing scipy.stats would cost every run 0.5 s; a flag needs no exact p.
    NaN when either series is constant."""
    n = len(x)
    i, j = np.triu_indices(n, 1)
    s = float((np.sign(x[j] - x[i]) * np.sign(y[j] - y[i])).sum())
    (x1, x2, x3), (y1, y2, y3) = _tie_sums(x), _tie_sums(y)
    variance = ((n * (n - 1) * (2 * n + 5) - x3 - y3) / 18.0
                + x2 * y2 / (9.0 * n * (n - 1) * (n - 2)) + x1 * y1 / (2.0 * n * (n - 1)))
    pairs = n * (n - 1) / 2.0
    if x1 / 2.0 == pairs or y1 / 2.0 == pairs:  # every pair tied: no order to test
        return math.nan
    return math.erfc(abs(s) / math.sqrt(2.0 * variance))


def is_short(durations_s: Sequence[float]) -> bool:
    """Median trial duration under 50 ms: timer and start-up noise dominate."""
    if len(durations_s) == 0:
        return False
    return float(np.median(np.asarray(durations_s, dtype=float))) < SHORT_TRIAL_S


def trial_flags(
    values: Sequence[float],
    rounds: Sequence[int],
    log_ratios: Sequence[float] | None,
    durations_s: Sequence[float],
) -> list[str]:
    """Flags for one metric of one (workload, configuration) series.

    `values` are the metric's per-trial values and `durations_s` the trials' wall times.
    `rounds` are the round indices of `log_ratios` (same length), the paired d_r against
    the baseline; pass None for log_ratios when there is no pairing (then no trend check).
    Returns a subset of "cv>10%", "outliers", "trend", "short-trial", in that order.
    """
    flags: list[str] = []
    if cv(values) > CV_LIMIT:  # NaN compares False: undefined CV raises no flag
        flags.append("cv>10%")
    if outlier_fraction(values) > OUTLIER_SHARE:
        flags.append("outliers")
    if log_ratios is not None and has_trend(rounds, log_ratios):
        flags.append("trend")
    if is_short(durations_s):
        flags.append("short-trial")
    return flags
