"""The last look planned from the budget after the warm-up (measure/roundplan.py)."""

from __future__ import annotations

import dataclasses

from shootout.base.model import RunSettings
from shootout.measure.roundplan import LAST_CAP, said, workload_lasts
from shootout.request.settings import Asked, resolve_settings


def alone(left_s: float, round_s: float, floor: int = 50) -> int:
    """The last look of a run of one workload, its first look at round 13."""
    return workload_lasts({"w": round_s}, round_s, left_s, 13, floor)["w"]


def test_the_last_look_is_what_the_budget_pays_for_between_the_floor_and_the_cap():
    assert alone(240.0, 1.0) == 200  # 240 s / (1 s x the margin 1.2)
    assert alone(240.0, 10.0) == 50  # pays for 20: the default stays the floor
    assert alone(240.0, 0.1) == LAST_CAP
    assert alone(240.0, 0.0) == 50


def test_a_short_workload_beside_long_ones_gets_the_rounds_the_budget_pays_for_once_they_stop():
    # the main job's warm-up on a 2-core VM: a round of 6.8 s, sha1-sparse 0.7 s of its 6.0 s of trials
    work = {"membw": 4.0, "intmix": 0.8, "ptrtree": 0.5, "sha1-sparse": 0.7}
    lasts = workload_lasts(work, 6.8, 233.0, 13, 50)
    # 233 s - 13 rounds x 6.8 s x 1.2 leaves 126.9 s; sha1-sparse's 0.79 s a round pays for 133 more
    assert lasts["sha1-sparse"] == 13 + 133
    assert lasts["membw"] == 50  # pays for 13 + 28: the floor
    assert lasts["ptrtree"] > lasts["sha1-sparse"] > lasts["intmix"] > lasts["membw"]
    # a budget spent by the first looks leaves every workload at the floor
    assert set(workload_lasts(work, 6.8, 100.0, 13, 50).values()) == {50}


def test_the_plan_is_said_in_one_short_line():
    s = RunSettings(budget_s=240.0, rounds_by_budget=True)
    assert said(s) == ""  # not planned yet
    planned = dataclasses.replace(s, max_rounds=180, planned_round_s=1.1)
    assert said(planned) == "rounds up to 180: what the budget pays for at 1.1 s a round"
    assert "the most" in said(dataclasses.replace(planned, max_rounds=LAST_CAP, planned_round_s=0.2))
    assert "the default" in said(dataclasses.replace(planned, max_rounds=50, planned_round_s=30.0))
    assert len(said(planned)) <= 80
    assert said(dataclasses.replace(planned, rounds_by_budget=False)) == ""
    own = dataclasses.replace(planned, max_rounds=146, planned_round_s=6.8,
                              last_looks={"membw": 50, "intmix": 124, "ptrtree": 50, "sha1-sparse": 146})
    assert said(own) == ("rounds up to 146 for sha1-sparse, 124 for intmix, 50 for membw and ptrtree: "
                         "what the budget pays for each once the others stop, at 6.8 s a round")


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
