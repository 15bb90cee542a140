"""The `shootout` command."""

from __future__ import annotations

import dataclasses
import gc
import json
import signal
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

from shootout.cli.userspace import app as userspace_app
from shootout.errors import ShootoutError, UsageError
from shootout.model import RunSettings

app = typer.Typer(help="Compare machine configurations honestly: paired, interleaved rounds with confidence intervals.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
console = Console()
err_console = Console(stderr=True)

DbOption = Annotated[Optional[str], typer.Option("--db", help="database URL (default: SQLite in the data directory)")]
RunArg = Annotated[str, typer.Argument(help="run id, or 'last' for the newest run")]


def _store(db: str | None):
    from shootout.store import Store

    return Store(db)


def _interrupt(signum: int, frame: object) -> None:
    from shootout.runner import Interrupted

    raise Interrupted(signal.Signals(signum).name)


@app.command()
def run(
    config: Annotated[list[str], typer.Option("--config", "-c", help=escape("configuration: host, host+m32, host+mx32, debian:RELEASE:ARCH, userspace:NAME, ssh:[USER@]HOST[:PORT], vm:debian:RELEASE:ARCH:KERNEL, kernel:RELEASE, or a [[config]] name"))] = [],
    workload: Annotated[list[str], typer.Option("--workload", "-w", help="workload name (repeatable)")] = [],
    suite: Annotated[Optional[str], typer.Option(help="suite name: native, quick, full, or a category")] = None,
    file: Annotated[Optional[Path], typer.Option("--file", "-f", help=escape("shootout.toml with [[config]] and [[workload]] tables; without -w or --suite, its workloads run"))] = None,
    experiment: Annotated[Optional[str], typer.Option("--experiment", "-e", help="a named experiment that reproduces a published comparison (see: shootout experiments)")] = None,
    budget: Annotated[Optional[str], typer.Option(help="time budget of the measuring, e.g. 10m; checked after the warm-up round (default 4m; a named experiment's own: see shootout experiments)", show_default=False)] = None,
    partial: Annotated[bool, typer.Option("--partial", help="measure even when the budget cannot reach the first round that can give a verdict (no verdicts then)")] = False,
    precision: Annotated[Optional[str], typer.Option(help="stop a workload once its CI half-width is under this (default: half the threshold)")] = None,
    threshold: Annotated[str, typer.Option(help="practical threshold δ for faster/slower/same (0.1% or more)")] = "1%",
    confidence: Annotated[str, typer.Option(help="what every interval shown with a verdict promises, over all rounds and workloads")] = "95%",
    min_rounds: Annotated[int, typer.Option(help="minimum measured rounds (6 is the least for a 95% CI)")] = 6,
    max_rounds: Annotated[Optional[int], typer.Option(help="never more rounds than this (default 50; a named experiment's own: what its budget pays for)", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option(help="seed of the shuffled order (default: random, stored)")] = None,
    repeats: Annotated[int, typer.Option(help="measure a trial again, up to this often, when other programs used a CPU during it (0: never)")] = RunSettings.repeats,
    aa: Annotated[bool, typer.Option("--aa", help="A/A: the first configuration against itself (noise floor)")] = False,
    resume: Annotated[Optional[str], typer.Option(help="continue an interrupted run (id or 'last')")] = None,
    tune: Annotated[bool, typer.Option("--tune", help="set the performance governor for the run (restored afterwards)")] = False,
    no_boost: Annotated[bool, typer.Option("--no-boost", help="with --tune: also disable turbo/boost")] = False,
    load_wait: Annotated[str, typer.Option(help="wait up to this long for an idle machine", envvar="SHOOTOUT_LOAD_WAIT")] = "60s",
    monitor: Annotated[bool, typer.Option(help="sample clock, temperature, load and steal during the run")] = True,
    across_boots: Annotated[bool, typer.Option("--across-boots", help="the configurations are kernels (kernel:RELEASE): measure one block of rounds per boot, A B B A …, and say which kernel to boot next")] = False,
    boots: Annotated[int, typer.Option(help="with --across-boots: how many boots (blocks) in all, a multiple of twice the kernels")] = 4,
    next_kernel: Annotated[bool, typer.Option("--next-kernel", help="with --across-boots: boot the next scheduled kernel once: GRUB's grub-reboot, or a Raspberry Pi's tryboot.txt (then reboot '0 tryboot'); undo with shootout doctor")] = False,
    resume_at_boot: Annotated[bool, typer.Option("--resume-at-boot", help="with --across-boots: install a one-shot systemd unit that measures the next block after the reboot")] = False,
    price: Annotated[list[str], typer.Option("--price", help="CONFIG=PRICE, e.g. ssh:host-a=0.408: stored with the run; show and report add performance per price (repeatable, every configuration)")] = [],
    price_unit: Annotated[str, typer.Option(help="with --price: what a price is, e.g. '$/h' or '$'")] = "$/h",
    parallel: Annotated[bool, typer.Option("--parallel/--sequential", help="measure configurations on different machines (ssh) at the same time, this machine's alone (default), or every trial one after another")] = True,
    emulate: Annotated[bool, typer.Option("--emulate", help="run vm: configurations under TCG where KVM is not hardware-backed (function only: results marked emulated, no verdicts)")] = False,
    db: DbOption = None,
) -> None:
    """Run workloads under every configuration in randomized interleaved rounds, then show the verdicts."""
    from shootout.conditions.preflight import EarlyWindow, preflight

    early = EarlyWindow()  # the load gate's first look, taken while the rest starts up
    import secrets

    from shootout.cli import options
    from shootout.cli.progress import PREPARING, ProgressView, prepared_lines, preparing
    from shootout.preparation import prepare
    from shootout.request import Wish, build_request, check_settings, workloads_of
    from shootout.runner import Runner
    from shootout.cli.conditions import preflight_lines
    from shootout.conditions.clock import round_clock
    from shootout.conditions.governor import tune as set_governor
    from shootout.conditions.governor import tune_problem
    from shootout.conditions.monitor import Monitor
    from shootout.conditions.noise import aa_floor, load_noise_floor, save_noise_floor
    from shootout.facts import hostname, machine_id
    from shootout.system.journal import journal, recover

    if min_rounds < 6:
        raise UsageError(f"--min-rounds {min_rounds} is too few", "a 95% interval needs at least 6 rounds")
    if repeats < 0:
        raise UsageError(f"--repeats {repeats} is below 0", "0 keeps every trial as it comes")
    if tune and (problem := tune_problem()):
        raise UsageError(*problem)
    if across_boots and aa:
        raise UsageError("--aa and --across-boots do not combine", "for a noise floor, run --aa under one kernel")
    wait_s = options.duration(load_wait, "--load-wait")
    store = _store(db)
    undone, left = recover()
    for what in undone:
        err_console.print(f"undid a change left by a killed run: {escape(what)}")
    for problem in left:  # kept in its journal: doctor and the next run try again
        err_console.print(f"[red]could not undo[/] a change left by a killed run: {escape(problem)}", soft_wrap=True)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    # Everything the user typed is checked (and userspaces built) before the load gate.
    if resume:
        stored = store.get_run(resume)
        resumed = workloads_of([w.name for w in stored.workloads], stored.user_workloads)
        min_shown = stored.settings.min_rounds
    else:
        delta = options.threshold(threshold)
        level = options.confidence(confidence)
        budget_s, rounds = _limits(store, experiment, budget, max_rounds, partial, level, min_rounds)
        settings = RunSettings(
            threshold=delta, precision=options.precision(precision, delta),
            min_rounds=min_rounds, max_rounds=max(rounds, min_rounds),
            budget_s=budget_s,
            seed=seed if seed is not None else secrets.randbelow(2**31), aa=aa,
            confidence=level, experiment=experiment or "", partial=partial,
            repeats=repeats, parallel=parallel,
        )
        notify = lambda text: err_console.print(escape(text), soft_wrap=True)  # noqa: E731
        parsed = build_request(Wish(config, workload, suite, file, experiment, settings, emulate=emulate,
                                    prices=price, price_unit=price_unit), notify)
        with err_console.status(PREPARING) as status:  # what is built, compiled or probed: one step
            request = prepare(parsed, notify, progress=preparing(err_console, status))
        check_settings(request, load_noise_floor(store, {"machine_id": machine_id(), "hostname": hostname()}))
        min_shown = settings.min_rounds
    across = _across_boots(store, stored if resume else None, request if across_boots and not resume else None, boots)
    def undo_failed(problem: str) -> None:
        err_console.print(f"[red]could not undo[/]: {escape(problem)} (kept for `shootout doctor`)", soft_wrap=True)

    with journal(undo_failed) as j, Monitor() if monitor else nullcontext() as sampler:
        clock = round_clock()
        pf = preflight(tune=tune, journal=j, load_wait_s=wait_s, early=early, clock=clock or (lambda: None))
        # said once the first trial is measured (see ProgressView)
        head = (prepared_lines(request.prepared) if not resume else []) + preflight_lines(pf)
        if tune and no_boost:
            head += [f"  {escape(line)}" for line in set_governor(j, disable_boost=True)]
        runner = Runner(store, j, ProgressView(console, err_console, min_shown, head), monitor=sampler, clock=clock)
        with runner.emit:
            block = _run_block(runner, across, request if not resume else None, pf.facts) if across else None
            run_id = block.run_id if block else runner.resume(stored, resumed) if resume else runner.start(request, facts=pf.facts)
    analysis = _show(store, str(run_id), as_json=False)
    if block:
        console.print(escape(block.message()))
        _prepare_next_boot(block, next_kernel, resume_at_boot, db)
    if aa:
        floor = aa_floor(analysis)
        if floor is not None:
            save_noise_floor(store, analysis.facts["machine"], {"run": run_id, **floor})
            console.print(f"noise floor of this machine: ±{floor['halfwidth']:.2%} in {floor['rounds']} rounds "
                          f"(per-round noise {floor['sd']:.2%}; stored, shown beside later verdicts)")


def _limits(store, experiment: str | None, budget: str | None, max_rounds: int | None, partial: bool,
            level: float, min_rounds: int) -> tuple[float, int]:
    """--budget (s) and --max-rounds: the user's, else a named experiment's own (experiments/limits.py)."""
    from shootout.cli import options
    from shootout.experiments.limits import last_run, run_limits
    from shootout.facts import machine_id

    given = options.budget(budget) if budget is not None else None
    last = None
    if experiment and given is not None:  # checked against what its first verdict needs here
        last = last_run(store.list_runs(), lambda i: store.trials(i, include_warmup=True), experiment, machine_id())
    return run_limits(experiment, given, max_rounds, partial=partial, confidence=level, min_rounds=min_rounds,
                      last=last)


def _across_boots(store, stored, request, boots: int):
    """A run across boots, planned and checked before the load gate: the first block's
    campaign, or the resumption after a reboot; None for any other run."""
    from shootout.boots import campaign
    from shootout.boots.switch import undo_next_boot

    if stored is not None:
        if not campaign.campaign_of(stored):
            return None
        step = campaign.prepare_resume(store, stored)
        undone, errors = undo_next_boot()  # the kernel switch and resume unit were for this boot
        for what in undone:
            err_console.print(f"this boot used it, now undone: {escape(what)}")
        for problem in errors:
            err_console.print(f"[red]could not undo[/]: {escape(problem)}")
        return step
    return campaign.plan(request.configs, boots) if request is not None else None


def _run_block(runner, step, request, machine: dict):
    from shootout.boots import campaign
    from shootout.request import workloads_of

    if isinstance(step, campaign.Resumption):
        return campaign.resume(runner, step, lambda r: workloads_of([w.name for w in r.workloads], r.user_workloads),
                               machine)
    return campaign.start(runner, request, step, machine)


def _prepare_next_boot(block, next_kernel: bool, resume_at_boot: bool, db: str | None) -> None:
    """--next-kernel and --resume-at-boot: opt-in, said in one line each with their undo."""
    import os

    from shootout.boots.switch import after_block

    command = [sys.executable, "-m", "shootout", "run", "--resume", "last", *(["--db", db] if db else []),
               *(["--next-kernel"] if next_kernel else []), *(["--resume-at-boot"] if resume_at_boot else [])]
    home = {"SHOOTOUT_HOME": os.environ["SHOOTOUT_HOME"]} if "SHOOTOUT_HOME" in os.environ else {}
    for line in after_block(block, next_kernel=next_kernel, resume_at_boot=resume_at_boot, command=command,
                            environment=home):
        console.print(escape(line))


def _analysis(store, stored):
    from shootout.analysis import analyze
    from shootout.conditions.noise import load_noise_floor
    from shootout.groups import grouped
    from shootout.groups_compare import analyze_groups

    floor = None
    if not stored.settings.aa and stored.facts.get("machine", {}).get("machine_id"):
        floor = (load_noise_floor(store, stored.facts["machine"]) or {}).get("halfwidth")
    analysis = analyze(stored, store.trials(stored.id), noise_floor=floor)
    if grouped(stored):  # groups of machines: the machines are the units (groups.py)
        analysis = analyze_groups(stored, store.trials(stored.id))
    if stored.settings.experiment:
        from shootout.experiments import EXPERIMENTS

        if (named := EXPERIMENTS.get(stored.settings.experiment)) is not None:
            analysis = dataclasses.replace(analysis, explanation=tuple(named.explain(analysis)))
    return analysis


def _show(store, ref: str, as_json: bool, all_metrics: bool = False):
    from shootout.report.jsondata import show_rows
    from shootout.report.terminal import show

    analysis = _analysis(store, store.get_run(ref))
    if as_json:
        print(json.dumps(show_rows(analysis), indent=2))
    else:
        show(analysis, console, all_metrics)
    return analysis


@app.command("show")
def show_run(ref: RunArg = "last", json_out: Annotated[bool, typer.Option("--json", help="print the rows as JSON (every metric)")] = False,
             all_metrics: Annotated[bool, typer.Option("--all", help="also the sub-metrics, as estimates without verdicts")] = False,
             db: DbOption = None) -> None:
    """Verdicts per workload: speed-up of its headline metric over the baseline with its 95% CI, verdict, flags; then the geomean.

    Fits the terminal (80 columns: speed-ups and verdicts; wider: medians too); written to a
    file or a pipe, plain lines with every cell whole.
    """
    _show(_store(db), ref, json_out, all_metrics)


@app.command()
def runs(db: DbOption = None) -> None:
    """List stored runs, newest first. Into a file or a pipe: plain lines, every cell whole."""
    from rich import box
    from rich.table import Table

    from shootout.report.terminal import plain_text

    plain = not console.is_terminal
    table = Table(box=None if plain else box.HEAVY_HEAD, pad_edge=not plain)
    for name in ("id", "started", "status", "configurations", "workloads", "trials"):
        table.add_column(name, no_wrap=plain)
    store = _store(db)
    import datetime as dt

    for r in store.list_runs():
        table.add_row(str(r.id), dt.datetime.fromtimestamp(r.created_at).strftime("%Y-%m-%d %H:%M"), r.status,
                      ", ".join(c.name for c in r.configs), ", ".join(w.name for w in r.workloads),
                      str(store.trial_count(r.id)))
    if plain:
        console.file.write(plain_text([], table, []).strip("\n") + "\n")
    else:
        console.print(table)


@app.command()
def workloads() -> None:
    """The catalogue: name, category, metrics with unit and direction, what it measures, suites."""
    from rich.table import Table

    from shootout.units import unit
    from shootout.workloads.registry import REGISTRY, suites

    table = Table("name", "category", "metrics (unit, better)", "measures", "reproduces")
    for name, cls in REGISTRY.items():
        s = cls.spec
        metrics = "\n".join(f"{m.name}{' *' if m.name == s.headline else ''} ({m.unit}, {unit(m.unit).direction})"
                            for m in s.metrics)
        table.add_row(name, s.category, metrics, s.description, s.reproduces)
    console.print(table)
    console.print("* headline metric (counted in the suite geomean)")
    for name, members in suites().items():
        console.print(f"suite {name}: {', '.join(members)}")


@app.command()
def experiments(db: DbOption = None) -> None:
    """The named experiments: each reproduces a published comparison with one command."""
    from shootout.experiments import EXPERIMENTS
    from shootout.experiments.limits import how_long, last_run
    from shootout.facts import machine_id

    store = _store(db)
    runs, machine = store.list_runs(), machine_id()
    for name, item in EXPERIMENTS.items():
        last = last_run(runs, lambda i: store.trials(i, include_warmup=True), name, machine)
        console.print(f"{name}: {escape(item.description)}\n  reproduces {escape(item.reproduces)}\n"
                      f"  the write-up's figures: {item.cited}\n"
                      f"  run: shootout run --experiment {name}"
                      + "".join(f"\n  {escape(line)}" for line in how_long(item, last)), soft_wrap=True, highlight=False)


@app.command()
def conditions(
    wait: Annotated[float, typer.Option(help="seconds to wait for an idle machine")] = 5.0,
    as_json: Annotated[bool, typer.Option("--json", help="print the facts and flags as JSON")] = False,
) -> None:
    """The machine's conditions now: load, governor, virtualization, steal, swap, sensors, throttling."""
    from shootout.cli.conditions import conditions_command

    conditions_command(wait, as_json)


@app.command()
def info(config: Annotated[list[str], typer.Option("--config", "-c", help="configuration to describe")] = []) -> None:
    """Facts of this machine and of each configuration."""
    from shootout.configs import abi_problem, parse_spec
    from shootout.facts import machine_facts
    from shootout.system.journal import journal
    from shootout.targets.factory import make_target

    from shootout.cli.conditions import print_preflight
    from shootout.conditions.preflight import preflight

    print_preflight(preflight(tune=False, journal=None, load_wait_s=0))
    console.print_json(json.dumps({"machine": machine_facts()}, default=str))
    with journal() as j:
        for spec in config or ["host", "host+m32"]:
            cfg = parse_spec(spec)
            problem = abi_problem(cfg)
            if problem:
                console.print(f"{cfg.name}: not usable here: {escape(problem)}")
                continue
            target = make_target(cfg, j)
            target.open()
            try:
                console.print_json(json.dumps({cfg.name: target.facts()}, default=str))
            finally:
                target.close()


@app.command("export")
def export_run(ref: RunArg, format: Annotated[str, typer.Option("--format", help="json or csv")] = "json",
               out: Annotated[Optional[Path], typer.Option("--out", "-o", help="file to write (default: stdout)")] = None,
               db: DbOption = None) -> None:
    """Write a run with every raw trial, its plan, seed and facts (JSON), or one row per value (CSV)."""
    format = format.strip().lower()
    store = _store(db)
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


@app.command("import")
def import_run(path: Annotated[Path, typer.Argument(help="shootout JSON, Phoronix composite.xml or hyperfine JSON")],
               db: DbOption = None) -> None:
    """Store results from a file as a new run."""
    from shootout.importers import load_results

    store = _store(db)
    run_id = store.import_run(load_results(path))
    console.print(f"imported {path} as run {run_id}")


def _compared(store, refs: list[str], by_label: bool):
    """The analysis of `compare` and of a multi-run `report`: REFS, or SIDE vs SIDE."""
    from shootout.crossrun import compare_members, members_by_label, members_by_run, members_by_side

    if "vs" in refs:
        cut = refs.index("vs")
        sides = [refs[:cut], refs[cut + 1:]]
        if not all(sides) or "vs" in sides[1]:
            raise UsageError("compare: 'vs' needs runs on both sides", "e.g. shootout compare 3 5 vs 7 9")
        loaded = [[(run, store.trials(run.id)) for run in map(store.get_run, side)] for side in sides]
        return compare_members(members_by_side(loaded))
    if len(refs) < 2:
        raise UsageError("compare needs at least two runs", "e.g. shootout compare 3 7, or 3 5 vs 7 9")
    runs = [store.get_run(r) for r in refs]
    trials = [store.trials(r.id) for r in runs]
    return compare_members((members_by_label if by_label else members_by_run)(runs, trials))


@app.command()
def compare(refs: Annotated[list[str], typer.Argument(help="runs to compare: 3 7, or two sides: 3 5 vs 7 9")],
            by_label: Annotated[bool, typer.Option("--by-label", help="pool runs whose configurations share a label")] = False,
            all_metrics: Annotated[bool, typer.Option("--all", help="also the sub-metrics, as estimates without verdicts")] = False,
            db: DbOption = None) -> None:
    """Compare stored runs (unpaired). With two or more runs per side the intervals include run-to-run drift."""
    from shootout.report.terminal import show

    show(_compared(_store(db), refs, by_label), console, all_metrics)


@app.command()
def report(refs: Annotated[list[str], typer.Argument(help="one run, or several to compare (3 5 vs 7 9)")] = ["last"],
           format: Annotated[str, typer.Option("--format", help="html, md (or markdown), png or svg")] = "html",
           out: Annotated[Path, typer.Option("--out", help="directory to write into")] = Path("shootout-report"),
           price: Annotated[list[str], typer.Option("--price", help="CONFIG=PRICE for performance per dollar (repeatable; default: the prices given to run --price)")] = [],
           price_unit: Annotated[Optional[str], typer.Option(help="what a price is, e.g. '$/h' or '$' (default: the run's, else $/h)")] = None,
           db: DbOption = None) -> None:
    """Write a report people would rather look at: charts with CI whiskers, HTML or Markdown."""
    from shootout.report.files import write_report
    from shootout.report.perdollar import parse_prices, stored_prices

    store = _store(db)
    analysis = _analysis(store, store.get_run(refs[0])) if len(refs) == 1 else _compared(store, refs, False)
    prices, unit = parse_prices(price, [c.name for c in analysis.configs]), price_unit or "$/h"
    if not prices and (stored := stored_prices(analysis)) is not None:
        prices, unit = stored[0], price_unit or stored[1]
    for path in write_report(analysis, out, format, prices=prices or None, price_unit=unit):
        console.print(f"wrote {path}")


@app.command()
def doctor() -> None:
    """Tools present or missing (with the package to install); undo changes left by a killed run."""
    from shootout.boots.switch import undo_next_boot
    from shootout.doctor import tool_report
    from shootout.system.journal import recover

    undone, errors = recover()
    boot_undone, boot_errors = undo_next_boot()  # --next-kernel's switch, --resume-at-boot's unit
    undone, errors = undone + boot_undone, errors + boot_errors
    for what in undone:
        console.print(f"undid: {escape(what)}")
    for problem in errors:
        err_console.print(f"[red]could not undo[/]: {escape(problem)}", soft_wrap=True)
    if not undone and not errors:
        console.print("no changes left behind by earlier runs")
    for line in tool_report():
        console.print(line)
    if errors:
        raise typer.Exit(1)


app.add_typer(userspace_app, name="userspace", help="Create, list, update and remove Debian userspaces.")


def main() -> None:
    try:
        app()
    except ShootoutError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:
        by = f" by {exc}" if str(exc) else ""
        err_console.print(f"interrupted{by}; every finished trial is stored (continue with: shootout run --resume last)")
        sys.exit(130)
    finally:
        # The process ends here. Without this the collector walks scipy's and sqlalchemy's
        # 100,000 objects again while the interpreter shuts down: 0.3-0.5 s on every command.
        gc.freeze()
