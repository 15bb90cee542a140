"""On this machine: programs outside shootout's process tree that run during trials get those
trials set aside and measured again; the trial's own processes, however busy, do not."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from shootout.base.model import Config, RunSettings
from shootout.conditions.monitor import Monitor
from shootout.conditions.repeats import interrupted
from shootout.measure import events as ev
from shootout.measure.runner import Runner, RunRequest
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

SPIN = "timeout {s} sh -c 'while :; do :; done'"
LOAD_S = 1.0


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def outside_load(seconds: float) -> None:
    """Two busy loops whose shell exits at once: re-parented, they are not shootout's descendants."""
    loop = SPIN.format(s=seconds)
    subprocess.run(["sh", "-c", f"{loop} >/dev/null 2>&1 & {loop} >/dev/null 2>&1 &"], check=True)


def test_outside_load_sets_trials_aside_and_the_trials_own_work_does_not(tmp_path: Path) -> None:
    loaded: list[float] = []

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.RoundStarted) and event.round == 3:
            loaded.append(time.time())
            outside_load(LOAD_S)

    # the workload keeps both CPUs busy itself for 0.2 s: its own processes, not other programs
    work = CommandWorkload({"name": "w", "command": ["sh", "-c", f"{SPIN.format(s=0.2)} & {SPIN.format(s=0.2)}; wait"]})
    configs = [Config(name=n, target="host") for n in ("A", "B")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    monitor = Monitor()
    with monitor:
        run_id = Runner(store, Journal(tmp_path), on_event, monitor=monitor).start(
            RunRequest(configs, [work], RunSettings(seed=1, max_rounds=8, counters=False)))
    aside = store.get_run(run_id).set_aside
    assert loaded and aside, "the outside load set no attempt aside"
    during = [a for a in aside if loaded[0] - 0.5 <= a["started_at"] <= loaded[0] + LOAD_S]
    # Both loops counted: the attempt's own two loops share the two CPUs with them, so fair
    # shares give the others about 1.0 CPU (0.86-1.1 seen here); one loop alone would get 2/3.
    assert during and max(a["others_cpus"] for a in during) > 0.8, aside
    trials = [t for t in store.trials(run_id) if t.spec.round > 0]
    assert not [t.monitor for t in trials if interrupted(t)], "a kept trial was interrupted"
    # each kept trial kept two CPUs busy itself, and that was not counted as other programs'
    assert all(t.user_s + t.sys_s > 0.2 for t in trials), [t.user_s + t.sys_s for t in trials]
    time.sleep(LOAD_S)  # the loops end by themselves: nothing left behind


def test_without_the_monitor_outside_load_still_sets_trials_aside(tmp_path: Path) -> None:
    """--no-monitor: no sampling thread, yet the interrupted-trial check (two reads of /proc/stat
    around the trial) still runs, so --repeats does not silently need the monitor."""
    loaded: list[float] = []

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.RoundStarted) and event.round == 3:
            loaded.append(time.time())
            outside_load(LOAD_S)

    work = CommandWorkload({"name": "w", "command": ["sh", "-c", "sleep 0.2"]})
    configs = [Config(name=n, target="host") for n in ("A", "B")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = Runner(store, Journal(tmp_path), on_event, monitor=None).start(
        RunRequest(configs, [work], RunSettings(seed=1, max_rounds=8, counters=False)))
    aside = store.get_run(run_id).set_aside
    during = [a for a in aside if loaded and loaded[0] - 0.5 <= a["started_at"] <= loaded[0] + LOAD_S]
    assert during and max(a["others_cpus"] for a in during) > 1.0, aside
    trials = [t for t in store.trials(run_id) if t.spec.round > 0]
    assert all("others_cpus" in t.monitor for t in trials)  # every kept trial was checked
    time.sleep(LOAD_S)


def test_a_computing_command_is_judged_by_its_cpu_time_and_a_parallel_one_by_wall_time(tmp_path: Path) -> None:
    """cpuclock on this machine: one shell counting (one CPU, no waits) is judged by its CPU
    time even when outside load meets its warm-up (its wait for a CPU counts); two of them in
    parallel keep wall time (on a machine without other load, like the tests above)."""
    from shootout.judge.analysis import analyze
    from shootout.workloads import cpuclock

    count = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"
    configs = [Config(name=n, target="host") for n in ("A", "B")]
    heads = {}
    for name, command, load in (("one", count, True), ("two", f"({count}) & ({count}); wait", False)):
        def on_event(event: ev.Event) -> None:
            if load and isinstance(event, ev.RoundStarted) and event.round == 0:
                outside_load(LOAD_S)

        store = Store(f"sqlite:///{tmp_path / f'{name}.db'}")
        work = CommandWorkload({"name": name, "command": ["sh", "-c", command]})
        run_id = Runner(store, Journal(tmp_path), on_event).start(
            RunRequest(configs, [work], RunSettings(seed=1, max_rounds=6, counters=False)))
        run = store.get_run(run_id)
        chosen = run.headline_clocks[name]
        heads.update({c.workload: (c.metric, chosen) for c in analyze(run, store.trials(run_id)).comparisons
                      if c.headline})
        time.sleep(LOAD_S if load else 0.0)
    assert heads["one"][0] == "cpu" and heads["two"][0] == "wall", heads
    assert all(r > 1.05 for r in heads["two"][1]["cpu_per_wall"].values()), heads  # above: parallel
