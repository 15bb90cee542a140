"""Judging what the monitor and the clock loop saw: pure functions of stored readings.

Kept apart from the monitor thread (conditions.monitor) and the clock loop's runner
(measure.clock) so that analysis, which only reads stored trials, imports neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DROP_LIMIT = 0.03  # a clock more than 3% below the reference counts as throttling
STEAL_LIMIT_PCT = 1.0  # steal above this during a trial took more time than a 1% verdict threshold
HOT_C = 80.0  # where common SoCs and laptops start to throttle


def clock_drop(before: float | None, after: float | None, limit: float = DROP_LIMIT) -> bool:
    """True when `after` is more than `limit` (a fraction) below `before`; False if either is unknown."""
    if before is None or after is None or before <= 0:
        return False
    return (before - after) / before > limit


def readings(samples: Sequence[dict[str, Any]], key: str) -> list[float]:
    """The values of `key` in the samples that have one."""
    return [s[key] for s in samples if s.get(key) is not None]


def reference_mhz(samples: Sequence[dict[str, Any]]) -> float | None:
    """The best clock the monitor saw (highest per-sample fastest-core MHz): the reference for
    the windows' min_mhz (see runflags.py)."""
    vals = readings(samples, "mhz_max")
    return max(vals) if vals else None

