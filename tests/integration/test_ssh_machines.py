"""Several local "machines" (an sshd each, its own port, keys and known_hosts; see sshd.py):
the parallel path and groups of machines really run over SSH, through the real command.

Needs root (each server's private mount namespace); fails, never skips, without it.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sshd import LocalSshd, start_machines, toml_table

SPIN = ('[[workload]]\nname = "spin"\ncommand = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done"\n'
        'metric = "wall"\nunit = "s"\n')


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LocalSshd]]:
    if os.geteuid() != 0:
        pytest.fail("the ssh machine tests need root (CI runs as root)")
    servers = start_machines(tmp_path_factory.mktemp("machines"), 4)
    yield servers
    for server in servers:
        server.stop()


def _file(tmp_path: Path, machines: list[LocalSshd], groups: str) -> Path:
    toml = tmp_path / "fleet.toml"
    toml.write_text(SPIN + "".join(toml_table(m, m.alias) for m in machines) + groups)
    return toml


def _trials(db: Path) -> list[tuple]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("select round, workload, config, started_at, wall_s from trials").fetchall()
    except sqlite3.OperationalError:
        return []


GROUPS = ('[[config]]\nname = "a"\nmachines = ["machine1", "machine2"]\n'
          '[[config]]\nname = "b"\nmachines = ["machine3", "machine4"]\n')


def test_two_groups_of_two_machines_run_in_parallel_with_machines_as_units(shootout, machines, tmp_path) -> None:
    toml = _file(tmp_path, machines, GROUPS)
    done = shootout("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--seed", "5",
                    "--min-rounds", "6", "--repeats", "0", "--budget", "10m", "--db", shootout.db, timeout=900)
    assert done.returncode == 0, done.stderr
    rows = shootout.rows()
    (row,) = [r for r in rows if r["workload"] == "spin"]
    assert (row["baseline"], row["config"]) == ("a", "b")
    assert row["method"] == "welch on run means", row  # the four machines are the units
    assert "machines as units" in done.stdout
    trials = _trials(tmp_path / "results.db")
    assert Counter(t[2] for t in trials) == {f"{g}@machine{i}": 7 for g, i in
                                             (("a", 1), ("a", 2), ("b", 3), ("b", 4))}
    # the four machines measured at the same time: a round's trials overlap
    for r in range(7):
        spans = [(t[3], t[3] + t[4]) for t in trials if t[0] == r]
        assert max(s for s, _ in spans) < min(e for _, e in spans), spans
    for server in machines:  # everything was made on the machines' side, and removed
        assert list(server.remote_cache.iterdir()) == []


def test_one_machine_per_side_is_labelled_so(shootout, machines, tmp_path) -> None:
    toml = _file(tmp_path, machines, '[[config]]\nname = "a"\nmachines = ["machine1"]\n'
                                     '[[config]]\nname = "b"\nmachines = ["machine2"]\n')
    done = shootout("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--seed", "6",
                    "--min-rounds", "6", "--repeats", "0", "--budget", "10m", "--db", shootout.db, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "one machine per side: machine-to-machine variation not included" in done.stdout


def test_a_machine_whose_host_key_is_unknown_stops_the_run_in_one_line(shootout, machines, tmp_path) -> None:
    unknown = machines[2]
    saved = unknown.known_hosts.read_text()
    unknown.known_hosts.write_text("")
    try:
        toml = _file(tmp_path, machines, '[[config]]\nname = "a"\nmachines = ["machine1", "machine3"]\n'
                                         '[[config]]\nname = "b"\nmachines = ["machine2"]\n')
        done = shootout("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--db", shootout.db)
    finally:
        unknown.known_hosts.write_text(saved)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert any("the host key of machine3 is not in known_hosts; refusing to connect" in line for line in lines), lines
    assert len([line for line in lines if line.startswith("error")]) == 1, lines
    assert shootout("runs", "--db", shootout.db).stdout.count("\n") <= 1  # no run kept
    for server in machines:
        assert list(server.remote_cache.iterdir()) == []


def test_a_run_of_machines_killed_mid_way_resumes_measuring_nothing_twice(shootout, machines, tmp_path) -> None:
    toml = _file(tmp_path, machines, GROUPS)
    child = shootout.popen("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--seed", "8",
                           "--min-rounds", "8", "--repeats", "0", "--budget", "10m", "--db", shootout.db)
    db = tmp_path / "results.db"
    deadline = time.time() + 300
    while time.time() < deadline and len(_trials(db)) < 14:
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    before = _trials(db)
    assert 14 <= len(before) < 36, "the kill should land mid-run"
    done = shootout("run", "--resume", "last", "--db", shootout.db, timeout=900)
    assert done.returncode == 0, done.stderr
    after = _trials(db)
    slots = Counter(t[:3] for t in after)
    assert max(slots.values()) == 1 and len(slots) == 9 * 4  # every slot once: nothing measured twice
    assert {t[:3] for t in before} <= set(slots)
    rows = json.loads(shootout("show", "last", "--json", "--db", shootout.db).stdout)
    assert rows[0]["method"] == "welch on run means"
