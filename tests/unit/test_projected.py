"""The rounds projected at the noise measured so far: the notice after round 2 and the ETA
(measure/projected.py), on seeded fake trials."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.measure import events as ev
from shootout.measure.projected import advise, noise, projected_rounds
from shootout.measure.runstate import Live
from shootout.measure.stopping import eta
from shootout.workloads.user import CommandWorkload

TRIAL_S = 0.5


def live_after(rounds: int, cv: float, budget_s: float = 240.0, max_rounds: int = 200, seed: int = 1) -> Live:
    """One workload under A and B, a warm-up and `rounds` rounds of trials whose values carry
    per-trial noise cv (so the per-round log ratio has about cv * sqrt(2))."""
    rng = np.random.default_rng(seed)
    work = CommandWorkload({"name": "w", "command": ["w"], "regex": r"v: ([0-9.]+)", "unit": "ops/s"})
    configs = [Config(name=n, target="fake") for n in ("A", "B")]
    run = Run(id=1, created_at=time.time(), status="running", configs=configs, workloads=[work.spec], params={},
              settings=RunSettings(seed=1, budget_s=budget_s, max_rounds=max_rounds), facts=RunFacts())
    trials = []
    clock = 1000.0
    for r in range(rounds + 1):
        for i, c in enumerate(("A", "B")):
            value = 100.0 * math.exp(cv * rng.normal())
            trials.append(Trial(TrialSpec(r, i, "w", c), {work.spec.headline: value}, TRIAL_S, 0, 0, 0, 0, 0, "",
                                clock))
            clock += TRIAL_S
    live = Live(run, {"w": work}, {}, {}, set(), trials, trial_seconds=[TRIAL_S] * len(trials))
    live.elapsed_before = (rounds + 1) * 2 * TRIAL_S
    live.session_start = time.monotonic()
    return live


def test_the_noise_after_two_rounds_is_near_the_true_one_on_average():
    found = [noise(live_after(2, 0.03, seed=s), "w") for s in range(200)]
    assert all(f is not None for f in found)
    assert 0.6 * 0.03 * math.sqrt(2) < float(np.median(found)) < 1.4 * 0.03 * math.sqrt(2)  # type: ignore[arg-type]


def test_no_projection_before_two_rounds():
    assert projected_rounds(live_after(1, 0.03), ["w"]) == {}


def test_noisy_trials_the_budget_cannot_pay_for_get_one_notice_with_the_budget_that_would():
    live = live_after(2, 0.02, budget_s=60.0)
    (n,) = projected_rounds(live, ["w"]).values()
    assert n is not None and n > 40
    seen: list[ev.Event] = []
    advise(live, ["w"], seen.append)
    (notice,) = seen
    assert isinstance(notice, ev.Notice)
    text = notice.text
    assert text.startswith("at the noise measured so far (cv ") and "a verdict on w needs about" in text
    assert f"needs about {n} rounds" in text and "the budget of 1 min pays for" in text
    wanted = int(text.split("--budget ")[1].split("m")[0])
    assert wanted * 60 >= n * 2 * TRIAL_S  # the budget it names pays for the projected rounds


def test_noise_no_round_of_the_rule_can_decide_says_so():
    live = live_after(2, 0.2, budget_s=60.0)
    assert projected_rounds(live, ["w"]) == {"w": None}
    seen: list[ev.Event] = []
    advise(live, ["w"], seen.append)
    (notice,) = seen
    assert "needs about 200 rounds (more than the 200 rounds of the rule)" in notice.text  # type: ignore[attr-defined]


def test_quiet_trials_the_budget_pays_for_get_no_notice():
    live = live_after(2, 0.002, budget_s=240.0)
    seen: list[ev.Event] = []
    advise(live, ["w"], seen.append)
    assert seen == []


def test_the_eta_counts_the_projected_rounds_not_only_the_first_look():
    live = live_after(3, 0.015, budget_s=36000.0)
    before = eta(live, 3, 0, 1)
    live.projected = projected_rounds(live, ["w"])
    (n,) = live.projected.values()
    assert n is not None and n > 30
    after = eta(live, 3, 0, 1)
    assert before is not None and after is not None and after > before
    assert after == pytest.approx((n - 3) * 2 * TRIAL_S, rel=0.05)
