"""A timed command's headline clock: CPU time when its warm-up shows it CPU-bound, else wall time."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec

from shootout.base.runfacts import RunFacts
from shootout.execution.process import ProcResult
from shootout.judge.analysis import analyze
from shootout.stats import Verdict
from shootout.workloads import cpuclock
from shootout.workloads.user import CommandWorkload

WORK = CommandWorkload({"name": "work", "command": ["./work", "1000"]})


def trial(rnd: int, config: str, wall: float, cpu: float) -> Trial:
    return Trial(TrialSpec(rnd, 0, "work", config), {"wall": wall, "cpu": cpu}, wall, cpu * 0.98, cpu * 0.02,
                 1000, 1, 0, "", 0.0)


def run_of(warm: dict[str, tuple[float, float]], rounds: int = 0, load: float = 0.0,
           seed: int = 1) -> tuple[Run, list[Trial]]:
    """Warm-up (wall, cpu) per configuration, then rounds of an A/A pair whose CPU time varies
    by 0.3% and whose wall time also pays for an on/off load (`load`: the chance a trial waited)."""
    rng = np.random.default_rng(seed)
    trials = [trial(0, c, w, p) for c, (w, p) in warm.items()]
    for r in range(1, rounds + 1):
        for c in warm:
            cpu = 0.1 * math.exp(0.003 * rng.normal())
            wall = cpu * (1.0 + (rng.uniform(0.2, 0.9) if rng.random() < load else 0.002))
            trials.append(trial(r, c, wall, cpu))
    run = Run(1, 0.0, "complete", RunSettings(), [Config("A"), Config("B")], [WORK.spec], {"work": {}}, RunFacts())
    return run, trials


def test_a_command_only_computing_in_the_warm_up_is_judged_by_its_cpu_time() -> None:
    run, trials = run_of({"A": (0.100, 0.099), "B": (0.101, 0.0995)})
    (line,) = cpuclock.record(run, [WORK.spec], trials)
    assert cpuclock.headline(run, WORK.spec) == "cpu"
    assert "CPU time (user + sys), wall time beside it" in line and "within 5%" in line and "0.990 on A" in line


def test_waiting_or_parallel_commands_keep_their_wall_time() -> None:
    for warm in ({"A": (0.100, 0.099), "B": (0.100, 0.090)},  # B waited 10% of its time
                 {"A": (0.100, 0.190), "B": (0.100, 0.195)},  # two threads in parallel
                 {"A": (1.0, 0.001), "B": (1.0, 0.001)}):  # sleeps
        run, trials = run_of(warm)
        (line,) = cpuclock.record(run, [WORK.spec], trials)
        assert cpuclock.headline(run, WORK.spec) == "wall", warm
        assert "the headline is wall time" in line


def test_the_choice_is_kept_and_a_regex_workload_has_none() -> None:
    run, trials = run_of({"A": (0.100, 0.099), "B": (0.100, 0.099)})
    cpuclock.record(run, [WORK.spec], trials)
    slow = [trial(0, c, 1.0, 0.5) for c in "AB"]  # a resumed run does not choose again
    assert cpuclock.record(run, [WORK.spec], slow) == [] and cpuclock.headline(run, WORK.spec) == "cpu"
    regex = CommandWorkload({"name": "r", "command": "r", "regex": "v: ([0-9.]+)", "unit": "ops/s"})
    assert cpuclock.pick(regex.spec, slow) is None and cpuclock.headline(run, regex.spec) == "value"


def test_the_command_records_its_cpu_time_beside_its_wall_time() -> None:
    result = ProcResult(("./work",), 0, "", "", 0.2, 0.15, 0.04, 1000, 1, 0.0)
    assert WORK.parse(result, {}) == {"wall": 0.2, "cpu": 0.15 + 0.04}
    idle = ProcResult(("sleep",), 0, "", "", 0.2, 0.0, 0.0, 1000, 1, 0.0)
    assert WORK.parse(idle, {}) == {"wall": 0.2}  # no CPU time to compare: never a zero value
    assert [m.name for m in WORK.spec.metrics] == ["wall", "cpu"] and WORK.spec.headline == "wall"


def test_under_on_off_load_the_cpu_headline_decides_where_wall_time_cannot() -> None:
    """A/A, 40% of trials waited 20-90% longer in wall time: judged by wall time it stays
    inconclusive; with the CPU-time headline (chosen from a quiet warm-up) it is "same",
    the wall time shown beside it as an estimate, and the rule stated in the notes."""
    run, trials = run_of({"A": (0.100, 0.099), "B": (0.100, 0.0995)}, rounds=50, load=0.4)
    before = {c.metric: c for c in analyze(run, trials).comparisons}
    assert before["wall"].headline and before["wall"].verdict is Verdict.INCONCLUSIVE
    cpuclock.record(run, [WORK.spec], trials)
    analysis = analyze(run, trials)
    after = {c.metric: c for c in analysis.comparisons}
    assert after["cpu"].headline and after["cpu"].verdict is Verdict.SAME
    assert not after["wall"].headline and after["wall"].verdict is Verdict.ESTIMATE
    assert any("the headline is the command's CPU time" in n for n in analysis.notes)


def test_a_computing_command_on_a_busy_machine_qualifies_by_its_wait_for_a_cpu() -> None:
    """Other programs kept it from a CPU 40% of the time: CPU time 0.06 of 0.1 s wall, run delay
    0.04 s, so it only computed. Without the run delay it could not tell; a waiting command's
    run delay is small."""
    run, trials = run_of({"A": (0.100, 0.06), "B": (0.100, 0.06)})
    assert cpuclock.pick(WORK.spec, trials)["clock"] == "wall"
    delayed = [dataclasses.replace(t, observed={cpuclock.SCHED: {"run_delay_s": 0.04}}) for t in trials]
    assert cpuclock.pick(WORK.spec, delayed) == {"clock": "cpu", "cpu_per_wall": {"A": 1.0, "B": 1.0}, "trials": 1}
    waiting = [dataclasses.replace(t, observed={cpuclock.SCHED: {"run_delay_s": 0.002}}) for t in trials]
    assert cpuclock.pick(WORK.spec, waiting)["clock"] == "wall"


def test_the_run_delay_is_read_before_the_command_is_reaped() -> None:
    """On this machine: a computing child's CPU time plus its run delay is its wall time."""
    from shootout.execution.process import run_process
    count = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"
    result = run_process(["sh", "-c", count], env={"PATH": "/usr/bin:/bin"})
    assert result.run_delay_s is not None and result.run_delay_s >= 0
    assert abs(result.user_s + result.sys_s + result.run_delay_s - result.wall_s) < 0.05 * result.wall_s + 0.01


def test_one_interrupted_warm_up_trial_does_not_choose_the_clock() -> None:
    """A single-threaded loop whose warm-up on A was interrupted (CPU + wait only 60% of its wall
    time, e.g. a stop and continue) but computed alone in every round: CPU time, from the
    trials of all rounds before the first look, not from that one trial."""
    run, trials = run_of({"A": (0.100, 0.060), "B": (0.100, 0.099)}, rounds=6)
    (line,) = cpuclock.record(run, [WORK.spec], trials)
    assert cpuclock.headline(run, WORK.spec) == "cpu", line
    assert "median of 7 trials" in line


def test_a_parallel_command_with_one_quiet_trial_keeps_its_wall_time() -> None:
    """Two threads in parallel (CPU time twice the wall time) in every round but one: wall time."""
    run, trials = run_of({"A": (0.100, 0.099), "B": (0.100, 0.0995)}, rounds=6)
    parallel = [dataclasses.replace(t, values={"wall": t.values["wall"], "cpu": 2 * t.values["cpu"]})
                if t.spec.round > 0 else t for t in trials]
    cpuclock.record(run, [WORK.spec], parallel)
    assert cpuclock.headline(run, WORK.spec) == "wall"


def test_a_declared_clock_is_kept_whatever_the_trials_show() -> None:
    """clock = "cpu" or "wall" in a [[workload]]: that clock, said to be declared, from the
    first trial on; the store keeps it with the workload, so a resumed run and compare judge it too."""
    import pytest

    from shootout.base.errors import UsageError
    from shootout.store.serialize import workload_from_dict, workload_to_dict

    for clock, shown in (("cpu", {"A": (0.100, 0.050), "B": (0.100, 0.050)}),  # waits, yet declared cpu
                         ("wall", {"A": (0.100, 0.099), "B": (0.100, 0.099)})):  # computes, yet declared wall
        declared = CommandWorkload({"name": "work", "command": ["./work"], "clock": clock})
        run, trials = run_of(shown, rounds=6)
        run = dataclasses.replace(run, workloads=[declared.spec])
        assert cpuclock.headline(run, declared.spec) == clock  # before any choice is recorded
        (line,) = cpuclock.record(run, [declared.spec], trials)
        assert cpuclock.headline(run, declared.spec) == clock and f'declares (clock = "{clock}")' in line
        assert workload_from_dict(workload_to_dict(declared.spec)).clock == clock
    for bad in ({"clock": "user"}, {"clock": "cpu", "regex": "v: ([0-9.]+)", "unit": "ops/s"}):
        with pytest.raises(UsageError, match="clock must be"):
            CommandWorkload({"name": "w", "command": "w", **bad})
