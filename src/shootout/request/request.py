"""Parse what the user asked for: configurations, workloads, settings, checked as typed.

Nothing here touches the machine: what must be built, compiled or probed before the first
trial (userspaces, the compiler ABI probe, the sides that cannot run here) is the
preparation step's (preparation.py), which turns the Parsed request into a RunRequest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from shootout.base.errors import ShootoutError, UsageError
from shootout.base.model import Config, RunSettings
from shootout.configs.groups import side_names
from shootout.configs.specs import FileSettings, resolve
from shootout.judge.noisefloor import resolvable_threshold
from shootout.measure.roundplan import LAST_CAP
from shootout.measure.runstate import RunRequest
from shootout.places import runs_emulated
from shootout.experiments.sizing import DEFAULT_SIZE
from shootout.request.overrides import check_params, merged
from shootout.request.prices import check_prices, parse_prices
from shootout.request.settings import load_tables, where_of
from shootout.stats import Design
from shootout.workloads.catalogue import (
    DEFAULT_SUITE,
    REGISTRY,
    suite,
    suite_params,
    user_workload,
    workload,
)
from shootout.workloads.contract import Workload
from shootout.workloads.debpackages import packages_at_creation

Notify = Callable[[str], None]


@dataclass
class Wish:
    """The options of `shootout run`, as typed values."""

    configs: list[str] = field(default_factory=list)
    workloads: list[str] = field(default_factory=list)
    suite: str | None = None
    file: Path | None = None
    experiment: str | None = None
    settings: RunSettings = field(default_factory=RunSettings)
    # --set: workload -> parameter -> value, over the file's or the experiment's [params], key by key
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    emulate: bool = False  # VMs under TCG where KVM is not hardware-backed: function only, no verdicts
    # --price CONFIG=PRICE (or prices already read: settings.Settings.prices), checked against the configurations
    prices: Sequence[str] | Mapping[str, float] = field(default_factory=list)
    price_unit: str = "$/h"
    tables: FileSettings | None = None  # of --file or the experiment, when already loaded (settings.resolve_settings)
    size: str = DEFAULT_SIZE  # --size: a named experiment's own, or its write-up's


def make_workload(name: str, user_defs: dict[str, dict[str, Any]], where: str = "shootout.toml") -> Workload:
    if name in user_defs:
        return user_workload(user_defs[name], where)
    return workload(name)


def _machines_named(wish: Wish, specs: list[str]) -> None:
    """An experiment over the user's machines (cloud-openssl) needs them and their prices."""
    if not wish.experiment:
        return
    from shootout.experiments import experiment

    named = experiment(wish.experiment)
    if not named.machines:
        return
    if not specs:
        raise UsageError(f"experiment {named.name} measures the machines you name, and none was named",
                         "add -c ssh:HOST for each (or -c GROUP with --file holding [[config]] machines = [...])")
    if not wish.prices:
        raise UsageError(f"experiment {named.name} compares performance per price, and no price was given",
                         "add --price NAME=PRICE for every machine or group, e.g. --price ssh:a1=0.408")


def default_workloads(file: FileSettings, where: str, notify: Notify) -> tuple[list[str], str | None]:
    """Nothing selected: the workloads the file names ([[workload]] tables, then [params.WORKLOAD]
    tables of built-in ones), else the default suite."""
    named = list(dict.fromkeys([*file.workloads, *file.params]))
    if not named:
        return [], DEFAULT_SUITE
    notify(f"running the {len(named)} workload{'s' if len(named) > 1 else ''} named in {where} "
           f"({', '.join(named)}): none was selected (-w NAME, --suite, or workloads = [...] in [run] "
           "choose others)")
    return named, None


def default_config_names(file: FileSettings, where: str, notify: Notify) -> list[str]:
    """Nothing selected: the file's [[config]] tables, in order (none: the default main job)."""
    machines = {m for c in file.configs.values() for m in (c.option("machines") or "").split("\n") if m}
    named = [name for name in file.configs if name not in machines]  # a group's machines run as its members
    if named:
        notify(f"comparing the {len(named)} configuration{'s' if len(named) > 1 else ''} defined in {where} "
               f"({', '.join(named)}): none was selected (-c NAME or configs = [...] in [run] choose others)")
    return named


def priced(wish: Wish, names: list[str]) -> RunSettings:
    """The settings with the prices of every configuration (before any userspace is made)."""
    if not wish.prices:
        return wish.settings
    if wish.settings.aa:
        raise UsageError("--price and --aa do not combine", "an A/A run compares a configuration with itself")
    prices = parse_prices(wish.prices, names)  # a group is priced by its name (each of its machines)
    check_prices(names, prices)
    return replace(wish.settings, prices=prices, price_unit=wish.price_unit)


@dataclass
class Parsed:
    """A Wish checked and turned into typed parts; nothing on the machine looked at or changed
    yet (preparation.prepare builds, compiles and probes, then makes the RunRequest)."""

    wish: Wish
    configs: list[Config] | None  # None: the default comparison, chosen while preparing
    workloads: list[Workload]
    settings: RunSettings  # priced when the configurations are named (else while preparing)
    user_workloads: dict[str, dict[str, Any]]
    params: dict[str, dict[str, Any]]
    packages: tuple[str, ...]  # what a userspace this run creates gets (workloads.debpackages)


def _chosen(wish: Wish, file: FileSettings, where: str, notify: Notify) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The workloads to run, in order, and their parameters: the command line's, else the file's."""
    names = wish.workloads or list(file.run.get("workloads", []))
    suite_name = wish.suite or file.run.get("suite")
    if not names and not suite_name:
        names, suite_name = default_workloads(file, where, notify)
    params = dict(file.params)
    if suite_name:
        names += suite(suite_name)
        params = {**suite_params(suite_name), **params}
    for name in names:
        if name not in REGISTRY and name not in file.workloads:
            raise UsageError(f"unknown workload {name!r}", "list them with: shootout workloads (or define it in shootout.toml)")
    chosen = list(dict.fromkeys(names))  # keep order, drop repeats
    if stray := sorted(set(file.params) - set(chosen)):
        if not (wish.workloads or wish.suite):  # the file contradicts itself
            raise UsageError(f"[params.{stray[0]}] names a workload this run does not select",
                             "select it with -w or in [run] workloads, or drop the table")
        # The command line chose other workloads than the file's: its parameters for them go unused.
        tables = ", ".join(f"[params.{name}]" for name in stray)
        notify(f"{tables} of {where} not used: not among the workloads chosen with "
               f"{'-w' if wish.workloads else '--suite'}")
        params = {name: table for name, table in params.items() if name not in stray}
    return chosen, merged(params, wish.params)  # --set over the file's, key by key


def build_request(wish: Wish, notify: Notify) -> Parsed:
    """Parse and check what the user asked for, without touching the machine: nothing is
    built, compiled or probed here (preparation.prepare does that). notify: one-line messages
    the user must see."""
    if wish.experiment:
        from shootout.experiments import experiment
        from shootout.experiments.limits import needs_root

        needs_root(experiment(wish.experiment))  # one line, before any userspace or part is made
    file = wish.tables if wish.tables is not None else load_tables(wish.experiment, wish.file, wish.size)
    where = where_of(wish.experiment, wish.file)
    chosen, params = _chosen(wish, file, where, notify)
    workloads = [make_workload(n, file.workloads, where) for n in chosen]
    check_params(workloads, {n: t for n, t in file.params.items() if n in chosen}, where)
    check_params(workloads, wish.params, "--set")
    user_defs = {n: file.workloads[n] for n in chosen if n in file.workloads}
    # The workloads first: a userspace this run creates gets what they need (workloads.debpackages).
    packages = packages_at_creation(workloads)
    specs = wish.configs or list(file.run.get("configs", [])) or default_config_names(file, where, notify)
    _machines_named(wish, specs)
    if wish.experiment and wish.configs:  # the experiment's workloads and sizes on the user's sides
        from shootout.experiments import experiment
        from shootout.experiments.ownsides import check_user_sides

        check_user_sides(experiment(wish.experiment), file, wish.configs, wish.size)
    configs = resolve(specs, file.configs) if specs else None
    settings = wish.settings
    if configs is not None:
        settings = priced(wish, side_names(configs))
        if wish.emulate:
            from shootout.places.vm import emulated

            configs = [emulated(c) for c in configs]
    return Parsed(wish, configs, workloads, settings, user_defs, params, packages)


def workloads_of(names: list[str], user_defs: dict[str, dict[str, Any]]) -> list[Workload]:
    """Rebuild a stored run's workloads (for --resume)."""
    try:
        return [make_workload(n, user_defs, "the stored run") for n in names]
    except ShootoutError as exc:
        raise UsageError(f"cannot resume: {exc.message}", "this shootout version lacks a workload of that run") from None


def check_settings(request: RunRequest, floor: dict[str, Any] | None) -> None:
    """Refuse a run that cannot keep its promise: no round would allow a verdict, or the
    threshold is below what this machine's A/A noise floor lets max_rounds rounds resolve."""
    s = request.settings
    if len(request.configs) < 2 or any(runs_emulated(c) for c in request.configs):
        return  # one configuration, or emulated ones: no verdicts to promise
    design = Design(s.confidence, len(request.workloads) * (len(request.configs) - 1), (s.min_rounds, s.max_rounds))
    first = design.first_look()
    if first is None or first > s.max_rounds:
        raise UsageError(f"--max-rounds {s.max_rounds} is too few: a {s.confidence:.0%} verdict on "
                         f"{design.family} headline comparisons needs more rounds than that",
                         "raise --max-rounds (50 is the default) or run fewer workloads")
    # a last look planned from the budget after the warm-up may reach LAST_CAP (measure/roundplan.py)
    most = LAST_CAP if s.rounds_by_budget else s.max_rounds
    if most != s.max_rounds:
        design = replace(design, looks=(s.min_rounds, most))
    limit = None if floor is None or s.aa else resolvable_threshold(floor, most, design)
    if limit is not None and s.threshold < limit:
        rounds = math.ceil(most * (limit / s.threshold) ** 2)
        raise UsageError(f"--threshold {s.threshold:.2%} is below what this machine can resolve in {most} "
                         f"rounds (\u00b1{limit:.2%}, from its A/A noise floor, run {floor.get('run', '?')})",
                         f"use --threshold {math.ceil(limit * 1e4) / 100:g}% or more, raise --max-rounds to about "
                         f"{rounds}, or measure the floor again with: shootout run --aa")
