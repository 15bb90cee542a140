"""Judging what the monitor and the clock loop saw: pure functions of stored readings.

Kept apart from the monitor thread (conditions.monitor) and the clock loop's runner
(conditions.clock) so that analysis, which only reads stored trials, imports neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DROP_LIMIT = 0.03  # a clock more than 3% below the reference counts as throttling
STEAL_LIMIT_PCT = 1.0  # steal above this during a trial took more time than a 1% verdict threshold
HOT_C = 80.0  # where common SoCs and laptops start to throttle
BUSY_SHARE = 0.2  # flag "busy" when more than this share of trials saw more runnable tasks than CPUs


def clock_drop(before: float | None, after: float | None, limit: float = DROP_LIMIT) -> bool:
    """True when `after` is more than `limit` (a fraction) below `before`; False if either is unknown."""
    if before is None or after is None or before <= 0:
        return False
    return (before - after) / before > limit


def readings(samples: Sequence[dict[str, Any]], key: str) -> list[float]:
    """The values of `key` in the samples that have one."""
    return [s[key] for s in samples if s.get(key) is not None]


def reference_mhz(samples: Sequence[dict[str, Any]]) -> float | None:
    """The best clock the monitor saw (highest per-sample fastest-core MHz): a baseline for
    monitor_flags in the same units as the windows' min_mhz."""
    vals = readings(samples, "mhz_max")
    return max(vals) if vals else None


def monitor_flags(windows: Sequence[dict[str, Any]], baseline_mhz: float | None) -> list[str]:
    """Flags for one metric from the monitor windows of its trials, in a fixed order.

    throttled   the firmware or the CPU reported throttling during a trial
    clock-drop  a trial's lowest clock was more than 3% below baseline_mhz (same scale as min_mhz)
    steal       the hypervisor took more than 1% of CPU time during a trial
    hot         a sensor read 80 °C or more during a trial
    busy        in over 20% of trials more tasks were runnable than there are CPUs
    """
    flags = []
    if any(w.get("throttled") for w in windows):
        flags.append("throttled")
    if any(clock_drop(baseline_mhz, w.get("min_mhz")) for w in windows):
        flags.append("clock-drop")
    if any((w.get("max_steal_pct") or 0.0) > STEAL_LIMIT_PCT for w in windows):
        flags.append("steal")
    if any((w.get("max_temp_c") or 0.0) >= HOT_C for w in windows):
        flags.append("hot")
    crowded = [w for w in windows if w.get("max_runq") is not None and w["max_runq"] > w.get("cpus", 1 << 30)]
    if windows and len(crowded) / len(windows) > BUSY_SHARE:
        flags.append("busy")
    return flags
