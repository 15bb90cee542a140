"""A trial that other programs interrupted is set aside, kept with the run, and measured
again; the stored trial is the clean attempt. The fake /proc/stat stands for the machine: the
script adds other programs' CPU time to it while chosen attempts run."""

from __future__ import annotations

import time
from pathlib import Path

from shootout.base.model import Config, RunSettings
from shootout.conditions.monitor import Monitor
from shootout.judge.analysis import analyze
from shootout.measure import events as ev
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

STAT = "cpu  {user} 0 0 100000 0 0 0 0 0 0\nprocs_running 1\n"


def run(tmp_path: Path, busy: dict[tuple[str, int], int], repeats: int = 3) -> tuple[Store, int, list[ev.Event]]:
    """busy: (config, attempt number on that configuration) -> ticks other programs used meanwhile."""
    stat = tmp_path / "proc" / "stat"
    stat.parent.mkdir(parents=True)
    ticks = {"user": 0}
    stat.write_text(STAT.format(user=0))

    def script(argv, config, n):
        time.sleep(0.05)
        others = busy.get((config, n), 0)
        ticks["user"] += others
        stat.write_text(STAT.format(user=ticks["user"]))
        return "value: 999\n" if others else "value: 100\n"

    SCRIPTS["repeats"] = script
    configs = [Config(name=n, target="fake", options=(("script", "repeats"),)) for n in ("A", "B")]
    work = CommandWorkload({"name": "w", "command": ["w"], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    events: list[ev.Event] = []
    run_id = Runner(store, Journal(tmp_path), events.append, monitor=Monitor(interval_s=3600, root=tmp_path)).start(
        RunRequest(configs, [work], RunSettings(seed=1, repeats=repeats)))
    return store, run_id, events


def test_an_interrupted_attempt_is_set_aside_and_the_trial_measured_again(tmp_path: Path) -> None:
    # calls counted per configuration from 0 (the warm-up); B's 4th call and A's 6th and 7th
    # ran while other programs used 0.5 s of CPU in a 0.05 s trial
    store, run_id, events = run(tmp_path, {("B", 4): 50, ("A", 6): 50, ("A", 7): 50})
    trials = store.trials(run_id)
    assert {t.values["value"] for t in trials} == {100.0}  # only clean attempts were kept
    assert len({(t.spec.round, t.spec.config) for t in trials}) == len(trials)  # one per round and side
    aside = store.get_run(run_id).set_aside
    assert [(a["config"], a["values"]) for a in aside] == [("B", {"value": 999.0}), ("A", {"value": 999.0}), ("A", {"value": 999.0})]
    assert all(a["others_cpus"] > 1.0 for a in aside)
    assert [e.trial.spec.config for e in events if isinstance(e, ev.TrialSetAside)] == ["B", "A", "A"]
    analysis = analyze(store.get_run(run_id), trials)
    assert "repeated: other programs interrupted 3 trial attempt(s); they were set aside and measured again " \
           "(kept with the run)" in analysis.conditions


def test_at_most_repeats_attempts_are_set_aside_then_the_next_is_kept(tmp_path: Path) -> None:
    store, run_id, _ = run(tmp_path, {("A", n): 50 for n in (3, 4, 5)}, repeats=2)
    aside = store.get_run(run_id).set_aside
    assert len(aside) == 2  # A's calls 3 and 4; call 5 was kept as it came
    assert sorted(t.values["value"] for t in store.trials(run_id) if t.spec.config == "A")[-1] == 999.0


def test_repeats_0_keeps_every_attempt(tmp_path: Path) -> None:
    store, run_id, _ = run(tmp_path, {("B", 4): 50}, repeats=0)
    assert store.get_run(run_id).set_aside == []
    assert 999.0 in {t.values["value"] for t in store.trials(run_id)}
    busy = [t for t in store.trials(run_id) if t.monitor["others_cpus"] > 1.0]
    assert [t.values["value"] for t in busy] == [999.0]
