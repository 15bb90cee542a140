"""Charts (matplotlib, Agg): per-workload bars from zero with CI whiskers, and the summary.

Whiskers on the per-workload bars are the distribution-free 95% confidence interval of
each configuration's median: the binomial order-statistic interval (scipy's
quantile_test). It needs no seed and no normality, and exists from 6 values on; with
fewer values a bar has no whisker and the caption says so.

The summary chart plots the paired speed-up estimates (Hodges-Lehmann with Wilcoxon
intervals) on a log axis, so 0.8x and 1.25x sit at the same distance from 1.
"""

from __future__ import annotations

import functools
import io
import math
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ParamSpec

import matplotlib

matplotlib.use("Agg")

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter, NullLocator
from scipy.stats import binom

from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.judge.analysis import WITHIN_RUN, Analysis, Comparison
from shootout.report.text import (
    NOT_JUDGED,
    MetricRow,
    baseline,
    direction_text,
    display,
    fmt_estimate,
    fmt_value,
    headline_comparisons,
    metric_rows,
    no_estimate,
    no_geomean,
    others,
    rows_by_workload,
    speed_of,
    speed_tick,
    workload_description,
    workloads,
)
from shootout.stats import Estimate, Verdict

VERDICT_COLOR = {
    Verdict.FASTER: "#1b7837",
    Verdict.SLOWER: "#c0392b",
    Verdict.SAME: "#2c7fb8",
    Verdict.INCONCLUSIVE: "#9a9a9a",
    Verdict.ESTIMATE: "#6b6b6b",
    Verdict.BETTER: "#1b7837",
    Verdict.WORSE: "#c0392b",
    Verdict.NOT_JUDGED: "#b07aa1",
}
CONFIG_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#8172b3", "#937860", "#da8bc3")
FORMATS = ("svg", "png")
# The legend below the axes: "outside" placement is matplotlib 3.7's; Debian 12's 3.6 (the venv of a
# 32-bit Raspberry Pi OS, which has no PyPI wheels) puts it on the figure's bottom edge instead.
BELOW = ("outside lower center" if tuple(int(v) for v in matplotlib.__version__.split(".")[:2]) >= (3, 7)
         else "lower center")
CONFIDENCE = 0.95
# A blog's column of 800 px: charts 7.8 in wide (with the margin bbox_inches="tight" adds, under
# 800 px) saved at 100 dpi, or in pt as SVG; 8 pt text is then 11 px.
WIDTH_IN = 7.8
DPI = 100
LABEL_CHARS = 30  # the figures right of a bar, per line
# Between the lines of one text: matplotlib's 1.2 leaves less than a browser's em box (the SVGs
# inline in the HTML report), where one line's box then overlaps the next.
LINESPACING = 1.35
P = ParamSpec("P")
_NICE_TICKS = (0.1, 0.2, 0.25, 0.33, 0.5, 0.67, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 0.98, 0.99, 1.0,
               1.01, 1.02, 1.03, 1.05, 1.1, 1.15, 1.2, 1.25, 1.33, 1.5, 2.0, 3.0, 4.0, 5.0, 10.0)


def median_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Order-statistic CI of the median, or None when the sample is too small for one."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None
    # scipy's quantile_test(...).confidence_interval, two-sided, written out: quantile_test needs
    # scipy 1.11, and a 32-bit Raspberry Pi OS has Debian 12's 1.10 (install.sh: no PyPI wheels there)
    x, n = np.sort(arr), arr.size
    tail = (1 - confidence) / 2
    low_index, high_index = int(binom.ppf(tail, n, 0.5)) - 1, int(binom.isf(tail, n, 0.5))
    if low_index < 0 or high_index >= n:
        return None
    return float(x[low_index]), float(x[high_index])


def render(fig: Figure, fmt: str, salt: str, text_as_paths: bool) -> bytes:
    if fmt not in FORMATS:
        raise UsageError(f"unknown chart format {fmt!r}", "use svg or png")
    buf = io.BytesIO()
    # Fixed salt and no date: the same analysis gives byte-identical SVG (golden files, diffs).
    fonttype = "path" if text_as_paths else "none"
    with matplotlib.rc_context({"svg.hashsalt": f"shootout-{salt}", "svg.fonttype": fonttype}):
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
        else:
            fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None}, bbox_inches="tight")
    return buf.getvalue()


def _plain_number(value: float, _pos: object = None) -> str:
    """Axis numbers without matplotlib's '1e7' offset: 40M, 12,000, 0.5."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:,.6g}M"
    if abs(value) >= 1e3:
        return f"{value:,.0f}"
    return f"{value:g}"


def _wrap(label: str, width: int = 16) -> str:
    return "\n".join(textwrap.wrap(label, width)) or label


def _chars(fontsize: float, bold: bool = False) -> int:
    """How many characters of this size fit across the figure: DejaVu Sans averages ~0.6 em a
    character, bold ~0.66; a tenth kept for the margins."""
    return int(WIDTH_IN * 72 * 0.9 / (fontsize * (0.66 if bold else 0.6)))


def literal_text(func: Callable[P, bytes]) -> Callable[P, bytes]:
    """Build the figure with math text off: labels such as "sh -c 'exit $x'" stay literal."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> bytes:
        with matplotlib.rc_context({"text.parse_math": False}):
            return func(*args, **kwargs)

    return wrapper


def panel_rows(analysis: Analysis, workload: str, all_metrics: bool = False) -> list[MetricRow]:
    """The metrics a workload's chart draws: its headline (the first metric where none is marked),
    or every metric with all_metrics."""
    rows = rows_by_workload(analysis).get(workload, [])
    if not rows:
        raise UsageError(f"no results for workload {workload!r} in this analysis")
    return rows if all_metrics else [r for r in rows if r.headline][:1] or rows[:1]


@literal_text
def workload_chart(analysis: Analysis, workload: str, fmt: str = "svg", text_as_paths: bool = True,
                   all_metrics: bool = False) -> bytes:
    """Horizontal bars from zero, one per configuration, with median CIs; a panel per metric drawn
    (the headline, or all of them). Names sit left of the bars and the figures in a column right of
    the axes, so neither long configuration names nor flags run into each other."""
    rows = panel_rows(analysis, workload, all_metrics)
    configs = list(analysis.configs)
    panels = [_panel(analysis, row, configs) for row in rows]
    lines = max(label.count("\n") + 1 for panel in panels for label, _ in panel.labels)
    bar_in = max(0.4, 0.18 * lines + 0.1)  # a configuration's row: its figures' lines, never less than a bar
    desc = workload_description(analysis, rows[0].spec, workload)  # sizes from the run's parameters
    title = _wrap(f"{workload}: {desc}" if desc and desc != workload else workload, _chars(11, bold=True))
    kind = "paired" if all(c.paired for r in rows for c in r.comparisons) else "unpaired (includes drift between runs)"
    notes = [_panel_caption(row, panel.counts) for row, panel in zip(rows, panels)]
    notes.append("Bars start at zero; whiskers: 95% CI of each median (distribution-free, order statistics). "
                 f"Beside the bars: the {kind} speed-up against the baseline, [its interval].")
    if (hidden := len(rows_by_workload(analysis)[workload]) - len(rows)) > 0:
        notes.append(f"The headline metric only: shootout report --all draws the other {hidden}.")
    caption = "\n".join(textwrap.fill(n, _chars(8)) for n in notes)
    height = (0.3 + 0.2 * (title.count("\n") + 1) + 0.15 * (caption.count("\n") + 1)
              + len(rows) * (0.75 + bar_in * len(configs)))
    fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
    axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
    for ax, row, panel in zip(axes, rows, panels):
        _draw_panel(ax, row, configs, panel)
    fig.suptitle(title, fontsize=11, fontweight="bold", linespacing=LINESPACING)
    fig.supxlabel(caption, fontsize=8, color="#444444", linespacing=LINESPACING)
    return render(fig, fmt, f"workload-{workload}", text_as_paths)


@dataclass(frozen=True)
class _Panel:
    """One metric's bars: per configuration the median, its CI's reach below and above, the rounds,
    and the figures beside the bar with their colour."""

    medians: list[float]
    lows: list[float]
    highs: list[float]
    counts: list[int]
    labels: list[tuple[str, str]]


def _panel(analysis: Analysis, row: MetricRow, configs: Sequence[Config]) -> _Panel:
    comps = {c.config: c for c in row.comparisons}
    medians, lows, highs, counts = _bars(analysis, row, configs)
    base = baseline(analysis).name
    labels = [_bar_label(fmt_value(m, row.unit), comps.get(cfg.name), cfg.name == base) if math.isfinite(m)
              else ("", "") for m, cfg in zip(medians, configs)]
    # each line of the figures wrapped to the column's width (the flags' line may be long)
    labels = [("\n".join(textwrap.fill(line, LABEL_CHARS) for line in text.split("\n")), color)
              for text, color in labels]
    return _Panel(medians, lows, highs, counts, labels)


def _draw_panel(ax, row: MetricRow, configs: Sequence[Config], panel: _Panel) -> None:
    y = np.arange(len(configs))[::-1]  # the first configuration (the baseline) on top
    colors = [CONFIG_COLORS[i % len(CONFIG_COLORS)] for i in range(len(configs))]
    ax.barh(y, panel.medians, height=0.6, color=colors, edgecolor="#333333", linewidth=0.6, zorder=2)
    ax.errorbar(panel.medians, y, xerr=[panel.lows, panel.highs], fmt="none", ecolor="#111111",
                elinewidth=1.4, capsize=5, capthick=1.4, zorder=3)
    reach = [m + h for m, h in zip(panel.medians, panel.highs) if math.isfinite(m)]
    ax.set_xlim(0, max(reach or [1.0]) * 1.04)
    ax.set_ylim(-0.6, len(configs) - 0.4)
    ax.set_yticks(y, [_wrap(c.display, 20) for c in configs], fontsize=9, linespacing=LINESPACING)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
    ax.xaxis.set_major_formatter(FuncFormatter(_plain_number))
    ax.tick_params(axis="x", labelsize=8)
    ax.set_title(f"{row.metric} ({row.unit}) \u2014 {direction_text(row.direction)}", fontsize=10, loc="left")
    ax.grid(axis="x", color="#dddddd", zorder=0)
    ax.spines[["top", "right"]].set_visible(False)
    for yi, (label, color) in ((yi, lc) for yi, lc in zip(y, panel.labels) if lc[0]):
        # a column right of the axes: constrained layout makes room for it
        ax.annotate(label, xy=(1.0, yi), xycoords=("axes fraction", "data"), xytext=(8, 0),
                    textcoords="offset points", ha="left", va="center", fontsize=8.5, color=color,
                    linespacing=LINESPACING)


def _bars(analysis: Analysis, row: MetricRow,
          configs: Sequence[Config]) -> tuple[list[float], list[float], list[float], list[int]]:
    """Per configuration: the median, how far its CI reaches below and above it, the rounds."""
    medians, lows, highs, counts = [], [], [], []
    for cfg in configs:
        vals = analysis.values.get((row.workload, row.metric, cfg.name), [])
        med = float(np.median(vals)) if vals else row.first.medians.get(cfg.name, math.nan)
        ci = median_ci(vals)
        medians.append(med)
        lows.append(med - ci[0] if ci else 0.0)
        highs.append(ci[1] - med if ci else 0.0)
        counts.append(len(vals))
    return medians, lows, highs, counts


def _bar_label(value: str, comp: Comparison | None, is_baseline: bool) -> tuple[str, str]:
    """The text beside a bar and its colour: the value, then the verdict or what decided it, and warnings."""
    label, color = value, "#222222"
    if comp is not None and comp.decided_by is not None:  # not a speed-up: what decided
        label += f"\n{comp.verdict}\n({comp.decided_by.figure()})"
        color = VERDICT_COLOR[comp.verdict]
    elif comp is not None and comp.estimate is not None:
        said = speed_of(comp.estimate)
        verdict = "" if str(comp.verdict) == said.word else f" ({comp.verdict})"
        label += f"\n{said.short}{verdict}\n[{said.interval}]"
        color = VERDICT_COLOR[comp.verdict]
    elif is_baseline:
        label += "\nbaseline"
    # the guard's flag is in the label already (what decided); the caption has it whole
    flags = [f for f in comp.flags if comp.decided_by is None or f != comp.decided_by.flag(comp.metric)] \
        if comp is not None else []
    if comp is not None and (flags or comp.confounders):
        label += "\n\u26a0 " + ", ".join([*flags, *(["confounder"] if comp.confounders else [])])
    return label, color


def _panel_caption(row: MetricRow, counts: Sequence[int]) -> str:
    """A panel's line under the chart: unit, direction, rounds, and every flag and confounder in full."""
    notes = sorted({n for c in row.comparisons for n in c.flags})
    notes += sorted({f"confounder: {n}" for c in row.comparisons for n in c.confounders})
    n_text = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}\u2013{max(counts)}"
    caption = f"{row.metric}: {row.unit}, {direction_text(row.direction)}; median of {n_text} rounds"
    if min(counts) < 6:
        caption += " (under 6 rounds: no interval)"
    if notes:
        caption += "; \u26a0 " + "; ".join(notes)
    return caption


def _log_ticks(ax, low: float, high: float) -> None:
    """Round ratios as ticks, thinned outward from 1 so labels never overlap: a label such as
    "20% slower" takes about a quarter of a panel's width."""
    gap = math.log(high / low) / 4
    ticks = [1.0]
    for side in ([t for t in _NICE_TICKS if t > 1], sorted((t for t in _NICE_TICKS if t < 1), reverse=True)):
        last = 1.0
        for t in side:
            if low <= t <= high and abs(math.log(t / last)) >= gap:
                ticks.append(t)
                last = t
    ticks.sort()
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ticks, [speed_tick(t) for t in ticks])


SummaryRow = tuple[str, Estimate | None, Verdict, bool, str]


def _summary_rows(analysis: Analysis, config: str) -> list[SummaryRow]:
    """(label, estimate, verdict, is_geomean, text instead of a point), workloads sorted by
    speed-up, geomeans last. A verdict a guard decided (tabs lost) is no speed-up: it gets
    no point on the speed-up axis, only its words, so no colour lands on the wrong side."""
    comps: list[Comparison] = headline_comparisons(analysis, config)
    # Largest speed-up at the top; workloads without one at the bottom of the list.
    comps.sort(key=lambda c: -c.estimate.ratio if c.estimate and not c.decided_by else math.inf)
    specs = {w.name: w for w in analysis.workloads}

    def label(c: Comparison) -> str:
        # Name the metric only where the workload has several (which one is its headline).
        spec = specs.get(c.workload)
        return f"{c.workload} ({c.metric})" if spec is None or len(spec.metrics) > 1 else c.workload

    def row(c: Comparison) -> SummaryRow:
        if c.decided_by is not None:
            return (label(c), None, c.verdict, False, f"{c.verdict}: {c.decided_by.figure()} (speed-up not judged)")
        return (label(c), c.estimate, c.verdict, False, "" if c.estimate else no_estimate(c))

    rows = [row(c) for c in comps]
    summary = next((s for s in analysis.summaries if s.config == config), None)
    if summary is not None:
        if len(summary.by_category) > 1:
            for cat, est in sorted(summary.by_category.items()):
                rows.append((f"geomean: {cat}", est, summary.category_verdicts[cat], True,
                             NOT_JUDGED if summary.category_why.get(cat) else "too few rounds"))
        rows.append(("GEOMEAN (all workloads)", summary.geomean, summary.verdict, True,
                     no_geomean(summary, short=True)))
    return rows


@literal_text
def summary_chart(analysis: Analysis, fmt: str = "svg", text_as_paths: bool = True) -> bytes:
    """Speed-up over the baseline of every workload's headline metric, log axis, one panel per config."""
    base = baseline(analysis)
    rest = others(analysis)
    if not rest:
        raise UsageError("a summary chart needs at least two configurations")
    if analysis.refused:  # nothing measured: say why, not "each of 0 workloads"
        return _refused_chart(analysis, fmt, text_as_paths)
    panels = [(cfg, _summary_rows(analysis, cfg.name)) for cfg in rest]
    n_rows = max(len(rows) for _, rows in panels)
    fig = Figure(figsize=(WIDTH_IN, 1.0 + len(rest) * (1.4 + 0.42 * n_rows)), layout="constrained")
    axes = fig.subplots(len(rest), 1, squeeze=False)[:, 0]
    bounds = [b for _, rows in panels for _, e, _, _, _ in rows if e for b in (e.low, e.high)]
    span = max([abs(math.log(b)) for b in bounds] + [math.log(1.05)])
    low, high = math.exp(-span * 1.25), math.exp(span * 1.25)
    for ax, (cfg, rows) in zip(axes, panels):
        _speedup_panel(ax, analysis, cfg, base, rows, low, high)
    legend = _summary_legend(analysis, base, rest)
    fig.legend(handles=legend, loc=BELOW, ncols=min(3, len(legend)), fontsize=8, frameon=False)
    n = len(headline_comparisons(analysis, rest[0].name))
    scope = f"each of {workloads(n)}" if n != 1 else "1 workload"
    fig.suptitle(f"Speed-up against {base.display}, headline metric of {scope}", fontsize=11, fontweight="bold")
    return render(fig, fmt, "summary", text_as_paths)


def _refused_chart(analysis: Analysis, fmt: str, text_as_paths: bool) -> bytes:
    """The summary of a run refused for its budget: its configurations and why nothing was measured."""
    fig = Figure(figsize=(WIDTH_IN, 2.2), layout="constrained")
    fig.suptitle(f"{' vs '.join(c.display for c in analysis.configs)}: no speed-ups", fontsize=11,
                 fontweight="bold")
    fig.text(0.5, 0.45, textwrap.fill(analysis.refused, _chars(9)), ha="center", va="center", fontsize=9)
    return render(fig, fmt, "summary", text_as_paths)


def _speedup_panel(ax, analysis: Analysis, cfg: Config, base: Config, rows: list[SummaryRow],
                   low: float, high: float) -> None:
    """One configuration's panel: each headline speed-up with its interval, on a log axis from low to high."""
    y = np.arange(len(rows))[::-1]
    delta = analysis.threshold
    if analysis.noise_floor:
        nf = analysis.noise_floor
        ax.axvspan(1 / (1 + nf), 1 + nf, color="#bbbbbb", alpha=0.45, zorder=0)
    ax.axvline(1.0, color="#333333", linewidth=1, zorder=1)
    for edge in (1 / (1 + delta), 1 + delta):
        ax.axvline(edge, color="#777777", linewidth=0.8, linestyle=":", zorder=1)
    for yi, (label, est, v, is_geo, words) in zip(y, rows):
        if est is None:  # centred on 1x: a note, on neither side
            ax.text(1.0, yi, words, va="center", ha="center", fontsize=8,
                    color=VERDICT_COLOR[v] if v in (Verdict.BETTER, Verdict.WORSE) else "#666666",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5}, zorder=4)
            continue
        color = VERDICT_COLOR[v]
        ax.errorbar([est.ratio], [yi], xerr=[[est.ratio - est.low], [est.high - est.ratio]],
                    fmt="D" if is_geo else "o", color=color, ecolor=color, elinewidth=2.2 if is_geo else 1.6,
                    capsize=4, markersize=8 if is_geo else 6, zorder=3)
        ax.text(high, yi, " " + fmt_estimate(est),
                va="center", ha="left", fontsize=8, color=color,
                fontweight="bold" if is_geo else "normal")
    ax.set_yticks(y, [r[0] for r in rows])
    for tick, row in zip(ax.get_yticklabels(), rows):
        if row[3]:
            tick.set_fontweight("bold")
    geo_start = sum(1 for r in rows if not r[3])
    if geo_start < len(rows):
        ax.axhline(y[geo_start - 1] - 0.5 if geo_start else len(rows) - 0.5, color="#999999", linewidth=0.6)
    _log_ticks(ax, low, high)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.grid(axis="x", color="#eeeeee", zorder=0)
    ax.spines[["top", "right"]].set_visible(False)
    heads = headline_comparisons(analysis, cfg.name)
    within = next((f for c in heads for f in c.flags if f == WITHIN_RUN), None)
    unpaired = any(not c.paired for c in heads)
    note = f", {within}" if within else ", unpaired: includes drift between the runs" if unpaired else ""
    ax.set_title(f"{cfg.display} vs {base.display}: speed-up [interval]{note}", fontsize=10, pad=16)
    ax.set_xlabel(f"speed-up of {cfg.display} against {base.display} (log scale)", fontsize=9)
    # Separate texts, not padded spaces: SVG text collapses runs of spaces. The words alone: the
    # title and the axis name the configurations, which side by side would run into each other.
    for x, align, text in ((0.0, "left", "\u2190 slower"), (1.0, "right", "faster \u2192")):
        ax.text(x, 1.0, text, transform=ax.transAxes, ha=align, va="bottom", fontsize=8.5,
                color=VERDICT_COLOR[Verdict.SLOWER if x == 0.0 else Verdict.FASTER])


def _summary_legend(analysis: Analysis, base: Config, rest: Sequence[Config]) -> list[Patch]:
    name = display(analysis, rest[0].name) if len(rest) == 1 else "configuration"
    legend = [Patch(color=VERDICT_COLOR[Verdict.FASTER], label=f"{name} faster"),
              Patch(color=VERDICT_COLOR[Verdict.SLOWER], label=f"{name} slower"),
              Patch(color=VERDICT_COLOR[Verdict.SAME], label=f"same within \u00b1{analysis.threshold * 100:g}% (dotted lines)"),
              Patch(color=VERDICT_COLOR[Verdict.INCONCLUSIVE], label="inconclusive")]
    if analysis.noise_floor:
        legend.append(Patch(color="#bbbbbb", alpha=0.45, label=f"noise floor \u00b1{analysis.noise_floor * 100:.1f}% (A/A)"))
    return legend


SUMMARY_KEY = "(summary)"  # key of the summary chart in chart_names(); no workload has parentheses


def chart_names(analysis: Analysis, ext: str) -> dict[str, str]:
    """File name per chart: SUMMARY_KEY and every workload name -> a safe, unique file name."""
    names = {SUMMARY_KEY: f"summary.{ext}"} if others(analysis) else {}
    used = set(names.values())
    for row in metric_rows(analysis):
        if row.workload in names:
            continue
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", row.workload).strip("-.") or "workload"
        name, i = f"workload-{stem}.{ext}", 2
        while name in used:
            name, i = f"workload-{stem}-{i}.{ext}", i + 1
        names[row.workload] = name
        used.add(name)
    return names
