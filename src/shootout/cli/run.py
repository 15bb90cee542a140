"""`shootout run`: parse, prepare, pass the load gate, measure, show (main.py holds its options).

Everything the user typed is checked, and what the run needs built, compiled or probed is
prepared (preparation.py), before the load gate; then the rounds, then the verdicts.
"""

from __future__ import annotations

import secrets
import signal
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.markup import escape

from shootout.base.errors import UsageError
from shootout.base.model import Config, Run, RunSettings
from shootout.cli.boots import across_boots, prepare_next_boot, run_block
from shootout.cli.conditions import preflight_lines
from shootout.cli.consoles import console, err_console, say
from shootout.cli.progress import PREPARING, ProgressView, prepared_lines, preparing
from shootout.cli.stored import open_store, show_analysis
from shootout.conditions.preflight import EarlyWindow, preflight
from shootout.measure.runner import Runner, RunRequest, check_resumable
from shootout.request import values as options
from shootout.request.preparation import prepare
from shootout.request.overrides import parse_sets
from shootout.request.request import Wish, build_request, check_settings, workloads_of
from shootout.request.settings import Asked, Settings, check_size, resolve_settings
from shootout.store import Store
from shootout.workloads.contract import Workload


@dataclass
class RunOptions:
    """The options of `shootout run` as typed (main.run's parameters, one field each)."""

    config: list[str]
    workload: list[str]
    suite: str | None
    file: Path | None
    experiment: str | None
    size: str
    set_: list[str]
    budget: str | None
    partial: bool
    precision: str | None
    threshold: str | None  # None: the [run] threshold of the experiment or --file, else 1%
    confidence: str
    min_rounds: int | None  # None: the [run] min_rounds of --file, else 6
    max_rounds: int | None
    seed: int | None
    repeats: int
    aa: bool
    resume: str | None
    tune: bool
    no_boost: bool
    load_wait: str
    monitor: bool
    isolate: bool
    across_boots: bool
    boots: int
    next_kernel: bool
    resume_at_boot: bool
    price: list[str]
    price_unit: str | None  # None: the [run] price_unit of --file, else $/h
    parallel: bool
    counters: bool
    cache_model: str
    meter: str | None
    emulate: bool
    wide: bool
    db: str | None


@dataclass
class _Job:
    """What the run measures: a new request, or a stored run to resume with its workloads."""

    request: RunRequest | None = None
    stored: Run | None = None
    resumed: list[Workload] | None = None

    @property
    def min_rounds(self) -> int:
        return (self.stored.settings if self.stored is not None else self.request.settings).min_rounds  # type: ignore[union-attr]


def _interrupt(signum: int, frame: object) -> None:
    from shootout.measure.runner import Interrupted

    raise Interrupted(signal.Signals(signum).name)


def run_command(o: RunOptions, early: EarlyWindow) -> None:
    """early: the load gate's first look, taken while the rest started up."""
    wait_s = _checked(o)
    store = open_store(o.db)
    _recover()
    # SIGINT too: a run started from a script (a shell's background job) starts with SIGINT
    # ignored, and Python installs its Ctrl-C handler only where SIGINT was not ignored
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    # Everything the user typed is checked (and userspaces built) before the load gate.
    if o.resume:
        stored = store.get_run(o.resume)
        check_resumable(stored)
        job = _Job(stored=stored, resumed=workloads_of([w.name for w in stored.workloads], stored.user_workloads))
    else:
        job = _Job(request=_request(o, store))
    across = across_boots(store, job.stored, job.request, o.boots, o.across_boots)
    run_id, block = _measure(o, store, job, across, early, wait_s)
    analysis = show_analysis(store, str(run_id), as_json=False, wide=o.wide)
    if block:
        console.print(escape(block.message()))
        prepare_next_boot(block, o.next_kernel, o.resume_at_boot, o.db)
    if o.aa:
        _save_floor(store, analysis, run_id)


def _checked(o: RunOptions) -> float:
    """The options that need no store or machine, checked; the --load-wait in seconds."""
    from shootout.conditions.governor import tune_problem

    if o.min_rounds is not None and o.min_rounds < 6:
        raise UsageError(f"--min-rounds {o.min_rounds} is too few", "a 95% interval needs at least 6 rounds")
    if o.repeats < 0:
        raise UsageError(f"--repeats {o.repeats} is below 0", "0 keeps every trial as it comes")
    if o.tune and (problem := tune_problem()):
        raise UsageError(*problem)
    if o.across_boots and o.aa:
        raise UsageError("--aa and --across-boots do not combine", "for a noise floor, run --aa under one kernel")
    check_size(o.size, o.experiment)
    parse_sets(o.set_)  # its form and values, before anything is opened (the workloads check its names)
    return options.duration(o.load_wait, "--load-wait")


def _recover() -> None:
    """Undo what a killed run left changed, and say so."""
    from shootout.system.journal import recover

    undone, left = recover()
    for what in undone:
        err_console.print(f"undid a change left by a killed run: {escape(what)}")
    for problem in left:  # kept in its journal: doctor and the next run try again
        err_console.print(f"[red]could not undo[/] a change left by a killed run: {escape(problem)}", soft_wrap=True)


def _settings(o: RunOptions, store: Store) -> tuple[Settings, RunSettings]:
    """The settings, decided once (request/settings.py), and the RunSettings stored with the run."""
    from shootout.conditions.machinefacts import machine_id
    from shootout.experiments.limits import last_run

    def last(name: str) -> Any:  # a --budget is checked against what the first verdict needs here
        return last_run(store.list_runs(), lambda i: store.trials(i, include_warmup=True), name, machine_id(), o.size)

    decided = resolve_settings(Asked(
        experiment=o.experiment, file=o.file, threshold=o.threshold, budget=o.budget, min_rounds=o.min_rounds,
        max_rounds=o.max_rounds, partial=o.partial, confidence=o.confidence, precision=o.precision,
        prices=o.price, price_unit=o.price_unit, size=o.size), last)
    return decided, RunSettings(
        threshold=decided.threshold, precision=decided.precision,
        min_rounds=decided.min_rounds, max_rounds=decided.max_rounds,
        budget_s=decided.budget_s,
        seed=o.seed if o.seed is not None else secrets.randbelow(2**31), aa=o.aa,
        confidence=decided.confidence, experiment=o.experiment or "", partial=o.partial,
        repeats=o.repeats, isolate=o.isolate, parallel=o.parallel, counters=o.counters, cache_model=_cache_model(o.cache_model),
        meter=o.meter or "", size=decided.size, overrides=parse_sets(o.set_),
        rounds_by_budget=decided.rounds_by_budget,
    )


def _cache_model(name: str) -> str:
    from shootout.counters.cachegrind import MODELS

    if name not in MODELS:
        raise UsageError(f"unknown --cache-model {name!r}", f"use one of: {', '.join(MODELS)}")
    return name


def _request(o: RunOptions, store: Store) -> RunRequest:
    """Parse what was asked, then prepare it: one step, named on the display while it works."""
    from shootout.conditions.machinefacts import hostname, machine_id
    from shootout.judge.noisefloor import load_noise_floor

    def notify(text: str) -> None:  # a note or a warning, wrapped at words (errors stay one line)
        say(text, on=err_console)

    decided, settings = _settings(o, store)
    parsed = build_request(Wish(o.config, o.workload, o.suite, o.file, o.experiment, settings, settings.overrides,
                                emulate=o.emulate, prices=decided.prices, price_unit=decided.price_unit,
                                tables=decided.tables, size=decided.size), notify)
    with err_console.status(PREPARING) as status:  # what is built, compiled or probed: one step
        request = prepare(parsed, notify, progress=preparing(err_console, status))
    check_settings(request, load_noise_floor(store, {"machine_id": machine_id(), "hostname": hostname()}))
    return request


def _measure(o: RunOptions, store: Store, job: _Job, across: Any, early: EarlyWindow,
             wait_s: float) -> tuple[int, Any]:
    """Pass the load gate, then measure (a block of a run across boots, a resumption, or a new
    run) under the change journal; the run's id and its block (None but across boots)."""
    from shootout.conditions.governor import tune as set_governor
    from shootout.conditions.monitor import OFF as MONITOR_OFF
    from shootout.conditions.monitor import Monitor
    from shootout.experiments.limits import own_budget
    from shootout.measure.clock import round_clock
    from shootout.measure.trial import here
    from shootout.system.journal import journal

    def undo_failed(problem: str) -> None:
        err_console.print(f"[red]could not undo[/]: {escape(problem)} (kept for `shootout doctor`)", soft_wrap=True)

    configs = job.stored.configs if job.stored is not None else job.request.configs  # type: ignore[union-attr]
    with journal(undo_failed) as j, Monitor() if o.monitor else nullcontext() as sampler:
        clock = round_clock()
        pf = preflight(tune=o.tune, journal=j, load_wait_s=wait_s, early=early, clock=clock or (lambda: None),
                       reserve=o.isolate, here=any(here(c) for c in configs), why_not=_vm_here(configs))
        if pf.reservation is not None and not all(here(c) for c in configs):
            pf.lines.append("ssh configurations run their trials on their own machines, without reserved CPUs")
        # said once the first trial is measured (see ProgressView)
        head = (prepared_lines(job.request.prepared) if job.request is not None else []) + preflight_lines(pf)
        if o.tune and o.no_boost:
            head += [f"  {escape(line)}" for line in set_governor(j, disable_boost=True)]
        if not o.monitor:
            head.append(f"  {escape(MONITOR_OFF)}")
        runner = Runner(store, j, ProgressView(console, err_console, job.min_rounds, head), monitor=sampler,
                        clock=clock, own_budget=lambda name: own_budget(name, o.size), reservation=pf.reservation)
        with runner.emit:
            block = run_block(runner, across, job.request, pf.facts) if across else None
            if block:
                return block.run_id, block
            if job.stored is not None:
                return runner.resume(job.stored, job.resumed or []), None
            return runner.start(job.request, facts=pf.facts), None  # type: ignore[arg-type]


def _vm_here(configs: list[Config]) -> str | None:
    """A VM on this machine runs on its CPUs: moved to the rest with everything else, its guest
    would lose CPUs, so a run with one reserves none."""
    from shootout.places import LOCAL, machine_key
    from shootout.places.kind import kind_of

    if any(kind_of(c).elsewhere and machine_key(c) == LOCAL for c in configs):
        return "a VM runs on this machine, and its QEMU needs every CPU (its trials run in the guest)"
    return None


def _save_floor(store: Store, analysis: Any, run_id: int) -> None:
    """An A/A run's noise floor, stored for later verdicts and threshold checks."""
    from shootout.judge.noisefloor import aa_floor, emulated_aa, save_noise_floor

    if emulated_aa(analysis):
        console.print("no noise floor stored: this A/A ran emulated, and emulated results get no verdicts "
                      "(native runs here keep their own floor)")
        return
    floor = aa_floor(analysis)
    if floor is not None:
        save_noise_floor(store, analysis.facts.machine, {"run": run_id, **floor})
        console.print(f"noise floor of this machine: ±{floor['halfwidth']:.2%} in {floor['rounds']} rounds "
                      f"(per-round noise {floor['sd']:.2%}; stored, shown beside later verdicts)")
