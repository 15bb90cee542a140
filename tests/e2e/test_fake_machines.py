"""Machines measured in parallel (lanes.py), through fake targets that stand for remote machines.

A fake configuration with option machine=NAME counts as on a machine of its own; its script
sleeps, so that the time a round takes tells whether the machines' trials overlapped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.base.model import Config, RunSettings
from shootout.measure.lanes import lanes_of, split
from shootout.measure.plan import round_order
from shootout.measure.runner import Runner, RunRequest
from shootout.places import LOCAL
from shootout.places.fake import SCRIPTS
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

SLEEP_S = 0.15
WORK = {"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"}


def _machines(n: int, local: bool = False) -> list[Config]:
    configs = [Config(name=f"m{i}", target="fake", options=(("script", "lanes"), ("machine", f"box{i}")))
               for i in range(1, n + 1)]
    return configs + ([Config(name="here", target="fake", options=(("script", "lanes"),))] if local else [])


def _run(tmp_path: Path, configs: list[Config], parallel: bool) -> tuple[float, list[tuple[str, float, float]]]:
    spans: list[tuple[str, float, float]] = []
    lock = threading.Lock()

    def script(argv, config, n):
        t0 = time.monotonic()
        time.sleep(SLEEP_S)
        with lock:
            spans.append((config, t0, time.monotonic()))
        return f"throughput: {1000 + n % 5}\n"

    SCRIPTS["lanes"] = script
    store = Store(f"sqlite:///{tmp_path / f'{parallel}.db'}")
    # repeats=0: this machine's other programs (other tests) must not add attempts to the timing
    settings = RunSettings(seed=2, min_rounds=6, max_rounds=6, budget_s=600, parallel=parallel, repeats=0)
    t0 = time.monotonic()
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest(configs, [CommandWorkload(WORK)], settings))
    took = time.monotonic() - t0
    trials = store.trials(run_id, include_warmup=True)
    assert store.get_run(run_id).status == "complete"
    assert len(trials) == 7 * len(configs) and all(t.ok for t in trials)
    return took, spans


def test_a_round_is_split_by_machine_keeping_each_machines_order() -> None:
    configs = [*_machines(2), Config(name="ssh-a", target="ssh", options=(("destination", "a"),)),
               Config(name="ssh-a-tuned", target="ssh", options=(("destination", "a"),)), Config(name="host")]
    lanes = lanes_of(configs)
    assert list(lanes.values()) == [["m1"], ["m2"], ["ssh-a", "ssh-a-tuned"], ["host"]]
    assert list(lanes)[-1] == LOCAL
    order = round_order(5, 3, ["w1", "w2", "w3"], [c.name for c in configs])
    per = split(order, lanes)
    for key, names in lanes.items():
        assert per[key] == [s for s in order if s.config in names]  # the round's own order, per machine


def test_four_machines_measure_at_once_and_this_machine_alone(tmp_path: Path) -> None:
    sequential, _ = _run(tmp_path, _machines(4), parallel=False)
    parallel, spans = _run(tmp_path, _machines(4, local=True), parallel=True)
    # 7 rounds x 4 machines x 0.15 s one after another; at once, 7 x 0.15 s plus the local lane
    assert sequential > 7 * 4 * SLEEP_S
    assert parallel < sequential * 0.7, (parallel, sequential)
    remote = [s for s in spans if s[0] != "here"]
    overlapping = sum(1 for a in remote for b in remote if a[0] < b[0] and a[1] < b[2] and b[1] < a[2])
    assert overlapping >= 7 * 3  # the machines' trials really overlapped, round after round
    for config, start, end in spans:
        if config == "here":  # nothing else measured while this machine measured
            assert not [s for s in remote if s[1] < end and start < s[2]], (start, end)


CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from shootout.base.model import Config, RunSettings
    from shootout.request.request import workloads_of
    from shootout.measure.runner import Runner, RunRequest
    from shootout.store import Store
    from shootout.system.journal import Journal
    from shootout.places.fake import SCRIPTS
    from shootout.workloads.user import CommandWorkload

    def script(argv, config, n):
        time.sleep(float(os.environ.get("NAP", "0.05")))
        return f"throughput: {1000 + n % 5}\\n"

    SCRIPTS["lanes"] = script
    # Ctrl-C as the CLI takes it (cli/run.py): a test started as a background job inherits
    # SIGINT ignored, and Python then installs no handler of its own
    signal.signal(signal.SIGINT, signal.default_int_handler)
    url, journal_dir, mode = sys.argv[1:4]
    store = Store(url)
    configs = [Config(name=f"m{i}", target="fake", options=(("script", "lanes"), ("machine", f"box{i}")))
               for i in range(1, 4)]
    work = {"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"}
    runner = Runner(store, Journal(Path(journal_dir)))
    if mode == "start":
        settings = RunSettings(seed=4, min_rounds=12, max_rounds=12, budget_s=600, repeats=0)
        runner.start(RunRequest(configs, [CommandWorkload(work)], settings, user_workloads={"bench": work}))
    else:
        run = store.get_run("last")
        runner.resume(run, workloads_of([w.name for w in run.workloads], run.user_workloads))
""")


def test_a_parallel_run_killed_mid_round_resumes_measuring_nothing_twice(tmp_path: Path) -> None:
    (tmp_path / "child.py").write_text(CHILD)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, str(tmp_path / "child.py"), url, str(tmp_path / "j"), "start"], env=env)
    store = Store(url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # killed once some rounds are stored, in the middle of one
        runs = store.list_runs()
        if runs and len(store.trials(runs[0].id)) >= 14:
            break
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    (killed,) = store.list_runs()
    before = store.trials(killed.id, include_warmup=True)
    assert killed.status == "running" and 14 <= len(before) < 13 * 3
    subprocess.run([sys.executable, str(tmp_path / "child.py"), url, str(tmp_path / "j"), "resume"], env=env,
                   check=True, timeout=120)
    after = store.trials(killed.id, include_warmup=True)
    assert store.get_run(killed.id).status == "complete"
    slots = Counter((t.spec.round, t.spec.workload, t.spec.config) for t in after)
    assert max(slots.values()) == 1 and len(slots) == 13 * 3  # every slot once: nothing measured twice
    kept = {(t.spec.round, t.spec.config): t.started_at for t in before}
    assert all(kept[(t.spec.round, t.spec.config)] == t.started_at for t in after if (t.spec.round, t.spec.config)
               in kept)  # the trials stored before the kill are the ones kept


def test_a_group_mixing_architectures_is_refused_before_measuring(tmp_path: Path) -> None:
    arch = {"g@box1": "aarch64", "g@box2": "x86_64"}

    def script(argv, config, n):
        return f"{arch[config]}\n" if list(argv) == ["uname", "-m"] else "throughput: 1000\n"

    SCRIPTS["arches"] = script
    configs = [Config(name=f"g@box{i}", target="fake", options=(("script", "arches"), ("machine", f"box{i}"),
                                                                 ("group", "g"))) for i in (1, 2)]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(UsageError) as err:
        Runner(store, Journal(tmp_path)).start(RunRequest(configs, [CommandWorkload(WORK)], RunSettings(seed=1)))
    assert err.value.message.startswith("group g mixes architectures (box1 is aarch64, box2 is x86_64)")
    assert store.list_runs() == []  # nothing measured, nothing kept


def test_ctrl_c_while_machines_measure_in_parallel_stops_at_once_and_keeps_no_trial_in_flight(tmp_path: Path) -> None:
    (tmp_path / "child.py").write_text(CHILD)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, "NAP": "1.0", "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[2] / "src"), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, str(tmp_path / "child.py"), url, str(tmp_path / "j"), "start"], env=env,
                             stderr=subprocess.PIPE, text=True)
    store = Store(url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # in the middle of a round: three 1 s trials in flight
        runs = store.list_runs()
        if runs and len(store.trials(runs[0].id, include_warmup=True)) >= 6:
            break
        time.sleep(0.02)
    time.sleep(0.5)
    asked = time.monotonic()
    child.send_signal(signal.SIGINT)
    child.communicate(timeout=30)
    took = time.monotonic() - asked
    (run,) = store.list_runs()
    trials = store.trials(run.id, include_warmup=True)
    assert run.status == "interrupted" and took < 5, took
    # the trials in flight were not kept: every stored trial ended before Ctrl-C
    assert all(t.started_at + t.wall_s < time.time() - took for t in trials)
    assert len(trials) % 3 == 0  # whole rounds only: the round in flight kept nothing


STAT = "cpu  {user} 0 0 100000 0 0 0 0 0 0\nprocs_running 1\n"


def test_each_machine_measured_beside_others_repeats_its_interrupted_trials_by_its_own_load(tmp_path: Path) -> None:
    """box1 and box2 are busy during every attempt, box3 during one late trial only. Each
    machine's own /proc/stat decides (its machine monitor), in parallel; box3's trial is
    measured again although the busy machines' load is steady by then (each machine keeps its
    own count: with one count for the run, box3's attempt would be kept as steady load's)."""
    roots = {f"m{i}": tmp_path / f"box{i}" for i in (1, 2, 3)}
    ticks = dict.fromkeys(roots, 0)
    benches: Counter[str] = Counter()
    for root in roots.values():
        (root / "proc").mkdir(parents=True)
        (root / "proc" / "stat").write_text(STAT.format(user=0))

    def script(argv, config, n):
        benches[config] += 1
        time.sleep(0.05)
        busy = config in ("m1", "m2") or benches[config] == 6  # m3: its 6th trial, round 5
        ticks[config] += 50 if busy else 0  # other programs' 0.5 s of CPU during a 0.05 s trial
        (roots[config] / "proc" / "stat").write_text(STAT.format(user=ticks[config]))
        return "throughput: 999\n" if busy else "throughput: 100\n"

    SCRIPTS["busy"] = script
    configs = [Config(name=name, target="fake", options=(("script", "busy"), ("machine", f"box{name[1]}"),
                                                         ("stat_root", str(root)))) for name, root in roots.items()]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    settings = RunSettings(seed=3, min_rounds=6, max_rounds=6, budget_s=600, repeats=3)
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest(configs, [CommandWorkload(WORK)], settings))
    aside = Counter(a["config"] for a in store.get_run(run_id).set_aside)
    # the busy machines: three attempts set aside per trial until 20 attempts made their load steady
    assert aside["m1"] == aside["m2"] == 15, aside
    assert aside["m3"] == 1, aside  # its one interrupted attempt, measured again
    kept = [v for t in store.trials(run_id) if t.spec.config == "m3" for v in t.values.values()]
    assert kept == [100.0] * 6  # only clean attempts of box3 kept
