"""The real command SIGKILLed while it prepares its second workload (intmix calibrated, ptrtree
being built and calibrated) resumes with `run --resume last` and completes (it once
ended in `KeyError: 'kernels'`)."""

from __future__ import annotations

import json
import signal
import sqlite3
import time



def _state(db) -> tuple[list[str] | None, int] | None:
    """The newest run's calibrated workloads (while preparing) and its trial count."""
    try:
        with sqlite3.connect(db) as conn:
            row = conn.execute("select id, calibrated from runs order by id desc limit 1").fetchone()
            if row is None:
                return None
            count = conn.execute("select count(*) from trials where run_id = ?", (row[0],)).fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not created yet
        return None
    return (None if row[1] is None else json.loads(row[1])), count


def test_a_run_killed_while_preparing_resumes_and_completes(shootout, tmp_path):
    db = tmp_path / "results.db"
    child = shootout.popen("run", "--aa", "-c", "host", "-w", "intmix", "-w", "ptrtree", "--seed", "4",
                           "--max-rounds", "12", "--budget", "10m", "--no-monitor", "--db", shootout.db)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and child.poll() is None and _state(db) != (["intmix"], 0):
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert _state(db) == (["intmix"], 0), "the kill should land while ptrtree prepares"
    done = shootout("run", "--resume", "last", "--db", shootout.db, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    rows = shootout.rows()
    assert {"intmix", "ptrtree"} <= {r["workload"] for r in rows}
    with sqlite3.connect(db) as conn:
        status, params = conn.execute("select status, params from runs").fetchone()
    assert status == "complete" and set(json.loads(params)) == {"intmix", "ptrtree"}
