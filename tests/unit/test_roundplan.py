"""The last look planned from the budget after the warm-up (measure/roundplan.py)."""

from __future__ import annotations

import dataclasses

from shootout.base.model import RunSettings
from shootout.measure.roundplan import LAST_CAP, affordable_last, said
from shootout.request.settings import Asked, resolve_settings


def test_the_last_look_is_what_the_budget_pays_for_between_the_floor_and_the_cap():
    assert affordable_last(240.0, 1.0, 50) == 200  # 240 s / (1 s x the margin 1.2)
    assert affordable_last(240.0, 10.0, 50) == 50  # pays for 20: the default stays the floor
    assert affordable_last(240.0, 0.1, 50) == LAST_CAP
    assert affordable_last(240.0, 0.0, 50) == 50


def test_the_plan_is_said_in_one_short_line():
    s = RunSettings(budget_s=240.0, rounds_by_budget=True)
    assert said(s) == ""  # not planned yet
    planned = dataclasses.replace(s, max_rounds=180, planned_round_s=1.1)
    assert said(planned) == "rounds up to 180: what the budget pays for at 1.1 s a round"
    assert "the most" in said(dataclasses.replace(planned, max_rounds=LAST_CAP, planned_round_s=0.2))
    assert "the default" in said(dataclasses.replace(planned, max_rounds=50, planned_round_s=30.0))
    assert len(said(planned)) <= 80
    assert said(dataclasses.replace(planned, rounds_by_budget=False)) == ""


def test_only_runs_given_no_max_rounds_plan_from_the_budget():
    assert resolve_settings(Asked()).rounds_by_budget
    assert not resolve_settings(Asked(max_rounds=50)).rounds_by_budget


def _live(settings: RunSettings, round_s: float = 0.5):
    import time

    from shootout.base.model import Config, Run, Trial, TrialSpec
    from shootout.base.runfacts import RunFacts
    from shootout.measure.runstate import Live

    configs = [Config(name=n, target="fake") for n in ("A", "B")]
    run = Run(id=1, created_at=time.time(), status="running", settings=settings, configs=configs, workloads=[],
              params={}, facts=RunFacts())
    trials = [Trial(TrialSpec(0, i, "w", c), {"v": 1.0}, round_s / 2, 0, 0, 0, 0, 0, "", 100.0 + i * round_s / 2)
              for i, c in enumerate(("A", "B"))]
    return Live(run, {}, {}, {}, set(), trials)


def test_planned_once_from_the_warm_up_and_kept_on_resume():
    from shootout.measure.roundplan import plan_last_look

    live = _live(RunSettings(budget_s=120.0, rounds_by_budget=True))
    seen: list = []
    assert plan_last_look(live, ["w"], seen.append)
    planned = live.run.settings
    # 120 s / (0.5 s x 1.2), less the moment since the run started
    assert planned.max_rounds in (199, 200) and planned.planned_round_s == 0.5
    assert [e.text for e in seen] == [f"rounds up to {planned.max_rounds}: what the budget pays for at 0.5 s a round"]
    # resumed: the stored plan stands, whatever the warm-up looks like now
    resumed = _live(planned, round_s=2.0)
    assert not plan_last_look(resumed, ["w"], seen.append) and resumed.run.settings == planned
    given = _live(RunSettings(budget_s=120.0, max_rounds=30))
    assert not plan_last_look(given, ["w"], seen.append) and given.run.settings.max_rounds == 30
