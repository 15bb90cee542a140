"""The rounds each workload is projected to need at the noise measured so far, and what the
budget pays for: the ETA's rounds, and one notice after round 2 when the budget falls short.

Advice only: the projection (stats/projection.py) reads the comparisons' values, so it never
moves a look; the design stays as planned before the first measured round.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from shootout.base.units import fmt_duration
from shootout.configs.groups import grouped
from shootout.judge.analysis import metric_log_ratios, metric_values, run_design, seconds_per_round
from shootout.measure import events as ev
from shootout.measure.runstate import Live
from shootout.stats.projection import round_noise, rounds_needed
from shootout.workloads import cpuclock

ADVICE_ROUND = 2  # the notice comes after rounds 1 and 2: the first with a spread to measure


def measured(live: Live, name: str) -> list[tuple[float, float, int]]:
    """Per headline comparison of a workload with a spread so far: (per-round noise as the
    log-ratio sd, mean log ratio, rounds)."""
    run = live.run
    spec = live.workloads[name].spec
    metric = cpuclock.headline(run, spec)
    base = run.configs[0].name
    found = []
    for config in run.configs[1:]:
        ratios = list(metric_log_ratios(live.trials, spec, metric, base, config.name).values())
        sides = [[math.log(v) for v in metric_values(live.trials, name, metric, c) if v > 0]
                 for c in (base, config.name)]
        if (sigma := round_noise(ratios, sides)) is not None:
            found.append((sigma, sum(ratios) / len(ratios), len(ratios)))
    return found


def noise(live: Live, name: str) -> float | None:
    """The largest per-round noise of a workload's headline comparisons (log-ratio sd), or None."""
    return max((sigma for sigma, _, _ in measured(live, name)), default=None)


def projected_rounds(live: Live, names: list[str]) -> dict[str, int | None]:
    """Per workload, the round by which it is projected to be decided (None: not by the last
    look); workloads without a measured spread yet are left out."""
    if len(live.run.configs) < 2 or grouped(live.run):
        return {}
    out: dict[str, int | None] = {}
    for name in names:
        design = run_design(live.run, True, name)
        if found := measured(live, name):
            needs = [rounds_needed(sigma, live.run.settings.threshold, design, shift, seen) if sigma > 0
                     else design.first_look() for sigma, shift, seen in found]
            out[name] = None if None in needs else max(n for n in needs if n is not None)
    return out


def advise(live: Live, active: list[str], emit: Callable[[ev.Event], None]) -> None:
    """After round 2: when the rounds projected at the noise so far cost more than the budget
    left, say so once, with the budget that would pay for them."""
    s = live.run.settings
    needs = projected_rounds(live, active)
    configs = [c.name for c in live.run.configs]
    if not needs:
        return
    # the noisiest workload names the advice; rounds beyond its last look cannot be bought
    name = max(needs, key=lambda w: (needs[w] or s.last_look(w) + 1, w))
    last = s.last_look(name)
    rounds = needs[name] or last
    cost = 0.0
    for workload, n in needs.items():
        per_round = seconds_per_round(live.trials, workload, configs) or 0.0
        cost += max(0, (n or s.last_look(workload)) - ADVICE_ROUND) * per_round * ev.BUDGET_MARGIN
    left = max(0.0, s.budget_s - live.elapsed())
    if cost <= left:
        return
    paid = ADVICE_ROUND + math.floor((rounds - ADVICE_ROUND) * left / cost)
    sigma = noise(live, name) or 0.0
    wanted = math.ceil((live.elapsed() + cost) / 60)
    beyond = "" if needs[name] else f" (more than the {last} rounds of the rule)"
    emit(ev.Notice(f"at the noise measured so far (cv {sigma:.1%}), a verdict on {name} needs about "
                   f"{rounds} rounds{beyond} ({fmt_duration(live.elapsed() + cost, 'rough')}); the budget of "
                   f"{fmt_duration(s.budget_s, 'span')} pays for {paid}: --budget {wanted}m would"))
