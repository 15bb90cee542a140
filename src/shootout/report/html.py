"""One self-contained HTML report: inline SVG charts, no external resources, opens from disk."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

import shootout
from shootout.judge.analysis import Analysis, Comparison
from shootout.measure.lostconfigs import lost_lines
from shootout.report import amountstable as amounts
from shootout.report import sides, why
from shootout.report import charts
from shootout.report.amountstable import amount_table
from shootout.report.facts import config_facts, machine_facts
from shootout.report.lostworkloads import lost_notices
from shootout.report.perdollar import per_dollar, speed_text
from shootout.report.text import (
    MetricRow,
    all_notes,
    baseline,
    capitalized,
    change_phrase,
    display,
    fmt_ratio,
    fmt_ratio_interval,
    fmt_value,
    geomean_workload_count,
    interval_legend,
    iter_summaries,
    metric_rows,
    no_estimate,
    no_geomean,
    one_side_rows,
    others,
    rows_by_workload,
    side_figures,
    speed,
    speed_legend,
    speed_of,
    suite_word,
    summary_sentence,
    workload_description,
    workloads,
)
from shootout.report.timeline import timeline_chart
from shootout.report.whychart import why_chart
from shootout.stats import Estimate

_ENV = Environment(
    loader=PackageLoader("shootout.report", "templates"),
    autoescape=select_autoescape(["html", "j2"]),
    trim_blocks=False,
    keep_trailing_newline=True,
)


def inline_svg(svg: bytes) -> Markup:
    """A matplotlib SVG made fit to sit inside HTML: no prolog, doctype, metadata or URLs."""
    text = svg.decode("utf-8")
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.DOTALL)
    # HTML parsers put <svg> in the SVG namespace and map xlink:href themselves; dropping
    # the declarations leaves the file with no URL of any kind.
    text = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", text)
    return Markup(text)


@dataclass(frozen=True)
class Cell:
    html: Any
    sort: str | None = None
    num: bool = False
    colspan: int = 1
    css: str = ""  # a class of its own, beside "num"


def _num(value: float | None) -> str | None:
    """Sort key of a numeric cell; 7 significant digits order any two values a reader can tell apart."""
    return None if value is None else f"{float(value):.7g}"


def _verdict_cell(v: str) -> Cell:
    return Cell(Markup(f'<span class="v-{escape(v.replace(" ", "-"))}">{escape(v)}</span>'))


def _notes_cell(comp: Comparison) -> Cell:
    spans = [f'<span class="flag">{escape(f)}</span>' for f in ([comp.why] if comp.why else []) + list(comp.flags)]
    spans += [f'<span class="flag confounder">confounder: {escape(c)}</span>' for c in comp.confounders]
    return Cell(Markup(" ".join(spans)), sort=str(len(spans)), css="flags")


def _estimate_cells(est: Estimate | None, why: str = "too few rounds") -> list[Cell]:
    """The speed and its interval, sorted by the ratios they say in words."""
    if est is None:
        return [Cell("n/a", None, True), Cell(why, None, True)]
    said = speed_of(est)
    return [Cell(said.short, _num(est.ratio), True), Cell(f"[{said.interval}]", _num(est.low), True)]


def _metric_cell(mrow: MetricRow) -> Cell:
    """'rate (ops/s ↑) ★': the metric, its unit and direction, a star on the headline."""
    arrow = "\u2191" if mrow.direction == "higher" else "\u2193"
    star = " \u2605" if mrow.headline else ""
    return Cell(f"{mrow.metric} ({mrow.unit} {arrow}){star}")


Table = tuple[list[dict[str, str]], list[dict[str, Any]], list[dict[str, Any]]]


def _side_table(analysis: Analysis) -> Table | None:
    """A run of one configuration compared nothing: its figures (median, min, max of its rounds)."""
    if not (side := one_side_rows(analysis)):
        return None
    config = analysis.configs[0]
    columns = [("Workload", "text"), ("Category", "text"), ("Metric", "text"), (f"Median {config.display}", "num"),
               ("Min", "num"), ("Max", "num"), ("Rounds", "num")]
    rows = []
    for mrow in side:
        figures = side_figures(analysis, mrow)
        cells = [Cell(mrow.workload), Cell(mrow.spec.category if mrow.spec else ""), _metric_cell(mrow)]
        cells += [Cell(fmt_value(v, mrow.unit), _num(v), True) for v in figures[:3]]
        cells.append(Cell(str(figures.rounds), _num(figures.rounds), True))
        rows.append({"headline": mrow.headline, "cells": cells})
    return [{"label": label, "type": kind} for label, kind in columns], rows, []


def _table(analysis: Analysis) -> Table:
    if (side := _side_table(analysis)) is not None:
        return side
    base = baseline(analysis)
    rest = others(analysis)
    many = len(rest) > 1
    other_label = "configuration" if many else rest[0].display if rest else "configuration"
    # The answer first (speed-up, interval, verdict), the figures behind it after: at 800 px the
    # table scrolls in its wrapper, and what scrolls out of sight is the detail.
    columns = [("Workload", "text"), ("Metric", "text")]
    if many:
        columns.append(("Configuration", "text"))
    columns += [("Speed-up", "num"), ("Interval", "num"), ("Verdict", "text"),
                (f"Median {base.display}", "num"), (f"Median {other_label}", "num"),
                ("Flags & confounders", "num"), ("Category", "text")]
    rows = []
    for mrow in metric_rows(analysis):
        for comp in mrow.comparisons:
            b, o = comp.medians.get(comp.baseline), comp.medians.get(comp.config)
            cells = [Cell(comp.workload), _metric_cell(mrow)]
            if many:
                cells.append(Cell(display(analysis, comp.config)))
            if comp.decided_by is not None:  # the counts that decided, in the number's place
                cells += [Cell(comp.decided_by.figure(), None, True), Cell("speed-up not judged", None, True)]
            else:
                cells += _estimate_cells(comp.estimate, no_estimate(comp))
            cells += [_verdict_cell(str(comp.verdict)), Cell(fmt_value(b, comp.unit), _num(b), True),
                      Cell(fmt_value(o, comp.unit), _num(o), True), _notes_cell(comp), Cell(comp.category)]
            rows.append({"headline": comp.headline, "cells": cells})
    foot = []
    width = len(columns)
    for summary in iter_summaries(analysis):
        n = geomean_workload_count(analysis, summary.config)
        entries = [("geomean", f"{workloads(n)}, headline metrics", summary.geomean, summary.verdict, False)]
        if len(summary.by_category) > 1:
            entries += [("geomean", f"{cat} workloads", est, summary.category_verdicts[cat], True)
                        for cat, est in sorted(summary.by_category.items())]
        for name, scope, est, judged, is_cat in entries:
            cells = [Cell(f"{name}: {scope}", colspan=2)]  # its configuration in the column beside it
            if many:
                cells.append(Cell(display(analysis, summary.config)))
            cells += _estimate_cells(est, no_geomean(summary, short=True))
            word = suite_word(est, judged)
            cells += [_verdict_cell(str(word) if word else ""), Cell("", colspan=4)]
            assert sum(c.colspan for c in cells) == width
            foot.append({"category": is_cat, "cells": cells})
    return [{"label": label, "type": kind} for label, kind in columns], rows, foot


def _workloads(analysis: Analysis, all_metrics: bool) -> list[dict[str, Any]]:
    out = []
    for rows in rows_by_workload(analysis).values():
        mrow = rows[0]
        spec = mrow.spec
        phrases = []
        for r in rows:
            for comp in r.comparisons:
                phrases.append({
                    "text": f"{r.metric}: {change_phrase(comp, analysis)}",
                    "flags": comp.flags,
                    "confounders": comp.confounders,
                })
        svg = charts.workload_chart(analysis, mrow.workload, "svg", text_as_paths=False, all_metrics=all_metrics)
        out.append({
            "name": mrow.workload,
            "anchor": re.sub(r"[^A-Za-z0-9_-]+", "-", mrow.workload),
            "category": spec.category if spec else mrow.first.category,
            "description": workload_description(analysis, spec, mrow.workload),
            "svg": inline_svg(svg),
            "phrases": phrases,
        })
    return out


def method_items(analysis: Analysis) -> list[str]:
    """The method in a few sentences, naming the estimators this analysis really used."""
    methods = sorted({c.estimate.method for c in analysis.comparisons if c.estimate})
    seeds = sorted({r.settings.seed for r in analysis.runs})
    delta = analysis.threshold * 100
    items = [
        ("Each round runs every workload once under every configuration: the workloads in an order shuffled "
        f"from the run's seed ({', '.join(map(str, seeds)) or 'unknown'}), each workload's configurations back "
        "to back in an order balanced over rounds (AB then BA; a Williams design for more), after one "
        "discarded warm-up trial per workload and configuration; every trial is a fresh process."),
        ("Performance is the value for higher-is-better metrics and its inverse for lower-is-better ones; "
        "the speed-up of a configuration in round r is d_r = ln(perf_config / perf_baseline)."),
    ]
    if any(c.paired for c in analysis.comparisons):
        items.append(
            "Paired rounds: the estimate is the Hodges\u2013Lehmann estimator (median of the Walsh averages of d_r) "
            "with the Wilcoxon signed-rank confidence interval (exact up to 50 rounds, normal approximation "
            "above), reported as exp(\u00b7) in percent of the baseline's performance, e.g. "
            f"{speed(1.070, 1.051, 1.089)}; at least 6 rounds are needed."
        )
    if repeats := max((r.settings.repeats for r in analysis.runs if r.settings.interleaved), default=0):
        items.append(
            "A trial during which programs outside shootout's process tree used more than a quarter of a CPU "
            f"(user time, from /proc/stat) is set aside and measured again, up to {repeats} times, after waiting "
            "for them to stop; the choice depends only on other programs, and the set-aside attempts are kept "
            "with the run. A configuration whose attempts were set aside more often than chance allows is "
            "flagged “repeated unevenly”."
        )
    items += [
        (f"Verdict with threshold \u03b4 = {delta:g}%: faster if the whole interval is above 1+\u03b4, slower if "
        "wholly below 1/(1+\u03b4), same if wholly inside, inconclusive otherwise; headline metrics only. An "
        "inconclusive verdict says how far this run could resolve and what would settle it."),
        *analysis.rules,
        ("Charts: bars start at zero and show medians; whiskers are the distribution-free confidence "
        "interval of each median (order statistics)."),
        ("Flags are shown, never used to drop data: cv>10% (coefficient of variation), outliers (modified "
        "z-score over 10 in more than 5% of trials), trend (d_r drifting over rounds), short-trial (under "
        "50 ms), throttling, steal time, swap activity; confounders are facts that differ between the "
        "configurations compared."),
    ]
    if analysis.noise_floor is not None:
        items.append(
            f"Noise floor: A/A runs of one configuration against itself on this machine resolve differences "
            f"down to \u00b1{analysis.noise_floor * 100:.1f}%; smaller differences cannot be told from noise."
        )
    if methods:
        items.append(f"Estimators used in this report: {', '.join(methods)}.")
    return items


# A per-price "faster" means more performance for the money.
_VALUE_WORDS = {"faster": "better value", "slower": "worse value", "same": "same value"}


def _per_dollar(analysis: Analysis, prices: dict[str, float] | None, price_unit: str) -> dict[str, Any] | None:
    if not prices:
        return None
    rows = []
    for r in per_dollar(analysis, prices, price_unit):
        priced = r["perf_per_price"] is not None
        rows.append({
            "workload": r["workload"] if r["workload"] != "geomean" else "geomean (all workloads)",
            "config": display(analysis, r["config"]),
            "speedup": speed_text(r),
            "price_ratio": fmt_ratio(r["price_ratio"]),
            "value": fmt_ratio_interval(r["perf_per_price"], r["ppp_low"], r["ppp_high"]) if priced else "n/a",
            "verdict": r["verdict"],
            "word": _VALUE_WORDS.get(r["verdict"], r["verdict"]),
        })
    listed = [f"{c.display}: {prices[c.name]:g} {price_unit}" for c in analysis.configs]
    return {"unit": price_unit, "prices": listed, "rows": rows}


def subtitle(analysis: Analysis) -> str:
    parts = []
    for run in analysis.runs:
        when = datetime.fromtimestamp(run.created_at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
        parts.append(f"run {run.id} ({when}, {run.status})")
    # Trials per configuration and metric: the rounds of a run, the values of an unpaired comparison.
    counts = sorted({len(v) for v in analysis.values.values() if v})
    text = "; ".join(parts)
    if counts:
        span = f"{counts[0]}" + (f"\u2013{counts[-1]}" if counts[-1] != counts[0] else "")
        text += f"; {span} trials per configuration and metric"
    return text + f"; baseline: {baseline(analysis).display}"


def render_html(analysis: Analysis, prices: dict[str, float] | None = None, price_unit: str = "$",
                all_metrics: bool = False) -> str:
    """The whole report as one HTML string; optional prices add a performance-per-price section; a
    workload's chart draws its headline metric, or every metric with all_metrics."""
    columns, rows, foot = _table(analysis)
    cfacts = config_facts(analysis)
    summary_svg = inline_svg(charts.summary_chart(analysis, "svg", text_as_paths=False)) if others(analysis) else None
    timeline = timeline_chart(analysis, "svg", text_as_paths=False)
    counters = why_chart(analysis, "svg", text_as_paths=False)
    return _ENV.get_template("report.html.j2").render(
        title="shootout: " + " vs ".join(c.display for c in analysis.configs),
        subtitle=subtitle(analysis),
        sentences=[summary_sentence(analysis, s) for s in iter_summaries(analysis)],
        lost=lost_notices(analysis),
        notes=lost_lines(analysis.lost, "Not compared")
        + [f"During the run: {line}" for line in analysis.conditions] + all_notes(analysis),
        explanation=analysis.explanation,
        sides_title=sides.TITLE,
        side_lines=sides.side_lines(analysis),
        summary_svg=summary_svg,
        timeline_svg=inline_svg(timeline) if timeline is not None else None,
        baseline=baseline(analysis).display,
        median_confidence=round(charts.CONFIDENCE * 100),
        legend=[capitalized(speed_legend(analysis)), capitalized(interval_legend(analysis))],
        threshold=f"{analysis.threshold * 100:g}",
        noise_floor=f"{analysis.noise_floor * 100:.1f}" if analysis.noise_floor is not None else None,
        columns=columns,
        rows=rows,
        foot=foot,
        why_title=why.TITLE,
        why_intro=capitalized(why.INTRO),
        why_lines=why.why_lines(analysis),
        why_svg=inline_svg(counters) if counters is not None else None,
        amounts=amount_table(analysis),
        amounts_title=amounts.TITLE,
        amounts_intro=amounts.INTRO,
        per_dollar=_per_dollar(analysis, prices, price_unit),
        workloads=_workloads(analysis, all_metrics),
        config_facts=cfacts,
        machine_facts=machine_facts(analysis),
        differing=cfacts.differing,
        method=method_items(analysis),
        version=shootout.__version__,
    )
