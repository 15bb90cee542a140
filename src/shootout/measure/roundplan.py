"""The last look of a run that was given no max_rounds: what its budget pays for.

A fixed last look of 50 rounds left short trials undecided: a 0.2 s workload stopped at
round 50 with a +-0.7-1.2% interval although its budget paid for hundreds of rounds, and
"same within +-1%" was out of reach. So without --max-rounds (or [run] max_rounds) the last
look is planned once, after the warm-up: the rounds the budget left pays for at the warm-up's
round time, with the runner's margin, never fewer than the default (the floor) nor more than
LAST_CAP. Only the warm-up's timings go in, never a comparison's values, so the looks are
fixed before the first measured round and the sequential rule keeps its promise
(stats/design.py); the plan is stored with the run's settings, so resume, show and report
use the same design.

Each workload gets its own last look. One last look for the whole round kept a short workload
beside long ones at the floor: in the main job sha1-sparse's share of a 6.8 s round is 0.7 s,
and it ended inconclusive at round 50 with 80 s of its 4-minute budget left. So each workload's
last look is what the budget pays for were it the only one still measured once every workload
has had the rounds to its first look. If the others go on, the budget stops it earlier, which
costs the rule nothing; a later last look only makes its early looks a little stricter (a
family of 4: the first look moves from round 13 to 15 at 219 rounds). Each comparison keeps its
own share of alpha (Bonferroni), whatever its looks, so the family keeps its promise; the
geomean, looked at when its shortest workload stops, takes the earliest last look's rule. With
one workload this is the single last look above.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from shootout.base.model import RunSettings
from shootout.base.units import fmt_duration
from shootout.measure import events as ev
from shootout.measure.runstate import Live
from shootout.measure.stopping import emulated, first_deciding_round, round_seconds, work_by_workload

# Up to 400 looks: the first look moves from round 11 to 15 (one comparison; 14 to 18 for
# 13), the last's level barely changes (97.1% -> 97.4%), and the boundary's calibration takes
# 0.4 s once per process (2 cores at load 4; 0.03 s at 50 looks, 2.9 s at 1000: the grid of
# stats/spending.py grows with the last look). At 3% noise per round, +2% and A/A "same" are
# decided in 99% of seeded runs by round 200 (by round 50: 59% and 16%).
LAST_CAP = 400


def workload_lasts(work: dict[str, float], round_s: float, left_s: float, first: int, floor: int,
                   cap: int = LAST_CAP) -> dict[str, int]:
    """Each workload's last look: the rounds left_s pays for were it measured alone after round
    `first` (every workload measured until then at round_s), within floor..cap. Its share of a
    round's time is its share of the warm-up's trial time (`work`, seconds per workload)."""
    total = sum(work.values())
    after = max(0.0, left_s - first * round_s * ev.BUDGET_MARGIN)
    lasts = {}
    for name, seconds in work.items():
        share = round_s * seconds / total if total > 0 else 0.0
        alone = floor if share <= 0.0 else first + math.floor(after / (share * ev.BUDGET_MARGIN))
        lasts[name] = max(floor, min(cap, alone))
    return lasts


def said(s: RunSettings) -> str:
    """The planned last looks in one line, as the run and show say it ('' when not planned)."""
    if not s.rounds_by_budget or not s.planned_round_s:
        return ""
    at = f"{s.planned_round_s:.1f} s" if s.planned_round_s < 10 else fmt_duration(s.planned_round_s, "span")
    if own := s.own_last_looks():
        by_last: dict[int, list[str]] = {}
        for name, last in sorted(own.items()):
            by_last.setdefault(last, []).append(name)
        listing = ", ".join(f"{last} for {' and '.join(names)}" for last, names in sorted(by_last.items(), reverse=True))
        return f"rounds up to {listing}: what the budget pays for each once the others stop, at {at} a round"
    if s.max_rounds >= LAST_CAP:
        return f"rounds up to {s.max_rounds}, the most: the budget pays for more at {at} a round"
    if s.max_rounds * s.planned_round_s * ev.BUDGET_MARGIN > s.budget_s:
        return f"rounds up to {s.max_rounds}, the default: the budget pays for fewer at {at} a round"
    return f"rounds up to {s.max_rounds}: what the budget pays for at {at} a round"


def plan_last_look(live: Live, active: list[str], emit: Callable[[ev.Event], None]) -> bool:
    """Plan each workload's last look from the warm-up's round time (once; kept in the run's
    settings). True when it was planned now, so the caller stores the settings."""
    s = live.run.settings
    if not s.rounds_by_budget or s.planned_round_s or len(live.run.configs) < 2 or emulated(live):
        return False
    warmup = [t for t in live.trials if t.spec.round == 0 and t.spec.workload in active]
    if not warmup:
        return False
    round_s = round_seconds(warmup)
    lasts = workload_lasts(work_by_workload(warmup), round_s, max(0.0, s.budget_s - live.elapsed()),
                           first_deciding_round(live), s.max_rounds)
    live.run.settings = dataclasses.replace(s, max_rounds=max(lasts.values()), last_looks=lasts,
                                            planned_round_s=round_s)
    emit(ev.Notice(said(live.run.settings)))
    return True
