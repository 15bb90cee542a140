"""How long a round takes when machines measure in parallel (lanes.py): the budget's check and
the ETA use the round's span, not its trials' summed time."""

from __future__ import annotations

import pytest

from shootout.base.model import Trial, TrialSpec
from shootout.measure.stopping import round_seconds


def _trial(config: str, started: float, wall: float) -> Trial:
    return Trial(TrialSpec(0, 0, "w", config), {"v": 1.0}, wall, 0, 0, 0, 0, 0, "", started)


def test_a_round_of_machines_in_parallel_takes_its_span() -> None:
    # two machines, 72 s trials side by side (the cloud-openssl warm-up): 73 s, not 145 s
    assert round_seconds([_trial("a", 100.0, 72.5), _trial("b", 100.1, 72.6)]) == pytest.approx(72.7)


def test_a_sequential_round_takes_its_span_and_a_paused_one_its_trials_time() -> None:
    assert round_seconds([_trial("a", 100.0, 10.0), _trial("b", 110.5, 10.0)]) == 20.5
    paused = round_seconds([_trial("a", 100.0, 10.0), _trial("b", 500.0, 10.0)])
    assert 20.0 < paused < 23.0  # a resume in between: the trials' time and the overhead


def test_the_eta_of_four_machines_in_parallel_is_a_quarter_of_their_trials_time() -> None:
    import time

    from shootout.base.model import Config, Run, RunSettings, WorkloadSpec
    from shootout.base.runfacts import RunFacts
    from shootout.measure.runstate import Live
    from shootout.measure.stopping import eta

    configs = [Config(name=f"m{i}", target="fake") for i in range(4)]
    settings = RunSettings(seed=1, budget_s=36000)
    run = Run(id=1, created_at=time.time(), status="running", settings=settings, configs=configs,
              workloads=[WorkloadSpec(name="w", category="user", description="", metrics=(), headline="v")], params={}, facts=RunFacts())
    trials = [_trial(c.name, 100.0 + i * 0.01, 60.0) for i, c in enumerate(configs)]  # side by side
    live = Live(run, {}, {}, {}, set(), trials, trial_seconds=[t.wall_s for t in trials])
    sequential = Live(run, {}, {}, {}, set(), [_trial(c.name, 100.0 + i * 61, 60.0) for i, c in enumerate(configs)],
                      trial_seconds=[60.0] * 4)
    assert eta(live, 1, 0, 1) == pytest.approx(eta(sequential, 1, 0, 1) / 4, rel=0.01)
