"""A writer SIGKILLed mid-run loses nothing it had committed, and the database stays readable
(an SQLite file, and a PostgreSQL database: the `pg_url` fixture).

The child adds trials as fast as it can and prints each round number after add_trial
returns; the parent kills it at a random moment, three times over the same run (as
`--resume` would continue it), then checks every printed trial is stored intact.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import shootout
from shootout.base.model import Config, Metric, Run, RunSettings, WorkloadSpec
from shootout.base.runfacts import RunFacts
from shootout.store import Store

CHILD = """
import sys
from shootout.base.model import Trial, TrialSpec
from shootout.store import Store

store = Store(sys.argv[1])
run_id = int(sys.argv[2])
done = store.trials(run_id)
start = max((t.spec.round for t in done), default=0) + 1  # resume after the last stored round
print("start", start, flush=True)
rnd = start
while True:
    trial = Trial(TrialSpec(rnd, 0, "w", "a"), {"m": rnd * 1.5}, wall_s=rnd / 7, user_s=0.5,
                  sys_s=0.25, max_rss_kb=rnd, ctx_switches=2, exit_status=0,
                  stderr_tail="x" * 200, started_at=1e9 + rnd, monitor={"rnd": rnd})
    store.add_trial(run_id, trial)
    print(rnd, flush=True)
    rnd += 1
"""


def _run() -> Run:
    spec = WorkloadSpec("w", "cpu", "d", (Metric("m", "ops/s"),), "m")
    return Run(0, time.time(), "running", RunSettings(), [Config("a")], [spec], {}, RunFacts())


def _kill_after(url: str, run_id: int, script: Path, commits: int) -> tuple[int, int]:
    """Start the writer, SIGKILL it once it has reported `commits` trials; (first, last) reported."""
    src = str(Path(shootout.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    child = subprocess.Popen(
        [sys.executable, str(script), url, str(run_id)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert child.stdout is not None
    deadline = time.monotonic() + 60
    first_line = child.stdout.readline().split()
    assert first_line[0] == "start", first_line
    first = int(first_line[1])
    seen = 0
    while seen < commits and time.monotonic() < deadline:
        line = child.stdout.readline()
        assert line, "writer died on its own"
        seen += 1
    # Let it run a random little while more so the kill lands anywhere in add_trial.
    time.sleep(random.uniform(0.0, 0.02))
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read().split()
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    assert seen == commits, "writer too slow"
    return first, int(rest[-1]) if rest else first + commits - 1


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return f"sqlite:///{tmp_path / 'results.db'}"


def test_sigkill_loses_nothing_committed(url: str, tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    script = tmp_path / "writer.py"
    script.write_text(CHILD)
    with Store(url) as s:
        run_id = s.create_run(_run())

    reported = 0
    for commits in (40, 150, 80):
        first, last = _kill_after(url, run_id, script, commits)
        assert first == reported + 1 or first == reported + 2  # +2: the in-flight one got in
        reported = last
        if url.startswith("sqlite"):  # the WAL is not checkpointed after a kill: still sound?
            con = sqlite3.connect(path)
            assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            con.close()

    with Store(url) as s:
        trials = s.trials(run_id)
    rounds = [t.spec.round for t in trials]
    # Every reported trial is there; at most the one in flight at the last kill is extra.
    assert rounds[:reported] == list(range(1, reported + 1))
    assert len(rounds) in (reported, reported + 1)
    assert rounds == list(range(1, len(rounds) + 1))
    for t in trials:
        r = t.spec.round
        assert (t.values, t.wall_s, t.max_rss_kb, t.monitor, t.stderr_tail) == (
            {"m": r * 1.5},
            r / 7,
            r,
            {"rnd": r},
            "x" * 200,
        )
