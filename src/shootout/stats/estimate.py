"""The result type shared by every estimator (a ratio with its interval), and input checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# With fewer than 6 paired rounds no sign pattern is rare enough (P(W+ = 0) = 1/32 at n=5)
# for an exact two-sided 95% Wilcoxon interval to exist.
MIN_PAIRED_ROUNDS = 6


@dataclass(frozen=True)
class Estimate:
    """A speed-up of B over A on the ratio scale, e.g. 1.07 means B is 7% faster.

    `ratio`, `low` and `high` are exp() of the log-scale point estimate and interval bounds.
    `n` counts paired rounds (paired, geomean), n_a + n_b values (unpaired) or runs
    (between runs). `confidence` is what the interval promises; `rule` names how that
    promise is kept when the interval is one of many (looks after every round, several
    headline comparisons), e.g. "sequential: Hwang–Shih–DeCani alpha spending (gamma -4), 99.895% at
    round 11 to 97.13% at round 50"; empty for
    a single plain interval.
    """

    ratio: float
    low: float
    high: float
    n: int
    confidence: float
    method: str
    rule: str = ""

    def half_width(self) -> float:
        """Relative half-width of the interval: (high/low)**0.5 - 1.

        On the log scale this is exp of half the interval length, so it does not depend
        on where the interval sits; it is what the stopping rule compares to --precision.
        """
        return (self.high / self.low) ** 0.5 - 1.0


def as_finite_array(values: Sequence[float], name: str) -> np.ndarray:
    """Estimator input as a flat float array; NaN or inf is a caller bug, never data."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr
