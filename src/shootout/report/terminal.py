"""The Rich table of `shootout show`: medians, speed-ups with CIs, verdicts, flags, geomean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from shootout.analysis import WITHIN_RUN, Analysis
from shootout.report.text import (
    all_notes,
    baseline,
    fmt_estimate,
    fmt_value,
    geomean_workload_count,
    iter_summaries,
    metric_rows,
    notes_of,
    others,
    rule_lines,
    row_medians,
    workloads,
)
from shootout.stats import Estimate, Verdict, verdict

VERDICT_STYLE = {
    Verdict.FASTER: "bold green",
    Verdict.SLOWER: "bold red",
    Verdict.SAME: "cyan",
    Verdict.INCONCLUSIVE: "yellow",
    Verdict.ESTIMATE: "dim",
}


def verdict_text(v: Verdict) -> Text:
    return Text(str(v), style=VERDICT_STYLE[v])


def _geomean_cells(est: Estimate | None, threshold: float) -> list[Text | str]:
    return [fmt_estimate(est), verdict_text(verdict(est, threshold))]


def show_table(analysis: Analysis, all_metrics: bool = False) -> Table:
    """One row per headline metric (every metric with all_metrics); speed-up and verdict
    columns per non-baseline configuration.

    Speed-ups are of each configuration over the baseline (>1: that configuration is
    faster), whatever the metric's direction. Sub-metrics are estimates without verdicts.
    """
    base = baseline(analysis)
    rest = others(analysis)
    table = Table(title=f"shootout: {' vs '.join(c.display for c in analysis.configs)} (baseline: {base.display})")
    table.add_column("workload")
    table.add_column("metric")
    for cfg in analysis.configs:
        table.add_column(f"median\n{cfg.display}", justify="right")
    for cfg in rest:
        table.add_column(f"{cfg.display}\nvs {base.display}", justify="right", no_wrap=True)
        table.add_column("verdict")
    table.add_column("flags")

    rows = metric_rows(analysis)
    shown = [row for row in rows if all_metrics or row.headline]
    for row in shown:
        medians = row_medians(analysis, row)
        arrow = "\u2191" if row.direction == "higher" else "\u2193"
        metric = f"{row.metric} {arrow}{' *' if row.headline else ''}"
        cells: list[Text | str] = [row.workload, metric]
        cells += [fmt_value(medians.get(cfg.name), row.unit) for cfg in analysis.configs]
        by_config = {c.config: c for c in row.comparisons}
        notes: list[str] = []
        for cfg in rest:
            comp = by_config.get(cfg.name)
            if comp is None:
                cells += ["\u2014", "\u2014"]
                continue
            cells += [fmt_estimate(comp.estimate), verdict_text(comp.verdict)]
            notes += [n for n in notes_of(comp) if n not in notes]
        cells.append(Text("\n".join(notes), style="magenta") if notes else "")
        table.add_row(*cells)

    summaries = {s.config: s for s in iter_summaries(analysis)}
    if summaries:
        table.add_section()
        n = max(geomean_workload_count(analysis, s) for s in summaries)
        cells = ["geomean", workloads(n), *[""] * len(analysis.configs)]
        for cfg in rest:
            s = summaries.get(cfg.name)
            cells += _geomean_cells(s.geomean if s else None, analysis.threshold)
        table.add_row(*cells, "", style="bold")
        categories = sorted({cat for s in summaries.values() for cat in s.by_category})
        if len(categories) > 1:
            for cat in categories:
                cells = ["geomean", cat, *[""] * len(analysis.configs)]
                for cfg in rest:
                    s = summaries.get(cfg.name)
                    cells += _geomean_cells(s.by_category.get(cat) if s else None, analysis.threshold)
                table.add_row(*cells, "", style="dim")

    caption = [
        ("speed-up = performance of the configuration / baseline (>1: faster), "
        f"{_confidence(analysis)}% CI; threshold \u00b1{analysis.threshold * 100:g}%"),
        "\u2191 higher is better, \u2193 lower is better; * headline metric (one per workload in the geomean)",
    ]
    caption += rule_lines(analysis)
    if len(shown) < len(rows):
        caption.append(f"{len(rows) - len(shown)} sub-metrics not shown (shootout show --all): "
                       "estimates with intervals, no verdicts")
    if analysis.noise_floor is not None:
        caption.append(f"noise floor on this machine (A/A): \u00b1{analysis.noise_floor * 100:.1f}%")
    caption += all_notes(analysis)
    if any(not c.paired for c in analysis.comparisons) and not any(
            "unpaired" in n or WITHIN_RUN in n for n in analysis.notes):
        caption.append("unpaired comparison: intervals include drift between the runs")
    table.caption = "\n".join(caption)
    return table


def _confidence(analysis: Analysis) -> int:
    for comp in analysis.comparisons:
        if comp.estimate is not None:
            return round(comp.estimate.confidence * 100)
    return round(analysis.runs[0].settings.confidence * 100) if analysis.runs else 95
