"""A bandwidth above the link's physical ceiling: a cache artefact, or compression.

A throttled scratch (scratch.throttle, read back into each trial's in_force) cannot move more
bytes per second than its rate, so a figure above it came from a cache that the measurement
did not get past. On a compressing btrfs, though, the device moves only the compressed bytes:
a file that compsize says takes 1/r of its size on disk may be written r times faster than
the link. So a trial is flagged as a cache artefact only when its figure exceeds the ceiling
× its own compsize ratio (TOTAL of the file the metric wrote: `{stem}_compress_x`, else the
trial's `compress_x`, else 1) by more than MARGIN; a figure above the ceiling but within that
is said to come from compression. Read by the analysis, which adds the flags to each
comparison, for the baseline's and the configuration's trials alike.
"""

from __future__ import annotations

from collections.abc import Iterable

from shootout.base.model import Trial
from shootout.base.units import unit

MARGIN = 0.10  # the throttle's burst allowance and timer granularity: 30 MB/s may read as 33


def ceiling_bps(trial: Trial) -> float | None:
    """The throttle's rate in force during the trial (bytes/s), or None without one."""
    rates = [v for k, v in (trial.in_force.get("throttle") or {}).items()
             if k.endswith("_bps") and isinstance(v, (int, float)) and v > 0]  # not its requests/s limits
    return float(max(rates)) if rates else None


def compress_ratio(trial: Trial, metric: str) -> float:
    """What the device moved less than the file's size, by compsize: the metric's file, else the trial's."""
    stem = metric.rsplit("_", 1)[0]
    for name in (f"{stem}_compress_x", "compress_x"):
        if (ratio := trial.values.get(name)) is not None and ratio > 0:
            return max(ratio, 1.0)
    return 1.0


def ceiling_flags(trials: Iterable[Trial], metric: str, unit_symbol: str) -> list[str]:
    """At most one flag per configuration: 'cache artefact: ...' or 'above the link by compression: ...'."""
    u = unit(unit_symbol)
    if u.dimension != "bandwidth":
        return []
    seen: dict[str, list[tuple[float, float, float]]] = {}  # config -> (bytes/s, ceiling, ratio) above ceiling
    total: dict[str, int] = {}
    for t in trials:
        if metric not in t.values or (ceiling := ceiling_bps(t)) is None:
            continue
        total[t.spec.config] = total.get(t.spec.config, 0) + 1
        rate = t.values[metric] * u.scale
        if rate > ceiling * (1 + MARGIN):
            seen.setdefault(t.spec.config, []).append((rate, ceiling, compress_ratio(t, metric)))
    flags = []
    for config, above in seen.items():
        link = f"the {above[0][1] / 1e6:g} MB/s link"
        artefacts = [a for a in above if a[0] > a[1] * a[2] * (1 + MARGIN)]
        if artefacts:
            worst = max(artefacts, key=lambda a: a[0] / (a[1] * a[2]))
            flags.append(f"cache artefact: {config} {len(artefacts)}/{total[config]} trials above {link} × "
                         f"compsize ratio + {MARGIN:.0%} (up to {worst[0] / 1e6:,.1f} MB/s at ratio {worst[2]:.2f})")
        else:
            low = min(a[2] for a in above)
            flags.append(f"compression: {config} {len(above)}/{total[config]} trials above {link}, below it × "
                         f"their compsize ratio (≥ {low:.2f}) + {MARGIN:.0%}")
    return flags
