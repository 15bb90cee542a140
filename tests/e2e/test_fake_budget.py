"""A budget that cannot pay for the rounds a first verdict needs stops after the warm-up, and says why."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from shootout.base.errors import UsageError
from shootout.base.model import Config, RunSettings
from shootout.judge.analysis import analyze, run_design
from shootout.measure import events as ev
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.stats.verdict import Verdict
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

TRIAL_S = 0.05  # 3 workloads x 2 configurations: a round takes about 0.3 s, the first deciding one 3 s


def slow(argv, config, n):
    time.sleep(TRIAL_S)
    return f"value: {100 + n % 3}\n"


def slower(argv, config, n):
    """Trials of twice the time: a budget of 2 s pays for the warm-up (0.6 s), not one workload's rounds."""
    time.sleep(2 * TRIAL_S)
    return f"value: {100 + n % 3}\n"


def start(tmp_path, emulated=False, script=slow, **settings):
    SCRIPTS["budget"] = script
    options = (("script", "budget"), *((("emulated", "yes"),) if emulated else ()))
    configs = [Config(name=n, target="fake", options=options) for n in ("A", "B")]
    works = [CommandWorkload({"name": f"w{i}", "command": ["w"], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
             for i in range(3)]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    seen: list[ev.Event] = []
    runner = Runner(store, Journal(tmp_path), on_event=seen.append)
    # repeats=0: the budgets here are a few seconds; waits for a quiet machine (even without the
    # monitor) would spend them on a busy one
    request = RunRequest(configs, works, RunSettings(seed=2, **{"repeats": 0, **settings}))
    return runner, request, store, seen


def test_a_budget_short_of_the_first_deciding_round_stops_before_measuring(tmp_path):
    runner, request, store, seen = start(tmp_path, script=slower, budget_s=2.0)
    with pytest.raises(UsageError) as err:
        runner.start(request)
    run = store.get_run("last")
    # Not the minimum 6 rounds: the first round the sequential rule over 3 comparisons can decide at.
    first = run_design(run, headline=True).first_look()
    assert first is not None and first > 6
    assert f"cannot pay for the {first} rounds a first verdict needs" in str(err.value)
    assert "--budget" in err.value.hint and "--partial" in err.value.hint
    (estimate,) = [e for e in seen if isinstance(e, ev.BudgetEstimate)]
    assert estimate.rounds == first and not estimate.enough
    # priced from the measured round: at least the trials' own sleeps, more under load
    assert first * 6 * 2 * TRIAL_S * 0.9 <= estimate.needed_s < first * 6 * 2 * TRIAL_S * 5
    assert {t.spec.round for t in store.trials(run.id, include_warmup=True)} == {0}  # the warm-up only
    assert run.status == "failed"


def test_partial_measures_anyway_and_claims_no_suite_verdict(tmp_path):
    runner, request, store, seen = start(tmp_path, budget_s=1.5, partial=True)
    run_id = runner.start(request)
    assert any(isinstance(e, ev.BudgetEstimate) and not e.enough for e in seen)
    analysis = analyze(store.get_run(run_id), store.trials(run_id))
    rounds = {r for c in analysis.comparisons for r in c.log_ratios}
    assert 2 <= len(rounds) < 6  # measured, but short of the minimum
    assert all(c.estimate is None for c in analysis.comparisons)
    assert all(s.geomean is None and not s.by_category for s in analysis.summaries)


def test_a_budget_that_covers_the_minimum_says_so_and_goes_on(tmp_path):
    runner, request, store, seen = start(tmp_path, budget_s=60)
    run_id = runner.start(request)
    (estimate,) = [e for e in seen if isinstance(e, ev.BudgetEstimate)]
    assert estimate.enough and estimate.left_s > estimate.needed_s
    assert store.get_run(run_id).status == "complete"


def test_an_emulated_run_is_not_refused_for_the_verdicts_it_cannot_give(tmp_path):
    """Emulated (TCG) VMs give no verdicts by design: the run measures for its budget and says so."""
    runner, request, store, seen = start(tmp_path, emulated=True, budget_s=1.5)
    run_id = runner.start(request)
    assert not any(isinstance(e, ev.BudgetEstimate) for e in seen)
    assert any(isinstance(e, ev.Notice) and "A, B emulated: no verdicts; one round whatever the budget" in e.text for e in seen)
    assert store.get_run(run_id).status == "complete"
    rounds = {t.spec.round for t in store.trials(run_id)}
    assert len(rounds) >= 2  # measured until the budget was spent
    analysis = analyze(store.get_run(run_id), store.trials(run_id))
    assert all("emulated" in c.flags for c in analysis.comparisons)
    # not judged, with the reason, never "inconclusive" with rounds it would need
    assert all(c.verdict == Verdict.NOT_JUDGED and "emulated results never get verdicts" in c.why
               for c in analysis.comparisons if c.headline)


def test_an_emulated_run_measures_one_round_whatever_the_budget(tmp_path):
    """Under TCG a warm-up may take longer than the whole budget: the run still checks
    function, the warm-up and one round of every pair, and completes."""
    runner, request, store, seen = start(tmp_path, emulated=True, budget_s=0.05)
    run_id = runner.start(request)
    assert store.get_run(run_id).status == "complete"
    trials = store.trials(run_id, include_warmup=True)
    assert Counter(t.spec.round for t in trials) == {0: 6, 1: 6}


class SlowToPrepare(CommandWorkload):
    """A workload whose preparation (an install, an image, a compile) outlasts the budget."""

    def prepare(self, ctx):
        time.sleep(1.0)
        return super().prepare(ctx)


def test_preparing_does_not_spend_the_budget_of_the_measuring(tmp_path):
    runner, request, store, seen = start(tmp_path, budget_s=1.5, partial=True)
    request.workloads[:] = [SlowToPrepare(w.definition) for w in request.workloads]  # 6 s of preparing in all
    run_id = runner.start(request)
    rounds = {t.spec.round for t in store.trials(run_id)}
    assert len(rounds) >= 2 and store.get_run(run_id).status == "complete"


def test_a_budget_spent_by_the_warm_up_is_an_error_not_a_complete_run(tmp_path):
    runner, request, store, seen = start(tmp_path, budget_s=0.1, partial=True)
    with pytest.raises(UsageError, match="no round was measured"):
        runner.start(request)
    assert store.get_run("last").status == "failed"


def test_show_and_report_of_a_refused_run_say_it_was_refused_for_its_budget(tmp_path):
    """Such a run was shown as 'too few rounds' and its summary chart said 'each of 0 workloads'."""
    import io
    import re

    from rich.console import Console

    from shootout.report.charts import summary_chart
    from shootout.report.markdown import render_markdown
    from shootout.report.terminal import show

    runner, request, store, _ = start(tmp_path, script=slower, budget_s=2.0)
    with pytest.raises(UsageError) as err:
        runner.start(request)
    run = store.get_run("last")
    analysis = analyze(run, store.trials(run.id))
    wanted = re.search(r"--budget (\d+m)", err.value.hint).group(1)
    said = f"run {run.id} was refused for its budget"
    for terminal in (True, False):
        out = io.StringIO()
        show(analysis, Console(file=out, width=100, force_terminal=terminal, color_system=None))
        text = " ".join(out.getvalue().split())
        assert said in text and f"--budget {wanted} would pay" in text and "too few rounds" not in text
    markdown = render_markdown(analysis, {"(summary)": "summary.png"})
    assert said in markdown and "too few rounds" not in markdown
    svg = summary_chart(analysis, "svg", text_as_paths=False).decode()
    assert "refused for its budget" in svg and "0 workloads" not in svg


def test_show_json_of_a_refused_run_is_json_that_says_it_was_refused(tmp_path, capsys):
    """A refused run is a run: `show --json` gave an "error:" line and exit 1 where `show` exits 0."""
    import json

    from shootout.cli.stored import show_analysis

    runner, request, store, _ = start(tmp_path, budget_s=1.5)
    with pytest.raises(UsageError):
        runner.start(request)
    run = store.get_run("last")
    show_analysis(store, "last", as_json=True)
    rows = json.loads(capsys.readouterr().out)
    assert [(r["workload"], r["config"]) for r in rows] == [("w0", "B"), ("w1", "B"), ("w2", "B")]
    assert all(r["verdict"] == "refused" and r["speedup"] is None and r["rounds"] == 0 for r in rows)
    (why,) = {r["flags"][0] for r in rows}
    assert why.startswith(f"run {run.id} was refused for its budget") and "--budget" in why
    assert rows[0]["metric"] == "value" and rows[0]["headline"] and rows[0]["baseline"] == "A"


class Sized(CommandWorkload):
    """A workload whose work is sized by default parameters and calibration (as the browser's)."""

    interrupt = False

    def default_params(self, facts):
        return {"size": 3, "runs": 0}

    def calibrate(self, ctx, prepared):
        if Sized.interrupt:
            raise KeyboardInterrupt  # where a SIGKILL during set-up would land
        return {**ctx.params, "runs": 2}

    def argv(self, prepared, params):
        return [*super().argv(prepared, params), str(params["size"] * params["runs"])]


def test_a_run_killed_while_preparing_resumes_with_its_work_sized_again(tmp_path):
    runner, request, store, seen = start(tmp_path, budget_s=60)
    request.workloads[:] = [Sized(w.definition) for w in request.workloads]
    Sized.interrupt = True
    with pytest.raises(KeyboardInterrupt):
        runner.start(request)
    Sized.interrupt = False
    run = store.get_run("last")
    assert run.status == "interrupted" and store.trials(run.id, include_warmup=True) == []
    run_id = runner.resume(run, [Sized(w.definition) for w in request.workloads])
    resumed = store.get_run(run_id)
    assert resumed.status == "complete"
    assert all(p["size"] == 3 and p["runs"] == 2 for p in resumed.params.values())


def test_a_budget_in_seconds_is_said_in_seconds(tmp_path):
    runner, request, _, _ = start(tmp_path, script=slower, budget_s=2.0)
    with pytest.raises(UsageError) as err:
        runner.start(request)
    assert str(err.value).startswith("the budget of 2 s cannot pay for the "), str(err.value)


def uneven(argv, config, n):
    """w0 takes twenty times as long as w1 and w2."""
    time.sleep(TRIAL_S * (10 if argv[-1] == "w0" else 0.5))
    return f"value: {100 + n % 3}\n"


def test_a_budget_short_for_every_workload_measures_those_it_can_decide(tmp_path):
    """Not nothing: the workloads whose rounds the budget pays for up to the first verdict are
    measured; the one it cannot pay for is left out, named, with the budget that would."""
    runner, request, store, seen = start(tmp_path, script=uneven, budget_s=4.0)
    request.workloads[:] = [CommandWorkload({**w.definition, "command": ["w", w.spec.name]})
                            for w in request.workloads]
    run_id = runner.start(request)
    run = store.get_run(run_id)
    assert run.status == "complete" and run.budget_refused is None
    assert set(run.lost_workloads) == {"w0"}
    assert run.lost_workloads["w0"].reason.startswith("left out: the budget of 4 s pays for the first verdict of "
                                                      "w1, w2 only; --budget ")
    measured = {(t.spec.workload, t.spec.round) for t in store.trials(run_id)}
    assert {w for w, _ in measured} == {"w1", "w2"}
    (notice,) = [e.text for e in seen if isinstance(e, ev.Notice) and "left out" in e.text]
    assert "measuring w1, w2" in notice and "left out: w0" in notice
    assert run.lost_workloads["w0"].left_out  # not failed: show and report say the budget left it out
    from shootout.report.lostworkloads import lost_notices, lost_phrase
    analysis = analyze(run, store.trials(run_id))
    assert lost_phrase(analysis) == "without w0, which the budget left out"
    assert lost_notices(analysis)[0].startswith("w0 was not measured: left out: the budget of 4 s pays for ")
    # resumed (as after a kill, with its budget back), the run does not measure what it left out
    store.update_run(run_id, status="interrupted", elapsed_s=0.0)
    Runner(store, Journal(tmp_path)).resume(store.get_run(run_id), request.workloads)
    assert not any(t.spec.workload == "w0" for t in store.trials(run_id))



def test_an_estimate_fits_the_budget_only_with_its_margin():
    """The main job once fitted its 13 rounds in 3m41s of 3m43s left, had 3 trials interrupted
    by other programs, and ended with no verdict at all: what is left must hold the margin too."""
    assert not ev.BudgetEstimate(rounds=13, round_s=17.0, needed_s=221.0, left_s=223.0).enough
    assert ev.BudgetEstimate(rounds=13, round_s=17.0, needed_s=221.0, left_s=221.0 * ev.BUDGET_MARGIN).enough
