"""Without max_rounds the last look is planned after the warm-up from the budget, and kept."""

from __future__ import annotations

import random
import time

from shootout.base.model import Config, RunSettings
from shootout.judge.analysis import run_design
from shootout.measure import events as ev
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload


def noisy(sleep_s: float):
    def trial(argv, config, n):
        time.sleep(sleep_s)
        return f"value: {100 * (1 + random.Random(n).gauss(0, 0.05)):.3f}\n"
    return trial


def start(tmp_path, sleep_s: float = 0.01, **settings):
    SCRIPTS["roundplan"] = noisy(sleep_s)
    configs = [Config(name=n, target="fake", options=(("script", "roundplan"),)) for n in ("A", "B")]
    work = CommandWorkload({"name": "w", "command": ["w"], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    seen: list[ev.Event] = []
    runner = Runner(store, Journal(tmp_path), on_event=seen.append)
    request = RunRequest(configs, [work], RunSettings(seed=3, repeats=0, counters=False, **settings))
    return runner, request, store, seen


def test_short_trials_plan_more_rounds_than_the_default_and_the_run_keeps_them(tmp_path):
    runner, request, store, seen = start(tmp_path, budget_s=8.0, rounds_by_budget=True)
    run_id = runner.start(request)
    run = store.get_run(run_id)
    assert 50 < run.settings.max_rounds <= 400 and run.settings.planned_round_s > 0
    (line,) = [e.text for e in seen if isinstance(e, ev.Notice) and e.text.startswith("rounds up to")]
    assert line.startswith(f"rounds up to {run.settings.max_rounds}")
    assert run_design(run, headline=True).looks == (6, run.settings.max_rounds)
    rounds = {t.spec.round for t in store.trials(run_id)}
    assert max(rounds) <= run.settings.max_rounds


def test_a_given_max_rounds_is_kept(tmp_path):
    runner, request, store, seen = start(tmp_path, budget_s=8.0, max_rounds=20)
    run = store.get_run(runner.start(request))
    assert run.settings.max_rounds == 20 and not run.settings.planned_round_s
    assert not any(isinstance(e, ev.Notice) and e.text.startswith("rounds up to") for e in seen)


def test_show_says_the_planned_rounds_in_one_line(tmp_path):
    import io

    from rich.console import Console

    from shootout.judge.analysis import analyze
    from shootout.report.terminal import show

    runner, request, store, seen = start(tmp_path, budget_s=8.0, rounds_by_budget=True)
    run_id = runner.start(request)
    out = io.StringIO()
    show(analyze(store.get_run(run_id), store.trials(run_id)), Console(file=out, width=80))
    planned = store.get_run(run_id).settings.max_rounds
    (line,) = [line for line in out.getvalue().splitlines() if line.startswith("rounds up to")]
    assert line.startswith(f"rounds up to {planned}") and len(line) <= 80


def test_noise_the_budget_cannot_pay_for_is_said_once_after_round_2(tmp_path):
    # trials of 0.05 s: the 5% noise needs more rounds than 3 s pay for, however fast the machine
    runner, request, store, seen = start(tmp_path, sleep_s=0.05, budget_s=3.0, rounds_by_budget=True)
    runner.start(request)
    advice = [e.text for e in seen if isinstance(e, ev.Notice) and e.text.startswith("at the noise measured")]
    assert len(advice) == 1 and "--budget" in advice[0]
    # said as round 3 starts, from rounds 1 and 2
    started = [e.round for e in seen if isinstance(e, ev.RoundStarted)]
    said_at = next(i for i, e in enumerate(seen) if isinstance(e, ev.Notice) and e.text in advice)
    assert started[:4] == [0, 1, 2, 3]
    assert [e.round for e in seen[:said_at] if isinstance(e, ev.RoundStarted)] == [0, 1, 2]



def two_workloads(tmp_path, **settings):
    """A long and a short workload, A/A at 5% noise: neither is decided early."""
    def trial(argv, config, n):
        time.sleep(0.02 if argv[0] == "long" else 0.001)
        return f"value: {100 * (1 + random.Random(f'{config}-{n}').gauss(0, 0.05)):.3f}\n"

    SCRIPTS["ownlooks"] = trial
    configs = [Config(name=n, target="fake", options=(("script", "ownlooks"),)) for n in ("A", "B")]
    works = [CommandWorkload({"name": n, "command": [n], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
             for n in ("long", "short")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    runner = Runner(store, Journal(tmp_path), on_event=lambda e: None)
    run_id = runner.start(RunRequest(configs, works, RunSettings(seed=3, repeats=0, counters=False, **settings)))
    rounds = {name: max(t.spec.round for t in store.trials(run_id) if t.spec.workload == name)
              for name in ("long", "short")}
    return store, run_id, rounds


def test_a_short_workload_beside_a_long_one_gets_a_later_last_look_of_its_own(tmp_path):
    import io

    from rich.console import Console

    from shootout.judge.analysis import analyze
    from shootout.report.terminal import show

    store, run_id, rounds = two_workloads(tmp_path, budget_s=5.0, rounds_by_budget=True)
    run = store.get_run(run_id)
    lasts = run.settings.last_looks
    assert 50 <= lasts["long"] < lasts["short"] == run.settings.max_rounds
    assert run_design(run, True, "short").looks == (6, lasts["short"])
    assert run_design(run, True, "long").looks == (6, lasts["long"])
    assert rounds["long"] <= lasts["long"] and rounds["short"] <= lasts["short"]  # the budget may stop them first
    out = io.StringIO()
    show(analyze(run, store.trials(run_id)), Console(file=out, width=200))
    text = out.getvalue()
    assert f"rounds up to {lasts['short']} for short, {lasts['long']} for long" in text
    # one rule line: what the two rules share, then each workload's looks
    assert text.count("verdict intervals: ") == 1
    assert "; long " in text and f"at round {lasts['long']}; short " in text and f"at round {lasts['short']}\n" in text


def test_each_workload_is_measured_up_to_its_own_last_look_and_no_further(tmp_path):
    from shootout.judge.analysis import analyze

    store, run_id, rounds = two_workloads(tmp_path, budget_s=120.0, max_rounds=20,
                                          last_looks={"long": 8, "short": 20})
    assert rounds == {"long": 8, "short": 20}
    (long,) = [c for c in analyze(store.get_run(run_id), store.trials(run_id)).comparisons if c.workload == "long"]
    assert long.estimate is not None and long.estimate.n == 8
