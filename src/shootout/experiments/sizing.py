"""How long a named experiment runs: its budget and rounds, sized from measured round times.

An experiment carries the seconds one of its rounds took on a 2-core x86-64 machine and what
preparing it took from a fresh start (userspaces, tools, scratches). From these, plan() gives
the budget (the whole run within the experiment's limit: 12 minutes, rpi64 8) and its
rounds: 50 where the first verdict fits at 50 looks, else the most that budget pays for (fewer
looks let the sequential rule decide a round or two earlier). An experiment whose first
verdict would not fit its limit fails the unit tests, so its parameters must shrink (and it
says which size it uses instead of the write-up's, and why).
The user's own --budget and --max-rounds win over the plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shootout.measure.events import BUDGET_MARGIN as MARGIN  # the runner's, for the same rounds
from shootout.stats import Design

MAX_ROUNDS = 50  # `shootout run`'s own default
# `shootout run --size`: the experiment's own (cut to fit its limit here), or the write-up's
DEFAULT_SIZE, WRITEUP_SIZE = "default", "writeup"
SIZES = (DEFAULT_SIZE, WRITEUP_SIZE)
DEFAULT_BUDGET_S = 4 * 60.0  # `shootout run --budget`'s default outside an experiment


@dataclass(frozen=True)
class Sizing:
    round_s: float  # one round of every workload under every configuration, measured on 2 cores
    prepare_s: float  # before the warm-up, from a fresh start: userspaces, tools, images, scratches
    limit_s: float = 12 * 60  # the whole run, preparation included
    measured: str = ""  # where round_s and prepare_s were measured (or how they were estimated)
    estimated: bool = False  # True: round_s scaled from the workloads' trial times, not a measured round
    note: str = ""  # which size it uses where the write-up's full size cannot fit, and why


@dataclass(frozen=True)
class Plan:
    budget_s: float  # --budget: the measuring, warm-up included (preparation is not budgeted)
    max_rounds: int
    first_look: int  # the first round whose interval can give a verdict
    first_verdict_s: float  # preparation, warm-up and the rounds up to first_look, at round_s


class DoesNotFit(ValueError):
    """The rounds up to a first verdict do not fit the experiment's limit."""


def planned_at_run(rounds: int) -> bool:
    """Whether a plan of `rounds` leaves the last look to the run, planned from its warm-up
    (measure/roundplan.py): at the default's 50; fewer are what the budget pays for already."""
    return rounds >= MAX_ROUNDS


def budget_seconds(sizing: Sizing) -> float:
    """The measuring's share of the limit, in whole half-minutes."""
    return math.floor((sizing.limit_s - sizing.prepare_s) / 30) * 30


def first_verdict_seconds(sizing: Sizing, first_look: int) -> float:
    """From start to the first round that can decide: preparation, warm-up (a round), rounds."""
    return sizing.prepare_s + (first_look + 1) * sizing.round_s


def plan(sizing: Sizing, family: int, confidence: float = 0.95, min_rounds: int = 6) -> Plan:
    """The budget and rounds of an experiment whose run has `family` headline comparisons;
    DoesNotFit when its first verdict (with the runner's margin) is beyond the budget.

    The rounds: the default's 50 where the first verdict still fits at 50 looks. The budget
    ends the run anyway, and a workload that is decided leaves the rounds, so the one left
    gets many more short rounds than a whole round's time pays for (rpi64's sha1-sparse: 0.5 s
    rounds after the others' 18 s ones, stopped at round 13 with 3 minutes left). Else the
    rounds the budget pays for: fewer looks move the first verdict a round or two earlier."""
    budget = budget_seconds(sizing)
    rounds = min(MAX_ROUNDS, math.floor(budget / sizing.round_s) - 1)  # the warm-up is a round too
    if rounds < min_rounds:
        raise DoesNotFit(f"a budget of {budget:.0f} s pays for {max(rounds, 0)} rounds of {sizing.round_s:.0f} s, "
                         f"fewer than the {min_rounds} an interval needs")
    first = None
    for last in (MAX_ROUNDS, rounds):
        first = Design(confidence, family, (min_rounds, last)).first_look()
        if first is not None and (first + 1) * sizing.round_s * MARGIN <= budget:
            return Plan(budget, last, first, first_verdict_seconds(sizing, first))
    raise DoesNotFit(f"a first verdict on {family} comparisons needs round {first or rounds}: "
                     f"{(first or rounds) + 1} rounds of {sizing.round_s:.0f} s (x{MARGIN}) are more than "
                     f"the budget of {budget:.0f} s")


def minutes(seconds: float) -> str:
    """A budget as --budget takes it: '7m', '6.5m', '45s'."""
    return f"{seconds:.0f}s" if seconds < 60 else f"{seconds / 60:g}m"
