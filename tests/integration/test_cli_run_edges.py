"""`shootout run` at its edges: one configuration, no monitor, a finished run resumed, Ctrl-C from a script."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

NAP = '[[workload]]\nname = "nap"\ncommand = "sleep 0.3"\n'


def _toml(tmp_path: Path) -> Path:
    toml = tmp_path / "shootout.toml"
    toml.write_text(NAP)
    return toml


def _trials(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("select count(*) from trials").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not created yet
        return 0


def test_no_monitor_says_what_it_turns_off(shootout, tmp_path):
    done = shootout("run", "-c", "host", "-f", str(_toml(tmp_path)), "-w", "nap", "--no-monitor",
                    "--max-rounds", "6", "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert ("monitor off (--no-monitor): no samples of clock, temperature, throttling, load or steal during the "
            "trials") in said, said
    assert "trials that other programs interrupted are still set aside and measured again" in said


def test_one_configuration_shows_its_figures(shootout, tmp_path):
    """A single side is a measurement: its figures, not an empty table and []."""
    done = shootout("run", "-c", "host", "-f", str(_toml(tmp_path)), "-w", "nap", "--max-rounds", "6",
                    "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    assert "nap" in done.stdout and "0.30" in done.stdout, done.stdout
    shown = shootout("show", "last", "--json", "--db", shootout.db)
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)
    (row,) = [r for r in rows if r["headline"]]  # the sub-metric (CPU time) beside it
    assert (row["workload"], row["metric"], row["config"], row["rounds"]) == ("nap", "wall", "host", 6), row
    assert 0.29 < row["min"] <= row["median"] <= row["max"] < 0.6, row


def test_resuming_a_finished_run_says_so_before_the_load_gate(shootout, tmp_path):
    done = shootout("run", "-c", "host", "-f", str(_toml(tmp_path)), "-w", "nap", "--max-rounds", "6",
                    "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(4)]  # the gate would wait
    try:
        started = time.monotonic()
        again = shootout("run", "--resume", "last", "--load-wait", "60s", "--db", shootout.db)
        took = time.monotonic() - started
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    assert again.returncode == 2 and "is already complete" in again.stderr, again.stderr
    assert took < 20, f"took {took:.0f} s"


def test_a_run_started_from_a_script_stops_on_ctrl_c(shootout, tmp_path):
    """A shell script's background job starts with SIGINT ignored: the run still stops on it."""
    argv = shootout.argv("run", "-c", "host", "-c", "host+m32", "-f", str(_toml(tmp_path)), "-w", "nap",
                         "--db", shootout.db)
    child = subprocess.Popen(["sh", "-c", 'trap "" INT; exec "$@"', "sh", *argv], env=shootout.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _trials(tmp_path / "results.db") < 2 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    try:
        _, err = child.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise AssertionError("SIGINT did not stop the run") from None
    assert child.returncode == 130 and "interrupted" in err, err
    assert "running" not in shootout("runs", "--db", shootout.db).stdout  # marked interrupted
