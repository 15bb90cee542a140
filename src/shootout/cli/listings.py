"""`shootout workloads` and `shootout experiments`: a line each, or one item's details by name
(main.py registers them). Both fit 80 columns: long texts wrap at words in the details, and
the lists hold only what fits a line."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from shootout.base.errors import UsageError
from shootout.cli.consoles import console, say
from shootout.cli.stored import DbOption, open_store

MARKS = "root = needs root, even on the host; slow = trials of 10 s or more"


def _listing(*columns: str) -> Table:
    """A table of one line per item: no box, no column wraps (what does not fit is left out)."""
    table = Table(*columns, box=None, pad_edge=False, show_edge=False, header_style="bold")
    for column in table.columns:
        column.no_wrap = True
    return table


def _say(label: str, text: str) -> None:
    """'label: text', indented, wrapped at words."""
    say(f"{label}: {text}", indent=2)


def _marks(cls) -> str:
    return " ".join(mark for mark, why in (("root", cls.needs_root), ("slow", cls.slow)) if why)


def workloads(name: Annotated[Optional[str], typer.Argument(help="a workload: its metrics and details")] = None) -> None:
    """The catalogue: a line per workload (its headline metric, root and slow marks), then the suites."""
    from shootout.base.units import unit
    from shootout.workloads.catalogue import DEFAULT_SUITE, REGISTRY, suites

    if name is not None:
        return _workload(name)
    table = _listing("workload", "category", "headline metric", "marks")
    for key, cls in REGISTRY.items():
        head = cls.spec.metric(cls.spec.headline)
        table.add_row(key, cls.spec.category, f"{head.name} ({head.unit}, {unit(head.unit).direction})", _marks(cls))
    console.print(table)
    say(f"marks: {MARKS}")
    for suite, members in suites().items():
        if suite not in {cls.spec.category for cls in REGISTRY.values()}:
            say(f"suite {suite}{' (the default)' if suite == DEFAULT_SUITE else ''}: {', '.join(members)}")
    say("each category is a suite too; details: shootout workloads NAME")


def _workload(name: str) -> None:
    from shootout.base.units import unit
    from shootout.workloads.catalogue import REGISTRY, suites

    cls = REGISTRY.get(name)
    if cls is None:
        raise UsageError(f"unknown workload {name!r}", "list them with: shootout workloads")
    spec = cls.spec
    console.print(f"{name} ({spec.category})", style="bold", highlight=False)
    _say("measures", spec.description)
    _say("reproduces", spec.reproduces)
    for mark, why in (("needs root", cls.needs_root), ("slow", cls.slow)):
        if why:
            _say(mark, why)
    _say("suites", ", ".join(s for s, members in suites().items() if name in members))
    table = Table("metric", "unit", "better", "what", box=None, pad_edge=False, header_style="bold")
    for column in table.columns[:3]:
        column.no_wrap = True
    for m in spec.metrics:
        table.add_row(m.name + (" *" if m.name == spec.headline else ""), m.unit, unit(m.unit).direction, m.description)
    console.print(table)
    say("* headline metric (its verdict is the workload's; counted in the suite geomean)")


def experiments(name: Annotated[Optional[str], typer.Argument(help="an experiment: its write-up, sizes and time "
                                                                    "here (also: show NAME)", show_default=False)] = None,
                shown: Annotated[Optional[str], typer.Argument(help="after show: the experiment", show_default=False)] = None,
                toml: Annotated[bool, typer.Option("--toml", help="print it as a run file for shootout run --file")] = False,
                size: Annotated[str, typer.Option(metavar="default|writeup", help="with --toml: 'default' (its own sizes) or 'writeup' (the write-up's)")] = "default",
                db: DbOption = None) -> None:
    """The named experiments, a line each: each reproduces a published comparison with one command."""
    from shootout.experiments import EXPERIMENTS, experiment
    from shootout.experiments.limits import span

    if name == "show":  # `experiments show NAME`, the same as `experiments NAME`
        if shown is None:
            raise UsageError("experiments show needs an experiment", "list them with: shootout experiments")
        name, shown = shown, None
    if shown is not None:
        raise UsageError(f"experiments takes one name, not {name!r} and {shown!r}", "e.g. shootout experiments show rpi64")
    if name is None and (toml or size != "default"):
        raise UsageError("--toml and --size need an experiment", "e.g. shootout experiments show rpi64 --toml")
    if name is not None:
        return _experiment(experiment(name), db, toml, size)
    rows = [(key, ", ".join(item.sections), "root" if item.needs_root else "", span(item),
             span(item, "writeup") if item.cuts else "same", item.title) for key, item in EXPERIMENTS.items()]
    table = _listing("experiment", "write-up", "root", "time", "full size", "what")
    for column, cells in zip(table.columns[:-1], zip(*rows)):  # only the last column is cut to fit
        column.min_width = max(len(column.header), *map(len, cells))  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*row)
    console.print(table)
    say("write-up: sections of docs/writeups.md; root = every configuration needs root")
    say("time: from its first verdict to its limit here (2 cores); full size: the same with --size writeup, at "
        "the write-up's own sizes (same: nothing is cut); * estimated from the workloads' scaling, not measured")
    say("details, sizes and the time here: shootout experiments NAME; as a run file: shootout experiments show "
        "NAME --toml")


def _experiment(item, db: str | None, toml: bool = False, size: str = "default") -> None:
    from shootout.conditions.machinefacts import machine_id
    from shootout.experiments.limits import how_long, last_run
    from shootout.request.settings import check_size

    check_size(size, item.name)
    if toml:
        from shootout.experiments.runfile import run_file

        print(run_file(item, size), end="")  # plain: a file to redirect, never wrapped or styled
        return None
    if size != "default":
        raise UsageError("--size goes with --toml here", f"shootout experiments show {item.name} --toml --size {size}")
    store = open_store(db)
    runs = store.list_runs()
    last = last_run(runs, lambda i: store.trials(i, include_warmup=True), item.name, machine_id())
    last_writeup = last_run(runs, lambda i: store.trials(i, include_warmup=True), item.name, machine_id(), "writeup")
    console.print(f"{item.name}: {item.title}", style="bold", highlight=False)
    _say("what", item.description)
    _say("reproduces", item.reproduces)
    _say("the write-up's figures", item.cited)
    if item.needs_root:
        _say("needs root", item.needs_root)
    _say("run", f"shootout run --experiment {item.name}" + (" (--size writeup: the write-up's sizes)" if item.cuts else ""))
    _say("as a run file", f"shootout experiments show {item.name} --toml")
    for line in how_long(item, last, last_writeup):
        say(line, indent=2)
