"""The counters' chart: for each workload, its counters' ratios (configuration / baseline) on a
log axis around 1, an interval where the counter has a value per round, a diamond where it
was counted once (the PMU's or cachegrind's pass, the code size). Recorded amounts beside the
verdicts, drawn apart from them.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from shootout.judge.analysis import Analysis
from shootout.judge.why import CounterRatio
from shootout.report.charts import BELOW, CONFIG_COLORS, WIDTH_IN, literal_text, render
from shootout.report.text import display, others

WHY_KEY = "(why)"  # its key beside charts.SUMMARY_KEY in the report's chart names
PER_WORKLOAD = 4  # counters drawn per workload and configuration, furthest from 1 first
_TICKS = (0.25, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 4.0)


def _rows(analysis: Analysis) -> list[tuple[str, int, CounterRatio]]:
    """(label, configuration index, counter) from the top of the chart down."""
    index = {c.name: i for i, c in enumerate(others(analysis))}
    out = []
    for why in analysis.whys:
        for r in why.ratios[:PER_WORKLOAD]:
            out.append((f"{why.workload}: {r.label}", index.get(why.config, 0), r))
    return out


def _draw(ax: object, y: int, colour: str, r: CounterRatio) -> None:
    if r.low is not None and r.high is not None:
        ax.errorbar([r.ratio], [y], xerr=[[r.ratio - r.low], [r.high - r.ratio]], fmt="o",  # type: ignore[attr-defined]
                    color=colour, capsize=3, markersize=5)
    else:
        ax.plot([r.ratio], [y], marker="D", color=colour, markersize=5, linestyle="none")  # type: ignore[attr-defined]


def _legend(analysis: Analysis) -> list[Line2D]:
    sides = [Line2D([], [], color=CONFIG_COLORS[i % len(CONFIG_COLORS)], marker="o", linestyle="none",
                    label=f"{display(analysis, c.name)} / {analysis.configs[0].display}")
             for i, c in enumerate(others(analysis))]
    return sides + [Line2D([], [], color="#555555", marker="D", linestyle="none",
                           label="counted once per side (no interval)")]


@literal_text
def why_chart(analysis: Analysis, fmt: str = "svg", text_as_paths: bool = True) -> bytes | None:
    """The chart, or None where the run recorded no counter ratio."""
    rows = _rows(analysis)
    if not rows:
        return None
    fig = Figure(figsize=(WIDTH_IN, 1.2 + 0.22 * len(rows)))
    ax = fig.add_subplot()
    for y, (_, i, r) in enumerate(rows):
        _draw(ax, y, CONFIG_COLORS[i % len(CONFIG_COLORS)], r)
    ax.axvline(1.0, color="#333333", linewidth=0.8)
    ax.set_xscale("log")
    ends = [v for _, _, r in rows for v in (r.low or r.ratio, r.high or r.ratio, r.ratio)]
    low, high = min(min(ends), 0.9) / 1.1, max(max(ends), 1.1) * 1.1
    ax.set_xlim(low, high)
    ax.xaxis.set_major_locator(FixedLocator([t for t in _TICKS if low <= t <= high] or [1.0]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}\u00d7"))
    ax.set_yticks(range(len(rows)), [label for label, _, _ in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("ratio of the counter, configuration / baseline (log scale); not part of any verdict", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    fig.legend(handles=_legend(analysis), loc=BELOW, ncols=2, fontsize=8, frameon=False)
    return render(fig, fmt, "why", text_as_paths)
