"""What `shootout show` prints: verdicts that fit the terminal, or plain lines for a file.

Layouts, chosen from the width the output has (never by truncating cells):
- wide enough for it: the wide table (medians per configuration, speed-up, verdict and
  flags per other configuration);
- narrower (80 columns, and a pipe or a file, where the width is 80): the compact table
  (speed-up and verdict, a row a line), its flags and confounders as numbered notes under it;
  the sentences under it wrapped at words;
- `wide` (show --wide): the wide table whatever the width; into a pipe or a file as plain
  lines, every cell whole.
Into a pipe or a file there is no colour and no box.
By default one row per workload: its headline metric, the only kind with a verdict;
`all_metrics` adds the sub-metrics, estimates with intervals and no verdict.
Machine-wide conditions come first; after the table the summary sentence, a named
experiment's comparison with its write-up, then the legend (the rule behind the verdict
intervals, notes such as what is compared or what the geomean leaves out). Last, when the
run recorded amounts (tabs lost, stall time: report/amountstable.py), their table: on a narrow
terminal one line per amount and configuration, without the descriptions.
"""

from __future__ import annotations

import io

from rich import box
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from shootout.base.model import Config
from shootout.judge.analysis import WITHIN_RUN, Analysis
from shootout.measure.lostconfigs import lost_lines, lost_sentence
from shootout.measure.roundplan import said as planned_rounds
from shootout.report import amountstable as amounts
from shootout.report import sides, why
from shootout.report.amountstable import AmountTable, amount_table
from shootout.report.lostworkloads import lost_notices
from shootout.report.perdollar import price_lines, stored_prices
from shootout.report.text import (
    MetricRow,
    all_notes,
    all_rows,
    baseline,
    fmt_comparison,
    fmt_suite,
    fmt_value,
    geomean_workload_count,
    interval_legend,
    iter_summaries,
    notes_by_comparison,
    one_side_rows,
    others,
    overrides_lines,
    row_medians,
    rule_lines,
    speed_legend,
    suite_word,
    summary_sentence,
    workloads,
)
from shootout.stats import Estimate, Verdict

VERDICT_STYLE = {
    Verdict.FASTER: "bold green",
    Verdict.SLOWER: "bold red",
    Verdict.SAME: "cyan",
    Verdict.INCONCLUSIVE: "yellow",
    Verdict.ESTIMATE: "dim",
    Verdict.BETTER: "bold green",
    Verdict.WORSE: "bold red",
    Verdict.NOT_JUDGED: "magenta",
}
DASH = "\u2014"


def verdict_text(v: Verdict | None) -> Text:
    """A verdict in its colour ("estimate" for a sub-metric); empty where there is none."""
    return Text("") if v is None else Text(str(v), style=VERDICT_STYLE[v])


def _geomean_verdict(est: Estimate | None, judged: Verdict | None) -> Text:
    # No geomean (no workload has an interval yet): no suite verdict either, unless not judged.
    return verdict_text(suite_word(est, judged))


def shown_rows(analysis: Analysis, all_metrics: bool) -> list[MetricRow]:
    """Every metric, or one per workload: its headline (or, if the run has none, its first
    metric, which shows as an estimate without a verdict)."""
    rows = all_rows(analysis)
    if all_metrics:
        return rows
    picked: dict[str, MetricRow] = {}
    for row in rows:
        if row.workload not in picked or row.headline and not picked[row.workload].headline:
            picked[row.workload] = row
    return list(picked.values())


def _metric_label(row: MetricRow, all_metrics: bool) -> str:
    arrow = "\u2191" if row.direction == "higher" else "\u2193"
    return f"{row.metric} {arrow}{' *' if row.headline and all_metrics else ''}"


def _notes(row: MetricRow, configs: list[Config], plain: bool) -> list[str]:
    """One cell per comparison with notes: 'openvpn-aes: cv>10%' where the row compares several."""
    sep = "; " if plain else "\n"
    return [(f"{name}: " if name else "") + sep.join(notes) for name, notes in notes_by_comparison(row, configs)]


def _stack(cell: str, stacked: bool) -> str:
    """A figure with its interval on a line of its own, where a row of 80 columns needs it."""
    return cell.replace(" [", "\n[", 1) if stacked else cell


def _comparison_cells(row: MetricRow, configs: list[Config], stacked: bool = False) -> list[Text | str]:
    by_config = {c.config: c for c in row.comparisons}
    cells: list[Text | str] = []
    for cfg in configs:
        comp = by_config.get(cfg.name)
        cells += [DASH, DASH] if comp is None else [_stack(fmt_comparison(comp), stacked), verdict_text(comp.verdict)]
    return cells


def _geomean_rows(table: Table, analysis: Analysis, configs: list[Config], lead: int, tail: int,
                  stacked: bool = False) -> None:
    """The suite geomean (and per category) under the metric rows; `lead` empty cells after the
    label pair, `tail` after the comparison cells."""
    summaries = {s.config: s for s in iter_summaries(analysis)}
    if not summaries:
        return
    table.add_section()
    n = max(geomean_workload_count(analysis, s) for s in summaries)
    lines = [("geomean", workloads(n), "bold", lambda s: (s.geomean, s.verdict))]
    categories = sorted({cat for s in summaries.values() for cat in s.by_category})
    if len(categories) > 1:
        lines += [("geomean", cat, "dim", lambda s, cat=cat: (s.by_category.get(cat), s.category_verdicts.get(cat)))
                  for cat in categories]
    for label, what, style, pick in lines:
        cells: list[Text | str] = [label, what, *[""] * lead]
        for cfg in configs:
            est, judged = pick(summaries[cfg.name]) if cfg.name in summaries else (None, None)
            cells += [_stack(fmt_suite(est, summaries.get(cfg.name)), stacked), _geomean_verdict(est, judged)]
        table.add_row(*cells, *[""] * tail, style=style)


def wide_table(analysis: Analysis, rows: list[MetricRow], all_metrics: bool = True, plain: bool = False) -> Table:
    """Medians per configuration, then speed-up and verdict per other configuration, then flags.

    Speed-ups are of each configuration over the baseline (>1: that configuration is
    faster), whatever the metric's direction.
    """
    base, rest = baseline(analysis), others(analysis)
    table = Table(box=None if plain else box.HEAVY_HEAD, pad_edge=not plain)
    table.add_column("workload", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    for cfg in analysis.configs:
        table.add_column(f"median\n{cfg.display}", justify="right", no_wrap=True)
    for cfg in rest:
        table.add_column(f"{cfg.display}\nvs {base.display}", justify="right", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
    table.add_column("flags", no_wrap=plain)
    for row in rows:
        medians = row_medians(analysis, row)
        notes = _notes(row, rest, plain) or [""]
        table.add_row(row.workload, _metric_label(row, all_metrics),
                      *[fmt_value(medians.get(cfg.name), row.unit) for cfg in analysis.configs],
                      *_comparison_cells(row, rest), Text(notes[0], style="magenta"))
        for more in notes[1:]:  # each comparison's flags on a row of their own
            table.add_row(*[""] * (2 + len(analysis.configs) + 2 * len(rest)), Text(more, style="magenta"))
    _geomean_rows(table, analysis, rest, lead=len(analysis.configs), tail=1)
    return table


def compact_table(analysis: Analysis, rows: list[MetricRow], configs: list[Config],
                  all_metrics: bool, plain: bool = False, stacked: bool = False) -> tuple[Table, list[str]]:
    """Speed-up and verdict only, for 80 columns; flags become numbered notes (returned).
    The baseline is named in the title line above, so a column says only what it compares; a
    table of one configuration names it in its own title, its column only "vs baseline"."""
    one = configs[0].display if len(configs) == 1 else None
    table = Table(box=None if plain else box.SIMPLE_HEAD, pad_edge=False, title=one and f"{one}:",
                  title_justify="left", title_style="bold")
    # Names break over lines rather than lose their end when even this does not fit.
    table.add_column("workload", overflow="fold")
    table.add_column("metric", overflow="fold")
    for cfg in configs:
        table.add_column("vs baseline" if one else f"{cfg.display}\nvs baseline", justify="right", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
    table.add_column("", justify="right", no_wrap=True)  # the number of the row's note
    notes: list[str] = []
    previous = None
    for row in rows:
        first = len(notes) + 1
        for name, found in notes_by_comparison(row, configs):
            notes.append(f"{row.workload} {row.metric}{f' ({name})' if name else ''}: {'; '.join(found)}")
        numbers = "" if len(notes) < first else str(first) if len(notes) == first else f"{first}-{len(notes)}"
        table.add_row("" if row.workload == previous else row.workload, _metric_label(row, all_metrics),
                      *_comparison_cells(row, configs, stacked), numbers)
        previous = row.workload
    _geomean_rows(table, analysis, configs, lead=0, tail=1, stacked=stacked)
    return table, notes


def _width(console: Console, renderable: RenderableType) -> int:
    return Measurement.get(console, console.options.update(width=10_000), renderable).maximum


def _legend(analysis: Analysis, rows: list[MetricRow], all_metrics: bool) -> list[str]:
    compared = [speed_legend(analysis), interval_legend(analysis)]
    if one_side_rows(analysis):
        compared = [("one configuration: the medians of its rounds; nothing compared, so no speed-ups or verdicts "
                     "(give a second -c for them)")]
    lines = [*compared, "\u2191 higher is better, \u2193 lower is better"]
    hidden = len(all_rows(analysis)) - len(rows)
    if all_metrics:
        lines.append("* headline metric (one per workload in the geomean, the only ones with verdicts); "
                     "the others are estimates with intervals")
        lines += timing_lines(analysis)
    elif hidden:
        lines.append(f"one headline metric per workload; {hidden} sub-metric{'s' if hidden > 1 else ''} not shown "
                     "(shootout show --all): estimates with intervals, no verdicts")
    lines += rule_lines(analysis)
    lines += [line for run in analysis.runs if (line := planned_rounds(run.settings))]
    if analysis.noise_floor is not None:
        lines.append(f"noise floor on this machine (A/A): \u00b1{analysis.noise_floor * 100:.1f}%")
    lines += all_notes(analysis)
    if any(not c.paired for c in analysis.comparisons) and not any(
            "unpaired" in n or WITHIN_RUN in n for n in analysis.notes):
        lines.append("unpaired comparison: intervals include drift between the runs")
    return lines


def timing_lines(analysis: Analysis) -> list[str]:
    """How each workload's headline is timed and why (WorkloadSpec.timing), for show --all."""
    return [f"{w.name}: {w.headline} is timed by {w.timing}" for w in analysis.workloads if w.timing]


def _title(analysis: Analysis) -> str:
    return (f"shootout: {' vs '.join(c.display for c in analysis.configs)} "
            f"(baseline: {baseline(analysis).display})")


def show(analysis: Analysis, console: Console, all_metrics: bool = False, wide: bool = False) -> None:
    """Print the verdicts in the layout that suits `console` (see the module docstring)."""
    rows = shown_rows(analysis, all_metrics)
    head = ([_title(analysis), *overrides_lines(analysis), *lost_lines(analysis.lost)] + lost_notices(analysis)
            + [f"during the run: {line}" for line in analysis.conditions])
    if analysis.refused:  # nothing measured: the refusal, not a table of "too few rounds"
        for line in head + [analysis.refused]:
            console.print(line, style="bold" if line == head[0] else "yellow", highlight=False, markup=False)
        return
    sentences = [summary_sentence(analysis, s) for s in iter_summaries(analysis)]
    if (lost := lost_sentence(analysis.lost)) is not None:
        sentences.append(lost)
    if others(analysis) and (stored := stored_prices(analysis)) is not None:
        sentences += price_lines(analysis, *stored)
    legend = _legend(analysis, rows, all_metrics)
    recorded = amount_table(analysis)
    plain = not console.is_terminal
    found = why.why_lines(analysis)
    said_why = ["", f"{why.TITLE}: {why.INTRO}", *found, ""] if found else []
    brought = sides.side_lines(analysis)
    said_sides = ["", f"{sides.TITLE}:", *brought] if brought else []
    if wide and plain:
        tail = [*sentences, *said_sides, *analysis.explanation, *said_why, *legend]
        console.file.write(plain_text(head, wide_table(analysis, rows, all_metrics, plain=True), tail))
        if recorded.rows:
            console.file.write(plain_text([f"{amounts.TITLE}: {amounts.INTRO}"], amounts_table(recorded, plain=True), []))
        return
    for line in head:
        console.print(line, style="bold" if line == head[0] else "yellow", highlight=False, markup=False)
    _print_tables(analysis, rows, console, all_metrics, wide)
    console.print()
    for lines, style in ((sentences, "bold"), (said_sides, ""), (analysis.explanation, ""), (said_why, ""),
                         (legend, "dim")):
        for line in lines:
            console.print(line, style=style, highlight=False, markup=False)
    if recorded.rows:
        console.print()
        console.print(f"{amounts.TITLE}: {amounts.INTRO}", highlight=False, markup=False)
        table = amounts_table(recorded, plain=plain)
        console.print(table if _width(console, table) <= console.width else narrow_amounts_table(recorded, plain))


def _print_tables(analysis: Analysis, rows: list[MetricRow], console: Console, all_metrics: bool, wide: bool) -> None:
    """The wide table where it fits (or where asked for: as wide as it is), else the compact
    one, else a compact table per configuration, each with its numbered notes."""
    plain = not console.is_terminal
    table = wide_table(analysis, rows, all_metrics, plain=plain)
    needs = _width(console, table)
    if needs <= console.width:
        console.print(table)
        return
    if wide:  # as wide as it is: a console of that width (one cannot print past its own)
        Console(file=console.file, width=needs, force_terminal=console.is_terminal,
                color_system=console.color_system).print(table)  # type: ignore[arg-type]
        return
    rest = others(analysis)
    tables = [compact_table(analysis, rows, rest, all_metrics, plain)]
    if _width(console, tables[0][0]) > console.width:  # one table per configuration then
        tables = [_one_side_compact(analysis, rows, cfg, all_metrics, console) for cfg in rest]
    for i, (compact, notes) in enumerate(tables):
        if i:
            console.print()
        console.print(compact)
        listed = Table.grid(padding=(0, 2))
        listed.add_column(justify="right")
        listed.add_column(style="magenta")
        for i, note in enumerate(notes, 1):
            listed.add_row(str(i), Text(note))
        console.print(listed)


def _one_side_compact(analysis: Analysis, rows: list[MetricRow], cfg: Config, all_metrics: bool,
                      console: Console) -> tuple[Table, list[str]]:
    """One configuration's compact table; its intervals under their figures where a line
    would not fit otherwise."""
    plain = not console.is_terminal
    table = compact_table(analysis, rows, [cfg], all_metrics, plain)
    if _width(console, table[0]) <= console.width:
        return table
    return compact_table(analysis, rows, [cfg], all_metrics, plain, stacked=True)


def amounts_table(recorded: AmountTable, *, plain: bool) -> Table:
    """Every configuration's recorded amounts side by side, with what each amount is."""
    table = Table(box=None if plain else box.SIMPLE_HEAD, pad_edge=not plain)
    table.add_column("workload", no_wrap=True)
    table.add_column("amount", no_wrap=True)
    for name in recorded.columns:
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("what", no_wrap=plain)
    for row in recorded.rows:
        table.add_row(row.workload, row.amount, *(DASH if c is None else str(c) for c in row.cells), row.description)
    return table


def narrow_amounts_table(recorded: AmountTable, plain: bool = False) -> Table:
    """For 80 columns: one line per amount and configuration, no descriptions; each
    workload's name on a line of its own above its amounts."""
    table = Table(box=None if plain else box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("amount", overflow="fold")
    table.add_column("config", overflow="fold")
    table.add_column("median", justify="right", no_wrap=True)
    table.add_column("interval", no_wrap=True)
    workload = None
    for row in recorded.rows:
        if row.workload != workload:
            table.add_row(Text(row.workload, style="bold"))
            workload = row.workload
        shown = [(name, c) for name, c in zip(recorded.columns, row.cells, strict=True) if c is not None]
        for i, (name, cell) in enumerate(shown):
            table.add_row(row.amount if i == 0 else "", name, cell.median, cell.interval)
    return table


def plain_text(head: list[str], table: Table, tail: list[str]) -> str:
    """Lines without colour, box or wrapping: as wide as the widest cell needs."""
    out = Console(file=io.StringIO(), width=10_000, color_system=None, record=True)
    out.print(table)
    body = [line.rstrip() for line in out.export_text().splitlines()]
    return "\n".join([*head, "", *body, "", *tail]) + "\n"


def show_table(analysis: Analysis, all_metrics: bool = False) -> Table:
    """The wide table of the headline metrics (every metric with all_metrics), with the legend
    as its caption (for reports and tests)."""
    rows = shown_rows(analysis, all_metrics)
    table = wide_table(analysis, rows, all_metrics)
    table.title = _title(analysis)
    table.caption = "\n".join(_legend(analysis, rows, all_metrics))
    return table
