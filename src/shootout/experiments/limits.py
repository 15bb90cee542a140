"""The budget and rounds of `shootout run --experiment NAME`, and how long it takes here.

Without --budget (or --max-rounds) a named experiment runs with its own (sizing.py); with them
the user's win, but a --budget below what the experiment's first verdict needs on this machine
is refused before anything is made, naming the experiment's own figure. "On this machine" is
its last run here when the results database holds one (its measured round), else the estimate.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from shootout.base.errors import UsageError
from shootout.base.model import Run, Trial
from shootout.base.units import fmt_duration
from shootout.experiments import experiment
from shootout.experiments.sizing import (
    DEFAULT_BUDGET_S,
    DEFAULT_SIZE,
    MARGIN,
    MAX_ROUNDS,
    WRITEUP_SIZE,
    DoesNotFit,
    Plan,
    first_verdict_seconds,
    minutes,
    planned_at_run,
)
from shootout.experiments.writeup import Experiment

TrialsOf = Callable[[int], Sequence[Trial]]  # run id -> its trials, warm-up included (Store.trials)


@dataclass(frozen=True)
class LastRun:
    """An experiment's newest run on this machine: what it took from start to its last trial
    (the userspaces it made before starting not counted) and its first measured round; a run
    refused for its budget after its warm-up, that round, and the budget (minutes) it asked for."""

    run_id: int
    seconds: float
    round_s: float | None
    refused_for: int | None = None


def _span(trials: Sequence[Trial]) -> float:
    return max(t.started_at + t.wall_s for t in trials) - min(t.started_at for t in trials)


def round_seconds(trials: Sequence[Trial], warm_up: bool = False) -> float | None:
    """The median span (first start to last end) of the measured rounds that ran every workload
    as round 1 did: later rounds run only the undecided ones, a pause makes one round long.
    warm_up: the warm-up round's span instead (all a run refused for its budget measured)."""
    rounds: dict[int, list[Trial]] = {}
    for t in trials:
        if t.started_at and (t.spec.round == 0) == warm_up:
            rounds.setdefault(t.spec.round, []).append(t)
    first = rounds.get(0 if warm_up else 1)
    if not first:
        return None
    return statistics.median(_span(ts) for ts in rounds.values() if len(ts) == len(first))


def last_run(runs: Sequence[Run], trials_of: TrialsOf, name: str, machine: str | None,
             size: str = DEFAULT_SIZE) -> LastRun | None:
    """The newest run of experiment `name` at this size on the machine with this id that measured
    a round, or that was refused for its budget after measuring its warm-up round."""
    for run in runs:  # newest first (Store.list_runs)
        if run.settings.experiment != name or not machine or run.facts.machine_id != machine:
            continue
        if run.settings.size != size:  # a round at the write-up's sizes says nothing of the cut ones
            continue
        trials = trials_of(run.id)
        ends = [t.started_at + t.wall_s for t in trials if t.started_at]
        refused = run.budget_refused
        measured = round_seconds(trials, warm_up=refused is not None)
        if ends and measured is not None:
            return LastRun(run.id, max(ends) - run.created_at, measured,
                           refused.wanted_min if refused is not None else None)
    return None


def needs_root(named: Experiment) -> None:
    """One line before anything is made: an experiment every configuration of which needs root."""
    if named.needs_root and os.geteuid() != 0:
        raise UsageError(f"experiment {named.name} needs root: {named.needs_root}",
                         f"run it as root: sudo shootout run --experiment {named.name}")


def here(named: Experiment, last: LastRun | None, confidence: float = 0.95, min_rounds: int = 6,
         size: str = DEFAULT_SIZE) -> Plan:
    """Its plan at that size, with this machine's measured round when its last run here measured one."""
    own = named.plan(confidence, min_rounds, size)
    if last is None or last.round_s is None:
        return own
    return replace(own, first_verdict_s=first_verdict_seconds(replace(named.sizing_at(size), round_s=last.round_s),
                                                              own.first_look))


def run_limits(name: str | None, budget_s: float | None, max_rounds: int | None, *, partial: bool = False,
               confidence: float = 0.95, min_rounds: int = 6, last: LastRun | None = None,
               size: str = DEFAULT_SIZE) -> tuple[float, int]:
    """(--budget in seconds, --max-rounds) of a run: the user's, else the experiment's own at that
    size, else the defaults. A --budget below the experiment's first verdict here is refused (not
    with --partial)."""
    if not name:
        return budget_s if budget_s is not None else DEFAULT_BUDGET_S, max_rounds or MAX_ROUNDS
    named = experiment(name)
    try:
        own = here(named, last, confidence, min_rounds, size)
    except DoesNotFit:  # other statistical settings than the experiment was sized for
        return budget_s if budget_s is not None else DEFAULT_BUDGET_S, max_rounds or MAX_ROUNDS
    if budget_s is None:
        return own.budget_s, max_rounds or own.max_rounds
    needed = own.first_verdict_s - named.sizing_at(size).prepare_s  # the budget pays for the measuring only
    if budget_s < needed and not partial:
        where = f"its last run here, run {last.run_id}" if last and last.round_s else "its estimate for 2 cores"
        name += " --size writeup" if size == WRITEUP_SIZE else ""
        raise UsageError(
            f"--budget {minutes(budget_s)} cannot pay for experiment {name}'s first verdict: "
            f"about {fmt_duration(needed, 'span')} of measuring (a warm-up and {own.first_look} rounds, {where}); "
            f"its own budget is {minutes(own.budget_s)}",
            f"leave --budget out, give --budget {minutes(max(own.budget_s, needed * MARGIN))} or more, "
            "or --partial to measure without verdicts")
    return budget_s, max_rounds or MAX_ROUNDS


def own_budget(name: str, size: str = DEFAULT_SIZE) -> str:
    """For the runner's refusal after the warm-up: ' (experiment NAME's own budget is 7m, sized for
    rounds of 35 s on 2 cores)', or '' for a run that is not a named experiment."""
    if not name:
        return ""
    try:
        named = experiment(name)
        own = named.plan(size=size)
    except (UsageError, DoesNotFit):
        return ""
    at = " at the write-up's sizes" if size == WRITEUP_SIZE else ""
    return (f" (experiment {name}'s own budget{at} is {minutes(own.budget_s)}, sized for rounds of "
            f"{named.sizing_at(size).round_s:.0f} s on 2 cores)")


def _took(named: Experiment, own: Plan, last: LastRun | None, size: str = DEFAULT_SIZE) -> str:
    """How long it takes: its last run here (or why that run stopped), else the estimate."""
    sizing = named.sizing_at(size)
    if last is not None and last.refused_for is not None:
        return (f"takes here: its last run here, run {last.run_id}, was refused for its budget after a warm-up "
                f"round of {last.round_s:.0f} s; --budget {last.refused_for}m would pay for its first verdict")
    if last is not None:
        return (f"takes here: {fmt_duration(last.seconds, 'span')} from its start to its last trial "
                f"(its last run here, run {last.run_id}" + (f"; rounds of {last.round_s:.0f} s)" if last.round_s else ")"))
    return (f"takes: about {fmt_duration(own.first_verdict_s, 'span')} to a first verdict, "
            f"at most {fmt_duration(sizing.limit_s, 'span')} (estimate: rounds of {sizing.round_s:.0f} s "
            f"and {fmt_duration(sizing.prepare_s, 'span')} of preparing on 2 cores)")


def _short_budget(named: Experiment, own: Plan, last: LastRun | None) -> list[str]:
    """A warning where this machine's rounds (its last run here) make a first verdict need more
    than the experiment's budget, with the margin for slower rounds its plan keeps."""
    if last is None or not last.round_s or last.refused_for is not None:  # a refusal says its own budget
        return []
    needed = here(named, last).first_verdict_s - named.sizing.prepare_s
    if needed * MARGIN <= own.budget_s:
        return []
    warning = (f"warning: at rounds of {last.round_s:.0f} s here, a first verdict needs about "
               f"{fmt_duration(needed, 'span')} of measuring, {fmt_duration(needed * MARGIN, 'span')} with the "
               f"{MARGIN - 1:.0%} margin a budget keeps for slower rounds, more than its budget of "
               f"{minutes(own.budget_s)}: give --budget {math.ceil(needed * MARGIN / 60)}m, fewer workloads (-w), "
               "or --partial")
    return [warning]


def span(named: Experiment, size: str = DEFAULT_SIZE, last: LastRun | None = None) -> str:
    """How long a run takes, for the listing's one line: '5-8m' from its first verdict to its limit
    (its last run here when there is one: '4m44s'), '*' where the round time is an estimate."""
    if last is not None and last.refused_for is None:
        return fmt_duration(last.seconds, "span")
    sizing = named.sizing_at(size)
    try:
        first = named.plan(size=size).first_verdict_s
    except DoesNotFit:
        return "?"
    low, high = math.ceil(first / 60), math.ceil(sizing.limit_s / 60)
    text = f"{low}-{high}m" if high < 120 else f"{low / 60:.1f}-{high / 60:g}h"
    return text + ("*" if sizing.estimated else "")


def _rounds(most: int) -> str:
    """The plan's last look as the run will use it."""
    return (f"rounds up to what the budget pays for, at least {most}" if planned_at_run(most) else
            f"at most {most} rounds")


def _writeup_lines(named: Experiment, last: LastRun | None) -> list[str]:
    """What --size writeup changes and how long it takes (or that the experiment cuts nothing)."""
    if not named.cuts:
        return ["at the write-up's sizes (--size writeup): the same run, nothing is cut"]
    sizing = named.sizing_at(WRITEUP_SIZE)
    own = here(named, last, size=WRITEUP_SIZE)
    how = (f"estimated: rounds of {sizing.round_s:.0f} s scaled from the workloads" if sizing.estimated else
           f"rounds of {sizing.round_s:.0f} s measured on 2 cores")
    took = (_took(named, own, last, WRITEUP_SIZE) if last is not None else
            f"takes about {fmt_duration(own.first_verdict_s, 'span')} to a first verdict, at most "
            f"{fmt_duration(sizing.limit_s, 'span')} ({how})")
    return [f"at the write-up's sizes (--size writeup): {named.writeup_note}; {took}, with a budget of "
            f"{minutes(own.budget_s)} and {_rounds(own.max_rounds)}"]


def how_long(named: Experiment, last: LastRun | None, last_writeup: LastRun | None = None) -> list[str]:
    """`shootout experiments`' lines: how long it takes here, its budget, the size it uses, and
    the same at the write-up's sizes."""
    own = named.plan()
    sizing = named.sizing
    rounds = f"a first verdict after round {own.first_look}; budget {minutes(own.budget_s)}, {_rounds(own.max_rounds)}"
    delta = ([f"threshold: ±{named.threshold * 100:g}% instead of 1% ({named.threshold_why})"]
             if named.threshold is not None else [])
    return ([_took(named, own, last), rounds, *_short_budget(named, own, last)]
            + ([f"size: {sizing.note}"] if sizing.note else []) + _writeup_lines(named, last_writeup) + delta)
