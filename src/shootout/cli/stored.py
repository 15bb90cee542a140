"""The commands on stored runs: show, runs, export, import, compare, report (main.py registers them)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from shootout.base.errors import UsageError
from shootout.cli.consoles import console

if TYPE_CHECKING:
    from shootout.base.model import Run

DbOption = Annotated[Optional[str], typer.Option("--db", help="database URL (default: SQLite in the data directory)")]
RunArg = Annotated[str, typer.Argument(help="run id, or 'last' for the newest run")]
WideOption = Annotated[bool, typer.Option("--wide", help="the wide table (medians per configuration, flags) whatever the width")]


def open_store(db: str | None):
    from shootout.store import Store

    return Store(db)


def analysis_of(store, stored):
    from shootout.configs.groups import grouped
    from shootout.judge.analysis import analyze
    from shootout.judge.groupscompare import analyze_groups
    from shootout.judge.noisefloor import load_noise_floor

    floor = None
    if not stored.settings.aa and stored.facts.machine_id:
        floor = (load_noise_floor(store, stored.facts.machine) or {}).get("halfwidth")
    analysis = analyze(stored, store.trials(stored.id), noise_floor=floor)
    if grouped(stored):  # groups of machines: the machines are the units (groups.py)
        analysis = analyze_groups(stored, store.trials(stored.id))
    if stored.settings.experiment:
        from shootout.experiments import EXPERIMENTS

        if (named := EXPERIMENTS.get(stored.settings.experiment)) is not None:
            analysis = dataclasses.replace(analysis, explanation=tuple(named.explain(analysis)))
    return analysis


def show_analysis(store, ref: str, as_json: bool, all_metrics: bool = False, wide: bool = False):
    from shootout.report.jsondata import show_rows
    from shootout.report.terminal import show

    analysis = analysis_of(store, store.get_run(ref))
    if as_json:  # a refused run too: its rows say "refused" and why
        print(json.dumps(show_rows(analysis), indent=2))
    else:
        show(analysis, console, all_metrics, wide)
    return analysis


def show_run(ref: RunArg = "last", json_out: Annotated[bool, typer.Option("--json", help="print the rows as JSON (every metric)")] = False,
             all_metrics: Annotated[bool, typer.Option("--all", help="also the sub-metrics, as estimates without verdicts")] = False,
             wide: WideOption = False, db: DbOption = None) -> None:
    """Verdicts per workload: speed-up of its headline metric over the baseline with its interval, verdict, flags; then the geomean.

    Fits the width it has (80 columns, and a pipe or a file: speed-ups and verdicts, a row a
    line; wider: medians too); --wide: the wide table, into a pipe as plain lines.
    """
    show_analysis(open_store(db), ref, json_out, all_metrics, wide)


def runs(db: DbOption = None) -> None:
    """List stored runs, newest first: a line a run, its configurations and workloads under it."""
    import datetime as dt

    from shootout.cli.consoles import say

    store = open_store(db)
    listed = store.list_runs()
    if not listed:
        console.print("no runs yet (start one: shootout run)")
    for r in listed:
        started = dt.datetime.fromtimestamp(r.created_at).strftime("%Y-%m-%d %H:%M")
        console.print(f"{r.id:>4}  {started}  {r.status}  {store.trial_count(r.id)} trials", highlight=False, markup=False)
        for what, names in (("configurations", [c.name for c in r.configs]), ("workloads", [w.name for w in r.workloads])):
            say(f"{what}: {', '.join(names)}", indent=6)  # wrapped between names, never inside one


def export_run(ref: RunArg, format: Annotated[str, typer.Option("--format", help="json or csv")] = "json",
               out: Annotated[Optional[Path], typer.Option("--out", "-o", help="file to write (default: stdout)")] = None,
               db: DbOption = None) -> None:
    """Write a run with every raw trial, its plan, seed and facts (JSON), or one row per value (CSV)."""
    format = format.strip().lower()
    store = open_store(db)
    run_id = store.get_run(ref).id
    if format == "json":
        text = json.dumps(store.export_run(run_id), indent=1)
    elif format == "csv":
        text = store.export_csv(run_id)
    else:
        raise UsageError(f"unknown format {format!r}", "use --format json or --format csv")
    if out:
        out.write_text(text)
    else:
        sys.stdout.write(text)


def import_run(path: Annotated[Path, typer.Argument(help="shootout JSON, Phoronix composite.xml or hyperfine JSON")],
               db: DbOption = None) -> None:
    """Store results from a file as a new run."""
    from shootout.importers import load_results

    store = open_store(db)
    run_id = store.import_run(load_results(path))
    console.print(f"imported {path} as run {run_id}")


def _named_once(runs: list[Run]) -> list[Run]:
    """The runs of a comparison, each once: a run compared with itself ("1 1", "1 last") says nothing."""
    seen: set[int] = set()
    for run in runs:
        if run.id in seen:
            raise UsageError(f"compare: run {run.id} is named twice, and a run compared with itself says nothing",
                             "compare it with another run, e.g. shootout compare "
                             f"{run.id} {run.id - 1 if run.id > 1 else run.id + 1}")
        seen.add(run.id)
    return runs


def compared(store, refs: list[str], by_label: bool):
    """The analysis of `compare` and of a multi-run `report`: REFS, or SIDE vs SIDE."""
    from shootout.judge.crossrun import (
        compare_members,
        members_by_label,
        members_by_run,
        members_by_side,
    )

    if "vs" in refs:
        cut = refs.index("vs")
        sides = [refs[:cut], refs[cut + 1:]]
        if not all(sides) or "vs" in sides[1]:
            raise UsageError("compare: 'vs' needs runs on both sides", "e.g. shootout compare 3 5 vs 7 9")
        by_side = [[store.get_run(ref) for ref in side] for side in sides]
        _named_once([run for side in by_side for run in side])
        return compare_members(members_by_side([[(run, store.trials(run.id)) for run in side] for side in by_side]))
    if len(refs) < 2:
        raise UsageError("compare needs at least two runs", "e.g. shootout compare 3 7, or 3 5 vs 7 9")
    runs = _named_once([store.get_run(r) for r in refs])
    trials = [store.trials(r.id) for r in runs]
    return compare_members((members_by_label if by_label else members_by_run)(runs, trials))


def compare(refs: Annotated[list[str], typer.Argument(help="runs to compare: 3 7, or two sides: 3 5 vs 7 9")],
            by_label: Annotated[bool, typer.Option("--by-label", help="pool runs whose configurations share a label")] = False,
            all_metrics: Annotated[bool, typer.Option("--all", help="also the sub-metrics, as estimates without verdicts")] = False,
            db: DbOption = None) -> None:
    """Compare stored runs (unpaired). With two or more runs per side the intervals include run-to-run drift."""
    from shootout.report.terminal import show

    show(compared(open_store(db), refs, by_label), console, all_metrics)


def report(refs: Annotated[list[str], typer.Argument(help="one run, or several to compare (3 5 vs 7 9)")] = ["last"],
           format: Annotated[str, typer.Option("--format", help="html, md (or markdown), png or svg")] = "html",
           out: Annotated[Path, typer.Option("--out", help="directory to write into")] = Path("shootout-report"),
           price: Annotated[list[str], typer.Option("--price", help="CONFIG=PRICE for performance per dollar (repeatable; default: the prices given to run --price)")] = [],
           price_unit: Annotated[Optional[str], typer.Option(help="what a price is, e.g. '$/h' or '$' (default: the run's, else $/h)")] = None,
           all_metrics: Annotated[bool, typer.Option("--all", help="a chart panel for every metric, not only each workload's headline")] = False,
           db: DbOption = None) -> None:
    """Write a report people would rather look at: charts with CI whiskers, HTML or Markdown."""
    from shootout.report.files import write_report
    from shootout.report.perdollar import stored_prices
    from shootout.request.prices import parse_prices

    store = open_store(db)
    analysis = analysis_of(store, store.get_run(refs[0])) if len(refs) == 1 else compared(store, refs, False)
    prices, unit = parse_prices(price, [c.name for c in analysis.configs]), price_unit or "$/h"
    if not prices and (stored := stored_prices(analysis)) is not None:
        prices, unit = stored[0], price_unit or stored[1]
    for path in write_report(analysis, out, format, prices=prices or None, price_unit=unit,
                             all_metrics=all_metrics):
        console.print(f"wrote {path}")


