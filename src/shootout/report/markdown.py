"""Blog-ready Markdown referencing PNG charts beside it."""

from __future__ import annotations

from shootout.judge.analysis import Analysis
from shootout.measure.lostconfigs import lost_lines
from shootout.report import amountstable as amounts
from shootout.report import sides, why
from shootout.report.whychart import WHY_KEY
from shootout.report import charts
from shootout.report.amountstable import amount_table
from shootout.report.facts import config_facts, machine_facts
from shootout.report.html import method_items, subtitle
from shootout.report.lostworkloads import lost_notices
from shootout.report.perdollar import per_dollar, speed_text
from shootout.report.text import (
    all_notes,
    all_rows,
    baseline,
    capitalized,
    change_phrase,
    direction_text,
    display,
    fmt_comparison,
    fmt_estimate,
    fmt_ratio,
    fmt_ratio_interval,
    fmt_suite,
    fmt_value,
    geomean_workload_count,
    interval_legend,
    iter_summaries,
    notes_by_comparison,
    notes_of,
    others,
    row_medians,
    rows_by_workload,
    speed_legend,
    suite_word,
    summary_sentence,
    workload_description,
    workloads,
)
from shootout.report.timeline import TIMELINE_KEY
from shootout.stats import Verdict


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _results(analysis: Analysis) -> list[str]:
    base = baseline(analysis)
    rest = others(analysis)
    header = ["Workload", "Metric"] + [c.display for c in analysis.configs]
    header += [f"{c.display} vs {base.display}" for c in rest] + ["Notes"]
    align = ["l", "l"] + ["r"] * len(analysis.configs) + ["l"] * len(rest) + ["l"]
    rows = []
    for mrow in all_rows(analysis):  # a run of one configuration: its medians
        medians = row_medians(analysis, mrow)
        star = " \u2605" if mrow.headline else ""
        row = [mrow.workload, f"{mrow.metric} ({mrow.unit}, {direction_text(mrow.direction)}){star}"]
        row += [fmt_value(medians.get(c.name), mrow.unit) for c in analysis.configs]
        by_config = {c.config: c for c in mrow.comparisons}
        for cfg in rest:
            found = by_config.get(cfg.name)
            row.append(f"{fmt_comparison(found)} **{found.verdict}**" if found else "\u2014")
        # each comparison's notes on a row of its own, named where the row compares several
        cells = [(f"{name}: " if name else "") + "; ".join(f"\u26a0 {n}" for n in notes)
                 for name, notes in notes_by_comparison(mrow, rest)] or [""]
        rows.append(row + cells[:1])
        rows += [[""] * (len(row)) + [more] for more in cells[1:]]
    summaries = {s.config: s for s in iter_summaries(analysis)}
    if summaries:
        n = max(geomean_workload_count(analysis, name) for name in summaries)
        row = [f"**geomean** ({workloads(n)})", "headline metrics"] + [""] * len(analysis.configs)
        for cfg in rest:
            est = summaries[cfg.name].geomean if cfg.name in summaries else None
            judged = suite_word(est, summaries[cfg.name].verdict) if cfg.name in summaries else None
            word = f" {judged}" if judged else ""
            row.append(f"**{fmt_suite(est, summaries.get(cfg.name))}{word}**")
        rows.append(row + [""])
        categories = sorted({cat for s in summaries.values() for cat in s.by_category})
        if len(categories) > 1:
            for cat in categories:
                row = [f"geomean: {cat}", "headline metrics"] + [""] * len(analysis.configs)
                for cfg in rest:
                    est = summaries[cfg.name].by_category.get(cat) if cfg.name in summaries else None
                    judged = summaries[cfg.name].category_verdicts.get(cat) if cfg.name in summaries else None
                    row.append(f"{fmt_estimate(est)} {judged or Verdict.INCONCLUSIVE}")
                rows.append(row + [""])
    return _table(header, align, rows)


def _amounts(analysis: Analysis) -> list[str]:
    table = amount_table(analysis)
    rows = [[r.workload, r.amount, *(str(c) if c else "\u2014" for c in r.cells), r.description] for r in table.rows]
    return [f"## {amounts.TITLE}", "", amounts.INTRO, "",
            *_table(["Workload", "Amount", *table.columns, "What"],
                    ["l", "l", *["r"] * len(table.columns), "l"], rows)]


def _why(analysis: Analysis, chart_names: dict[str, str]) -> list[str]:
    lines = why.why_lines(analysis)
    if not lines:
        return []
    chart = ["", f"![The counters' ratios per workload, log scale]({chart_names[WHY_KEY]})"] if WHY_KEY in chart_names else []
    return [f"## {why.TITLE}", "", f"{capitalized(why.INTRO)}.", "", *(f"- {line}" for line in lines), *chart]


def _facts(analysis: Analysis) -> list[str]:
    table = config_facts(analysis)
    machine = machine_facts(analysis)
    lines = []
    for i, column in enumerate(machine.columns):
        values = "; ".join(f"{key}: {vals[i]}" for key, vals, _ in machine.rows if vals[i] != "\u2014")
        lines += [f"**{column.capitalize()}**: {values}.", ""]
    if not table.rows:
        return lines + ["No facts were recorded for the configurations."]
    if table.differing:
        lines += [f"Facts that differ between the configurations (marked \u2260): {', '.join(table.differing)}.", ""]
    else:
        lines += ["No recorded fact differs between the configurations.", ""]
    rows = [[f"\u2260 **{key}**" if differs else key] + list(values) for key, values, differs in table.rows]
    return lines + _table(["Fact", *table.columns], ["l"] * (1 + len(table.columns)), rows)


def _per_dollar(analysis: Analysis, prices: dict[str, float], price_unit: str) -> list[str]:
    listed = ", ".join(f"{c.display} {prices[c.name]:g} {price_unit}" for c in analysis.configs)
    lines = [f"## Performance per {price_unit}", "",
             (f"Prices: {listed}. Performance per price relative to {baseline(analysis).display} = "
             "speed-up \u00f7 price ratio; the interval scales with it."), ""]
    rows = []
    for r in per_dollar(analysis, prices, price_unit):
        ppp = "n/a" if r["perf_per_price"] is None else fmt_ratio_interval(r["perf_per_price"], r["ppp_low"],
                                                                          r["ppp_high"])
        rows.append([r["workload"], display(analysis, r["config"]), speed_text(r), fmt_ratio(r["price_ratio"]), ppp])
    return lines + _table(["Workload", "Configuration", "Speed-up", "Price ratio", "Performance per price"],
                          ["l", "l", "r", "r", "r"], rows)


def render_markdown(
    analysis: Analysis,
    chart_names: dict[str, str],
    prices: dict[str, float] | None = None,
    price_unit: str = "$",
) -> str:
    """The report as Markdown; `chart_names` maps charts.SUMMARY_KEY and workload names to
    image files (relative paths) written beside it. Charts not in the mapping are left out."""
    base = baseline(analysis)
    lines = [f"# shootout: {' vs '.join(c.display for c in analysis.configs)}", "", f"*{subtitle(analysis)}*", ""]
    lines += [f"**{summary_sentence(analysis, s)}**" for s in iter_summaries(analysis)]
    lines += [f"> {line}" for line in lost_lines(analysis.lost, "Not compared")]
    lines += [f"> **{line}**" for line in lost_notices(analysis)]
    lines += [f"> During the run: {line}" for line in analysis.conditions]
    lines += [f"> {note}" for note in all_notes(analysis)]
    if brought := sides.side_lines(analysis):
        lines += ["", f"## {sides.TITLE}", "", *(f"- {line}" for line in brought)]
    if analysis.explanation:
        lines += ["", "## Beside the write-up", "", *(f"- {line}" for line in analysis.explanation)]
    if charts.SUMMARY_KEY in chart_names:
        lines += ["", (f"![Speed-up against {base.display} of every workload, log scale, with its interval]"
                      f"({chart_names[charts.SUMMARY_KEY]})")]
    lines += ["", "## Results", ""]
    lines += _results(analysis)
    nf = "" if analysis.noise_floor is None else (
        f" Noise floor of this machine (A/A): \u00b1{analysis.noise_floor * 100:.1f}%.")
    lines += ["", (f"{capitalized(speed_legend(analysis))}. {capitalized(interval_legend(analysis))}. "
                  f"\u2605 headline metric (one per workload in the geomean).{nf}")]
    if said := _why(analysis, chart_names):
        lines += [""] + said
    if analysis.amounts:
        lines += [""] + _amounts(analysis)
    if prices:
        lines += [""] + _per_dollar(analysis, prices, price_unit)
    lines += ["", "## Workloads"]
    for rows in rows_by_workload(analysis).values():
        mrow = rows[0]
        spec = mrow.spec
        lines += ["", f"### {mrow.workload}" + (f" ({spec.category})" if spec else ""), ""]
        if desc := workload_description(analysis, spec, mrow.workload):
            lines += [desc, ""]
        if mrow.workload in chart_names:
            lines += [(f"![{mrow.workload}: median per configuration, bars from zero, 95% CI of the median]"
                      f"({chart_names[mrow.workload]})"), ""]
        for r in rows:
            for comp in r.comparisons:
                notes = "".join(f" \u26a0 {n}." for n in notes_of(comp))
                lines.append(f"- {r.metric}: {change_phrase(comp, analysis)}.{notes}")
    lines += ["", "## Conditions", ""] + _facts(analysis)
    if TIMELINE_KEY in chart_names:
        lines += ["", (f"![During the run: clock, temperature, steal and throttling as each machine's monitor "
                       f"sampled them]({chart_names[TIMELINE_KEY]})")]
    lines += ["", "## Method", ""] + [f"- {item}" for item in method_items(analysis)]
    return "\n".join(lines) + "\n"
