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
