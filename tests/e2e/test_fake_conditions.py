"""A clock drop seen by the monitor during some trials flags exactly the metrics it touched."""

from __future__ import annotations

import time

from shootout.base.model import Config, RunSettings
from shootout.conditions.monitor import Monitor
from shootout.judge.analysis import analyze
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload


def conditions(flags: tuple[str, ...]) -> tuple[str, ...]:
    """The condition flags among a comparison's flags (the fake trials are all short)."""
    return tuple(f for f in flags if f != "short-trial")


def sample(mhz: float) -> dict:
    return {"t": time.time(), "mhz_max": mhz, "temp_c": 50.0, "steal_pct": 0.0, "runq": 1}


def test_clock_drop_mid_run_flags_only_the_affected_metric(tmp_path):
    # never samples by itself, and its own readings (around each trial) find nothing under
    # tmp_path: the script injects the samples
    monitor = Monitor(interval_s=3600, root=tmp_path)
    rounds_seen = {"hot": 0}

    def script(argv, config, n):
        name = argv[-1]
        monitor.add(sample(3000.0))
        if name == "hot" and config == "B":
            rounds_seen["hot"] += 1
            if rounds_seen["hot"] == 4:  # the fourth trial of "hot" on B ran while throttled
                monitor.add(sample(2500.0))
        time.sleep(0.002)
        monitor.add(sample(3000.0))
        return "value: 100\n"

    SCRIPTS["conditions"] = script
    configs = [Config(name=n, target="fake", options=(("script", "conditions"),)) for n in ("A", "B")]
    works = [CommandWorkload({"name": n, "command": ["run", n], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
             for n in ("hot", "cool")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    clock = iter([3000.0] * 100)
    run_id = Runner(store, Journal(tmp_path), monitor=monitor, clock=lambda: next(clock)).start(
        RunRequest(configs, works, RunSettings(seed=1)))
    run = store.get_run(run_id)
    assert run.facts.machine["monitor_samples"]  # kept for the report's timeline
    last = max(t.spec.round for t in store.trials(run_id))
    assert [r for r, *_ in run.facts.machine["clock_mhz"]] == list(range(0, last + 1))
    flags = {c.workload: conditions(c.flags) for c in analyze(run, store.trials(run_id)).comparisons}
    hot_trials = sum(1 for t in store.trials(run_id) if t.spec.workload == "hot")
    assert flags["hot"] == (f"clock-drop \u221217% in 1 of {hot_trials} trials",)  # by how much, how often
    assert flags["cool"] == ()


def test_clock_loop_drop_of_a_whole_round_is_a_machine_wide_condition(tmp_path):
    SCRIPTS["flat"] = lambda argv, config, n: "value: 100\n"
    configs = [Config(name=n, target="fake", options=(("script", "flat"),)) for n in ("A", "B")]
    work = CommandWorkload({"name": "w", "command": ["w"], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    clock = iter([3000.0, 3000.0, 3000.0, 2990.0, 2800.0, 2800.0] + [3000.0] * 60)  # rounds 4-5: 6.7% down
    run_id = Runner(store, Journal(tmp_path), clock=lambda: next(clock)).start(
        RunRequest(configs, [work], RunSettings(seed=1)))
    analysis = analyze(store.get_run(run_id), store.trials(run_id))
    (comp,) = analysis.comparisons
    # Two whole rounds are 2/11 of this run (it stops at the first round that can decide, 11):
    # more than a rare event, so a condition of the machine, said once, not a flag.
    rounds = max(t.spec.round for t in store.trials(run_id))
    assert rounds == 11
    assert conditions(comp.flags) == ()
    assert any(line.startswith(f"clock-drop: {2 / rounds:.0%} of trials") for line in analysis.conditions), \
        analysis.conditions


def steal_script(monitor: Monitor, steal: dict[str, float]):
    def script(argv, config, n):
        monitor.add(sample(3000.0) | {"steal_pct": steal.get(argv[-1], 4.0)})
        time.sleep(0.002)
        monitor.add(sample(3000.0) | {"steal_pct": steal.get(argv[-1], 4.0)})
        return "value: 100\n"
    return script


def run_with_steal(tmp_path, steal: dict[str, float]):
    monitor = Monitor(interval_s=3600, root=tmp_path)  # only the script's samples have readings
    SCRIPTS["steal"] = steal_script(monitor, steal)
    configs = [Config(name=n, target="fake", options=(("script", "steal"),)) for n in ("A", "B")]
    works = [CommandWorkload({"name": n, "command": ["run", n], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
             for n in ("a", "b", "c")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = Runner(store, Journal(tmp_path), monitor=monitor).start(RunRequest(configs, works, RunSettings(seed=1)))
    return analyze(store.get_run(run_id), store.trials(run_id))


def test_steal_in_every_trial_is_said_once_not_on_every_row(tmp_path):
    analysis = run_with_steal(tmp_path, {})
    assert all(conditions(c.flags) == () for c in analysis.comparisons)
    assert analysis.conditions == ("steal: the hypervisor took 4.0% of the CPU in the typical trial",)


def test_a_workload_with_more_steal_than_the_typical_trial_is_flagged_by_how_much(tmp_path):
    analysis = run_with_steal(tmp_path, {"b": 9.0})
    flags = {c.workload: conditions(c.flags) for c in analysis.comparisons}
    assert flags == {"a": (), "b": ("steal +5.0 pts",), "c": ()}


def test_a_pis_firmware_state_is_recorded_after_the_run(tmp_path, monkeypatch):
    from shootout.arm import board

    # vcgencmd as a Pi 3B+ answers it after an under-voltage during the run (tests/fixtures/arm)
    answers = {"get_throttled": "throttled=0x50005", "measure_clock arm": "frequency(48)=600000000",
               "measure_clock core": "frequency(1)=250000000", "measure_temp": "temp=81.1'C"}
    monkeypatch.setattr(board, "_vcgencmd", lambda *args: answers.get(" ".join(args)))
    monkeypatch.setattr(board.firmware_state, "__defaults__", (board._vcgencmd,))
    SCRIPTS["flat"] = lambda argv, config, n: "value: 100\n"
    configs = [Config(name=n, target="fake", options=(("script", "flat"),)) for n in ("A", "B")]
    work = CommandWorkload({"name": "w", "command": ["w"], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest(configs, [work], RunSettings(seed=1, max_rounds=8)))
    after = store.get_run(run_id).facts.machine["firmware_state_after"]
    assert after["arm_mhz"] == 600 and after["temp_c"] == 81.1 and after["throttled"] == "0x50005"
    assert after["throttled_flags"] == ["under-voltage now", "throttled now", "under-voltage occurred",
                                        "throttling occurred"]
