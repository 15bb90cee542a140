"""An experiment carries its run: a budget and rounds sized from its measured round time, within
12 minutes (rpi64 8); the user's --budget wins, and one below its first verdict is refused naming
the experiment's own figure; an experiment that needs root says so in one line before anything."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from shootout.base.errors import UsageError
from shootout.base.model import Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.experiments import EXPERIMENTS, experiment
from shootout.experiments.limits import (
    LastRun,
    how_long,
    last_run,
    own_budget,
    run_limits,
)
from shootout.experiments.sizing import (
    DEFAULT_BUDGET_S,
    MARGIN,
    DoesNotFit,
    Sizing,
    budget_seconds,
    plan,
)
from shootout.stats import Design


def test_the_plan_is_what_the_budget_pays_for():
    sizing = Sizing(round_s=30, prepare_s=60, limit_s=8 * 60)
    assert budget_seconds(sizing) == 420  # the limit less the preparation, in half-minutes
    got = plan(sizing, family=5)
    assert got.budget_s == 420 and got.max_rounds == 13  # 14 rounds of 30 s, the warm-up one of them
    assert got.first_look == Design(0.95, 5, (6, 13)).first_look()
    assert got.first_verdict_s == 60 + (got.first_look + 1) * 30


def test_where_the_first_verdict_fits_at_50_looks_the_plan_is_50_rounds():
    """The budget ends the run; rounds beyond what a whole round pays for are reached only when
    decided workloads have left the rounds (rpi64's sha1-sparse ran alone at 0.5 s a round)."""
    sizing = Sizing(round_s=20, prepare_s=60, limit_s=8 * 60)
    got = plan(sizing, family=6)
    first = Design(0.95, 6, (6, 50)).first_look()
    assert got.max_rounds == 50 and got.first_look == first == 14
    assert (first + 1) * 20 * MARGIN <= got.budget_s < (first + 1) * 30 * MARGIN  # at 30 s it would not fit
    assert plan(Sizing(round_s=30, prepare_s=60, limit_s=8 * 60), family=6).max_rounds == 13


def test_the_issue_s_rounds_do_not_fit_eight_minutes():
    # rpi64 as the issue found it: rounds of 1m25s, a first verdict 11 rounds away
    with pytest.raises(DoesNotFit, match="pays for 3 rounds of 85 s, fewer than the 6 an interval needs"):
        plan(Sizing(round_s=85, prepare_s=60, limit_s=8 * 60), family=5)
    with pytest.raises(DoesNotFit, match="more than the budget of 660 s"):
        plan(Sizing(round_s=85, prepare_s=60, limit_s=12 * 60), family=5)


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_reaches_a_first_verdict_within_its_limit(name):
    named = experiment(name)
    limit = 8 * 60 if name == "rpi64" else 12 * 60
    assert named.sizing.limit_s <= limit
    assert named.sizing.measured  # where its round time comes from
    own = named.plan()  # DoesNotFit when its rounds are too long for the limit
    assert own.first_verdict_s <= named.sizing.limit_s
    assert named.sizing.prepare_s + own.budget_s <= named.sizing.limit_s


def test_rpi64_says_which_sizes_it_uses_instead_of_the_write_up_s():
    note = experiment("rpi64").sizing.note
    assert "23.5-minute" in note and "minute" in note
    params = experiment("rpi64").settings().params
    assert params["lame"]["minutes"] < 23.5 and params["flac"]["minutes"] < 23.5


def test_without_budget_the_experiment_s_own_with_it_the_user_s():
    own = experiment("rpi64").plan()
    assert run_limits("rpi64", None, None) == (own.budget_s, own.max_rounds)
    assert run_limits("rpi64", None, 30) == (own.budget_s, 30)
    assert run_limits("rpi64", 3600.0, None) == (3600.0, 50)
    assert run_limits(None, None, None) == (DEFAULT_BUDGET_S, 50)
    assert run_limits(None, 90.0, 12) == (90.0, 12)


def test_a_budget_below_the_first_verdict_names_the_experiment_s_own():
    own = experiment("rpi64").plan()
    with pytest.raises(UsageError) as refused:
        run_limits("rpi64", 60.0, None)
    text = str(refused.value)
    assert text.startswith("--budget 1m cannot pay for experiment rpi64's first verdict: about ")
    assert f"its own budget is {own.budget_s / 60:g}m" in text and "\n" not in text
    assert "leave --budget out" in refused.value.hint and "--partial" in refused.value.hint
    assert run_limits("rpi64", 60.0, None, partial=True) == (60.0, 50)


def _trial(r: int, workload: str, config: str, start: float, wall: float) -> Trial:
    return Trial(TrialSpec(r, 0, workload, config), {"v": 1.0}, wall, wall, 0.0, 1, 1, 0, "", start)


def _run(run_id: int, name: str, machine: str, created: float) -> Run:
    return Run(run_id, created, "complete", RunSettings(experiment=name), [], [], {},
               RunFacts(machine={"machine_id": machine}))


def test_the_last_run_here_is_what_experiments_and_the_budget_check_use():
    trials = {2: [_trial(0, "w", "a", 1010, 40), _trial(1, "w", "a", 1060, 50), _trial(1, "w", "b", 1110, 50),
                  _trial(2, "w", "a", 1170, 40), _trial(2, "w", "b", 1230, 30),  # round 2: 90 s
                  _trial(3, "w", "a", 1260, 40), _trial(3, "w", "b", 1300, 40),
                  _trial(4, "w", "b", 1340, 40)]}  # one workload left: not a full round
    runs = [_run(3, "rpi64", "elsewhere", 2000), _run(2, "rpi64", "here", 1000), _run(1, "vpn", "here", 500)]
    last = last_run(runs, lambda i: trials.get(i, []), "rpi64", "here")
    assert last == LastRun(2, 380.0, 90.0)  # the median of the full rounds: 100, 90 and 80 s
    assert last_run(runs, lambda i: trials.get(i, []), "pi3desk", "here") is None
    # rounds of 90 s here: the estimate's first verdict no longer fits a budget it did
    named = experiment("rpi64")
    own = named.plan()
    estimate = own.first_verdict_s - named.sizing.prepare_s
    assert run_limits("rpi64", estimate, None) == (estimate, 50)
    with pytest.raises(UsageError, match="its last run here, run 2"):
        run_limits("rpi64", estimate, None, last=last)
    lines = how_long(named, last)
    assert lines[0] == "takes here: 6 min 20 s from its start to its last trial (its last run here, run 2; rounds of 90 s)"
    assert how_long(named, None)[0].startswith("takes: about ")


def test_the_refusal_after_the_warm_up_names_the_experiment_s_budget():
    own = experiment("pi3desk").plan()
    assert own_budget("pi3desk").startswith(f" (experiment pi3desk's own budget is {own.budget_s / 60:g}m")
    assert own_budget("") == "" and own_budget("nosuch") == ""


def test_shootout_experiments_says_how_long_each_takes(tmp_path, monkeypatch):
    from shootout.cli.main import app

    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))
    outs = [CliRunner().invoke(app, ["experiments", name]).output for name in EXPERIMENTS]
    assert all(out.count("  takes: about ") == 1 and out.count("; budget ") == 1 for out in outs)
    assert any("  size: " in out for out in outs)
    assert not any("2026" in out or "x86-64 VM" in out for out in outs)  # no maintainers' machine, no dates


def test_run_refuses_a_small_budget_before_anything_is_made(tmp_path, monkeypatch):
    env = {**os.environ, "SHOOTOUT_HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "shootout", "run", "--experiment", "rpi64", "--budget", "1m"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: --budget 1m cannot pay for experiment rpi64's first verdict")
    assert "its own budget is" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "userspaces").exists() or not any((tmp_path / "userspaces").iterdir())


@pytest.mark.parametrize("name", sorted(n for n, e in EXPERIMENTS.items() if e.needs_root))
def test_an_experiment_that_needs_root_says_so_in_one_line(name, monkeypatch):
    from shootout.request.preparation import prepare
    from shootout.request.request import Wish, build_request

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    told: list[str] = []
    with pytest.raises(UsageError) as refused:
        prepare(build_request(Wish(experiment=name, settings=RunSettings()), told.append), told.append, told.append)
    assert str(refused.value).startswith(f"experiment {name} needs root: ")
    assert "\n" not in str(refused.value) and told == []  # before anything is made or said


def test_pi3desk_without_btrfs_is_one_line_naming_it_before_anything(monkeypatch):
    from shootout.request.preparation import prepare
    from shootout.request.request import Wish, build_request
    from shootout.parts import throttle
    from shootout.storage import scratch
    from shootout.system import emulator

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(scratch, "kernel_has", lambda fs: fs != "btrfs")
    # a real machine with an io controller, also in the emulated arm64 check's chroot
    monkeypatch.setattr(emulator, "here", lambda: None)
    monkeypatch.setattr(throttle.ThrottlePart, "problem", lambda self, spec: None)
    told: list[str] = []
    with pytest.raises(UsageError) as refused:
        prepare(build_request(Wish(experiment="pi3desk", settings=RunSettings()), told.append), told.append, told.append)
    text = str(refused.value)
    assert text.startswith("nothing to compare: of the 4 configurations only ext4 can run here; "
                           "btrfs-zstd, btrfs-zlib, btrfs-zlib-dirty cannot: this kernel has no btrfs")
    assert "\n" not in text and told == []


def test_a_last_run_refused_after_its_warm_up_is_what_experiments_says():
    """browser32's listing kept promising "about 9 min" after a run here that took 82 s a round
    and was refused for its budget: that run counts, its warm-up round measured the round."""
    from shootout.base.model import BudgetRefusal

    refused = _run(4, "browser32", "here", 1000)
    refused.budget_refused = BudgetRefusal(budget_s=570.0, rounds=9, wanted_min=17)
    trials = {4: [_trial(0, "w", "a", 1010, 40), _trial(0, "w", "b", 1051, 41)]}  # the warm-up: 82 s
    last = last_run([refused], lambda i: trials.get(i, []), "browser32", "here")
    assert last is not None and last.round_s == 82.0 and last.refused_for == 17
    lines = how_long(experiment("browser32"), last)
    assert lines[0] == ("takes here: its last run here, run 4, was refused for its budget after a warm-up round of "
                        "82 s; --budget 17m would pay for its first verdict")
    assert not any("about 9 min" in line or line.startswith("takes: about") for line in lines)


def test_rounds_here_longer_than_the_budget_pays_for_are_a_warning():
    """rpi64's listing showed rounds of 38 s here against its 7-minute budget without a word."""
    named = experiment("rpi64")
    own = named.plan()
    fits = LastRun(2, 300.0, named.sizing.round_s)
    assert not any(line.startswith("warning") for line in how_long(named, fits))
    round_s = round(own.budget_s / (own.first_look + 1) / 1.1)  # 26 s: fits the budget, not its margin
    slow = LastRun(2, 600.0, float(round_s))
    (warning,) = [line for line in how_long(named, slow) if line.startswith("warning")]
    needed = (own.first_look + 1) * round_s  # the warm-up and the rounds up to the first look
    assert needed < own.budget_s < needed * 1.2  # within the budget, not within its margin for slower rounds
    assert warning == (f"warning: at rounds of {round_s} s here, a first verdict needs about {needed // 60:.0f} min "
                       f"{needed % 60:.0f} s of measuring, {needed * 1.2 // 60:.0f} min {needed * 1.2 % 60:.0f} s "
                       f"with the 20% margin a budget keeps for slower rounds, more than its budget of "
                       f"{own.budget_s / 60:g}m: give --budget {-(-needed * 1.2 // 60):.0f}m, fewer workloads (-w), "
                       "or --partial")
