"""When the rounds stop: the budget's check after the warm-up, the time left to the first
round that can decide, and the workloads still undecided after the minimum rounds."""

from __future__ import annotations

import math
from collections.abc import Callable

from shootout.base.errors import UsageError
from shootout.base.model import Trial
from shootout.base.runfacts import BudgetRefusal, LostWorkload
from shootout.base.units import fmt_duration
from shootout.configs.groups import grouped
from shootout.judge.analysis import (
    is_emulated,
    metric_log_ratios,
    run_design,
)
from shootout.measure import events as ev
from shootout.measure.runstate import Live
from shootout.stats import decided
from shootout.workloads import cpuclock

_ROUND_OVERHEAD = 1.1  # a round's time beyond its trials' wall time (clock check, commits)
_PAUSED = 2.0  # a warm-up spanning more than twice its trials' time was interrupted and resumed


def round_seconds(trials: list[Trial]) -> float:
    """How long a round of these trials takes: the span they ran in (trials plus what the
    runner does between them; shorter than their summed time when machines measured in
    parallel, lanes.py), or their summed wall time when the span holds a pause."""
    work = sum(t.wall_s for t in trials)
    span = max(t.started_at + t.wall_s for t in trials) - min(t.started_at for t in trials)
    return span if max(t.wall_s for t in trials) <= span <= _PAUSED * work else work * _ROUND_OVERHEAD


def _at_once(live: Live) -> float:
    """How many trials ran at once in the latest round (machines in parallel), at least 1."""
    latest = max((t.spec.round for t in live.trials), default=None)
    trials = [t for t in live.trials if t.spec.round == latest]
    if not trials:
        return 1.0
    return max(1.0, sum(t.wall_s for t in trials) / max(round_seconds(trials), 1e-9))


def emulated(live: Live) -> list[str]:
    """The run's configurations that ran emulated (TCG VMs): function only, no verdicts."""
    return [c.name for c in live.run.configs if is_emulated(live.run.facts.side(c.name))]


def undecided(live: Live, names: list[str]) -> list[str]:
    """Workloads whose headline metric is not decided yet against some configuration.

    Decided: a verdict under the run's sequential rule, or an interval already narrower
    than the precision (see stats.design for why stopping on either keeps its promise).
    Sub-metrics do not keep a workload running: they get no verdict.
    """
    s = live.run.settings
    if len(live.run.configs) < 2 or grouped(live.run):
        return []  # nothing to compare, or machines as the units: the minimum rounds (groups.py)
    base = live.run.configs[0].name
    out = []
    for name in names:
        spec = live.workloads[name].spec
        design = run_design(live.run, True, name)
        for config in live.run.configs[1:]:
            metric = cpuclock.headline(live.run, spec)
            ratios = metric_log_ratios(live.trials, spec, metric, base, config.name)
            if not ratios and not any(metric in t.values for t in live.trials if t.spec.workload == name):
                continue  # a headline these parameters do not produce
            if not decided(design.estimate(list(ratios.values())), s.threshold, s.precision):
                out.append(name)
                break
    return out


def check_budget(live: Live, active: list[str], emit: Callable[[ev.Event], None],
                 own_budget: Callable[[str], str] = lambda name: "") -> list[str]:
    """After the warm-up: can the budget pay for the rounds up to the first that can give a
    verdict? Say what they need. When it cannot, measure the workloads it can pay for (the
    quickest first: the round's time is what the budget buys) and say which are left out; stop
    before measuring when it cannot pay for one (unless the user asked for a partial run).
    Returns the workloads to measure."""
    s = live.run.settings
    warmup = [t for t in live.trials if t.spec.round == 0 and t.spec.workload in active]
    measured = {t.spec.round for t in live.trials if t.spec.round > 0}
    first = first_deciding_round(live)
    rounds = max(0, first - len(measured))
    if not warmup or not rounds or len(live.run.configs) < 2:
        return active  # one configuration has no verdicts to lose
    if emulated_here := emulated(live):
        # function only, no verdicts by design: nothing to pay for, the run measures its budget
        emit(ev.Notice(f"{', '.join(emulated_here)} emulated: no verdicts; one round whatever the budget, "
                       f"more while the budget of {fmt_duration(s.budget_s, 'span')} lasts"))
        return active
    round_s = round_seconds(warmup)
    estimate = ev.BudgetEstimate(rounds, round_s, rounds * round_s, max(0.0, s.budget_s - live.elapsed()))
    emit(estimate)
    if estimate.enough or s.partial:
        return active
    wanted = _wanted(live, estimate.needed_s)
    kept = affordable(warmup, round_s, rounds, estimate.left_s / ev.BUDGET_MARGIN)
    if not kept:
        # kept with the run (saved as it ends), so show and report say why it has no verdicts
        live.run.budget_refused = BudgetRefusal(budget_s=s.budget_s, rounds=first, wanted_min=wanted)
        raise UsageError(
            f"the budget of {fmt_duration(s.budget_s, 'span')} cannot pay for the {first} rounds a first verdict "
            "needs under the sequential rule, so no workload would get a verdict; nothing was measured beyond "
            "the warm-up",
            f"run again with --budget {wanted}m, or fewer workloads (-w), or --partial to measure anyway"
            + own_budget(s.experiment))
    return _leave_out(live, active, kept, first, wanted, emit)


def _wanted(live: Live, needed_s: float) -> int:
    """The budget in whole minutes that pays for the rounds still needed, with a margin."""
    return math.ceil((live.elapsed() + needed_s * ev.BUDGET_MARGIN) / 60)


def work_by_workload(trials: list[Trial]) -> dict[str, float]:
    """The trials' wall time summed per workload: each one's share of a round."""
    work: dict[str, float] = {}
    for t in trials:
        work[t.spec.workload] = work.get(t.spec.workload, 0.0) + t.wall_s
    return work


def affordable(warmup: list[Trial], round_s: float, rounds: int, left_s: float) -> list[str]:
    """The most workloads whose `rounds` rounds fit in left_s, the quickest first: each workload's
    share of a round's time (round_s) is its share of the warm-up's trial time."""
    work = work_by_workload(warmup)
    total = sum(work.values()) or 1.0
    kept: list[str] = []
    spent = 0.0
    for name in sorted(work, key=lambda n: (work[n], n)):
        spent += rounds * round_s * work[name] / total
        if spent > left_s:
            break
        kept.append(name)
    return kept


def _leave_out(live: Live, active: list[str], kept: list[str], first: int, wanted: int,
               emit: Callable[[ev.Event], None]) -> list[str]:
    """Measure only `kept`: the others are recorded as left out (show and report name them)."""
    s = live.run.settings
    budget = fmt_duration(s.budget_s, "span")
    left = [name for name in active if name not in kept]
    measuring = ", ".join(name for name in active if name in kept)
    for name in left:
        live.failed.add(name)
        live.run.lost_workloads[name] = LostWorkload(
            None, f"left out: the budget of {budget} pays for the first verdict of {measuring} only; "
                  f"--budget {wanted}m measures it too", left_out=True)
    emit(ev.Notice(f"the budget of {budget} cannot pay for the {first} rounds a first verdict of every workload "
                   f"needs: measuring {measuring}, the quickest; left out: {', '.join(left)} "
                   f"(--budget {wanted}m would measure {'it' if len(left) == 1 else 'them'} too)"))
    return [name for name in active if name in kept]


def first_deciding_round(live: Live, workload: str | None = None) -> int:
    """The first round at which the run's sequential rule can give a verdict (stats/design.py):
    the workload's, else the earliest of any workload's (the rule's before its last looks are planned)."""
    s = live.run.settings
    names: list[str | None] = [workload] if workload else [*s.last_looks] or [None]
    return min(max(s.min_rounds, run_design(live.run, True, name).first_look()
                   or (s.max_rounds if name is None else s.last_look(name))) for name in names)


def eta(live: Live, round_index: int, in_round: int, active: int) -> float | None:
    """Seconds left until the rounds the workloads still measured (active of them) are projected
    to be decided by at the noise measured so far (live.projected), else until the first round
    that can decide (more rounds may follow if undecided)."""
    if not live.trial_seconds:
        return None
    per_trial = sum(live.trial_seconds[-50:]) / len(live.trial_seconds[-50:])
    s = live.run.settings
    targets = [min(s.last_look(name), max(first_deciding_round(live, name), n or s.last_look(name)))
               for name, n in live.projected.items()][:active]
    targets += [first_deciding_round(live)] * (active - len(targets))
    rounds_left = sum(max(0, n - round_index) for n in targets)  # workload-rounds
    left = (rounds_left * len(live.run.configs) + in_round) * per_trial / _at_once(live)
    return min(left, max(0.0, live.run.settings.budget_s - live.elapsed()))
