"""The recorded-amounts table (shootout.judge.amounts), built once and rendered by every format.

One row per workload and amount (tabs lost, stall time, pool sizes...), one column per
configuration; a cell holds the median over rounds and its distribution-free interval, or
says how many rounds there were when they are too few for one. Markdown, HTML and `show`
lay these strings out; none of them formats a number of its own.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from shootout.judge.analysis import Analysis

TITLE = "Recorded amounts"
INTRO = ("What the trials counted that may be zero: per configuration the median over rounds and its "
         "distribution-free interval (order statistics, at the run's confidence); not speed-ups. "
         "A workload's guard (tabs lost) decides its verdict first.")


@dataclass(frozen=True)
class Cell:
    median: str
    interval: str  # "[low, high]", or why there is none ("4 rounds: no interval")

    def __str__(self) -> str:
        return f"{self.median} {self.interval}"


@dataclass(frozen=True)
class Row:
    workload: str
    amount: str  # the name with its unit: "memory.psi_full_ms (ms)"
    description: str
    cells: tuple[Cell | None, ...]  # per configuration; None: it has no such amount


@dataclass(frozen=True)
class AmountTable:
    columns: tuple[str, ...]  # configuration labels
    rows: tuple[Row, ...]


def number(value: float) -> str:
    """Counts and times with thousands separators, ratios with three significant digits."""
    if not math.isfinite(value):
        return "n/a"
    if abs(value) >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.3g}"


def amount_table(analysis: Analysis) -> AmountTable:
    """Empty rows when the run recorded no amounts."""
    names = [c.name for c in analysis.configs]
    found: dict[tuple[str, str], dict[str, Cell]] = {}
    about: dict[tuple[str, str], tuple[str, str]] = {}
    for a in analysis.amounts:
        key = (a.workload, a.name)
        about[key] = (f"{a.name} ({a.unit})", a.description)
        i = a.interval
        found.setdefault(key, {})[a.config] = (
            Cell(number(i.median), f"[{number(i.low)}, {number(i.high)}]") if i is not None else
            Cell(number(statistics.median(a.values)), f"({len(a.values)} rounds: no interval)"))
    rows = tuple(Row(workload, *about[(workload, name)], tuple(cells.get(n) for n in names))
                 for (workload, name), cells in found.items())
    return AmountTable(tuple(c.display for c in analysis.configs), rows)
