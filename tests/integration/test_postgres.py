"""A real PostgreSQL server (.ci/postgres in CI): two `shootout run` processes writing into one
new, empty database at once, one SIGKILLed mid-run and resumed; and the team set-up of docs/machines.md.

Without SHOOTOUT_TEST_PG_URL these skip, except in CI (CI is set), where they fail.
"""

from __future__ import annotations

import json
import re
import secrets
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import Shootout
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

TEAM_DOC = Path(__file__).resolve().parents[2] / "docs" / "machines.md"
ROUNDS = 12  # measured rounds of each run, after its warm-up round
WORKLOADS = ("nap", "count")
TOML = """
[[config]]
name = "{0}1"
spec = "host"

[[config]]
name = "{0}2"
spec = "host"

[[workload]]
name = "nap"
command = "sleep 0.05"

[[workload]]
name = "count"
command = "seq 1 20000 | wc -l"
"""

Slot = tuple[int, str, str]  # round, workload, configuration


def _run_args(toml: Path, db: str) -> tuple[str, ...]:
    # --repeats 0: the test machine is busy by design; waiting for quiet would only make it slow
    return ("run", "--file", str(toml), "--min-rounds", str(ROUNDS), "--max-rounds", str(ROUNDS),
            "--seed", "11", "--repeats", "0", "--db", db)


def _trials(db: str) -> dict[int, list[tuple]]:
    """Every stored trial by run: (round, workload, config, started_at, wall_s)."""
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            if not conn.dialect.has_table(conn, "trials"):
                return {}
            rows = conn.execute(text("SELECT run_id, round, workload, config, started_at, wall_s FROM trials")).all()
    finally:
        engine.dispose()
    found: dict[int, list[tuple]] = {}
    for run_id, *rest in rows:
        found.setdefault(run_id, []).append(tuple(rest))
    return found


def _expected(prefix: str) -> set[Slot]:
    return {(r, w, f"{prefix}{i}") for r in range(ROUNDS + 1) for w in WORKLOADS for i in (1, 2)}


def _runs_of(found: dict[int, list[tuple]], prefix: str) -> list[int]:
    return [run_id for run_id, rows in found.items() if rows[0][2].startswith(prefix)]


def test_two_runs_at_once_one_killed_and_resumed(pg_url: str, tmp_path: Path) -> None:
    homes = {p: tmp_path / p for p in "ab"}
    tools = {p: Shootout(home) for p, home in homes.items()}
    tomls = {p: tmp_path / f"{p}.toml" for p in "ab"}
    for p, toml in tomls.items():
        homes[p].mkdir()
        toml.write_text(TOML.format(p))

    started = time.monotonic()
    a = tools["a"].popen(*_run_args(tomls["a"], pg_url))  # both at once on a new, empty database
    b = tools["b"].popen(*_run_args(tomls["b"], pg_url))
    deadline = started + 300
    while time.monotonic() < deadline:
        found = _trials(pg_url)
        b_rows = [row for ids in _runs_of(found, "b") for row in found[ids]]
        if len(b_rows) >= 16 or b.poll() is not None:
            break
        time.sleep(0.05)
    found = _trials(pg_url)
    committed = {row for ids in _runs_of(found, "b") for row in found[ids]}  # visible: committed
    b.send_signal(signal.SIGKILL)
    b.wait(timeout=30)
    killed_at = time.monotonic() - started
    assert b.returncode == -signal.SIGKILL, "run b ended before the kill: " + b.stderr.read()[-400:]
    (b_id,) = _runs_of(_trials(pg_url), "b")
    after_kill = set(_trials(pg_url)[b_id])
    assert committed <= after_kill  # every trial committed before the kill is there
    assert 16 <= len(after_kill) < len(_expected("b")), "the kill should land mid-run"

    # resumed while a is (most likely) still writing
    a_running = a.poll() is None
    resume_start = time.monotonic()
    resumed = tools["b"]("run", "--resume", str(b_id), "--db", pg_url, timeout=300)
    resume_s = time.monotonic() - resume_start
    assert resumed.returncode == 0, resumed.stderr
    _, err_a = a.communicate(timeout=300)
    a_s = time.monotonic() - started
    assert a.returncode == 0, err_a

    found = _trials(pg_url)
    (a_id,) = _runs_of(found, "a")
    engine = create_engine(pg_url)
    with engine.connect() as conn:
        stored = dict(conn.execute(text("SELECT id, status FROM runs")).all())
    engine.dispose()
    assert a_id != b_id and set(found) == set(stored) == {a_id, b_id}  # two runs, ids apart, nothing else
    assert stored == {a_id: "complete", b_id: "complete"}
    for run_id, prefix in ((a_id, "a"), (b_id, "b")):
        slots = Counter(row[:3] for row in found[run_id])
        assert max(slots.values()) == 1  # nothing measured twice
        assert set(slots) == _expected(prefix)  # nothing lost, nothing of the other run
    assert after_kill <= set(found[b_id])  # kept as they were, not measured again
    for tool, run_id in ((tools["a"], a_id), (tools["b"], b_id)):
        shown = tool("show", str(run_id), "--json", "--db", pg_url)
        assert shown.returncode == 0, shown.stderr
        assert {row["workload"] for row in json.loads(shown.stdout)} >= set(WORKLOADS)
    print(f"\nPostgreSQL, two runs at once: {len(found[a_id])} + {len(found[b_id])} trials; "
          f"b killed at {killed_at:.1f} s with {len(after_kill)} stored ({len(committed)} seen before the kill), "
          f"resumed in {resume_s:.1f} s (a still running: {a_running}); a done at {a_s:.1f} s")


def _wait_for_trials(child, db: str, least: int) -> set[tuple]:
    """The trials stored once at least `least` are (or the child has ended): all committed."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and child.poll() is None:
        found = _trials(db)
        if sum(len(rows) for rows in found.values()) >= least:
            break
        time.sleep(0.05)
    return {row for rows in _trials(db).values() for row in rows}


def test_database_going_away_mid_run(pg_server: str, pg_url: str, shootout: Shootout, tmp_path: Path) -> None:
    """One line and exit 6; the committed trials stay and the run resumes once it is back."""
    toml = tmp_path / "w.toml"
    toml.write_text(TOML.format("g"))
    child = shootout.popen(*_run_args(toml, pg_url))
    committed = _wait_for_trials(child, pg_url, 10)
    assert child.poll() is None, child.stderr.read()[-400:] if child.stderr else ""
    name = make_url(pg_url).database
    engine = create_engine(pg_server, isolation_level="AUTOCOMMIT")  # another database of the server
    with engine.connect() as conn:  # gone for the run: its sessions ended, no new ones let in
        conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
        conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"),
                     {"name": name})
        _, err = child.communicate(timeout=120)
        conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
    engine.dispose()
    assert child.returncode == 6, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert f"{name}" in errors[0] and "not currently accepting connections" in errors[0]
    assert "credentials" not in errors[0]
    found = _trials(pg_url)
    (run_id,) = found
    assert committed <= set(found[run_id])
    resumed = shootout("run", "--resume", str(run_id), "--db", pg_url, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    slots = Counter(row[:3] for row in _trials(pg_url)[run_id])
    assert set(slots) == _expected("g") and max(slots.values()) == 1


def _team_commands() -> list[str]:
    """The indented commands of docs/machines.md's "A shared database for a team", in order."""
    section = TEAM_DOC.read_text().split("## A shared database for a team\n", 1)[1].split("\n#", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


@pytest.mark.root
def test_the_documented_team_setup(require_root: None, pg_server: str, tmp_path: Path) -> None:
    # pg_server: a running server (skipped without one, failed in CI); the page's commands reach it as postgres
    install, create, run = _team_commands()
    assert install == "apt-get install postgresql"
    assert subprocess.run(["dpkg-query", "-W", "postgresql"], capture_output=True).returncode == 0
    # The page's names, but a role of this test's own: a real "shootout" role is left alone.
    name, password = f"shootout_readme_{secrets.token_hex(4)}", secrets.token_hex(8)
    assert create == "sudo -u postgres createuser --pwprompt shootout && sudo -u postgres createdb -O shootout shootout"
    create = re.sub(r"\bshootout\b", name, create)
    url_in_page = "postgresql+psycopg://shootout:PASSWORD@dbhost/shootout"
    assert run == f"shootout run --db {url_in_page} -c ssh:user@host-a"
    url = f"postgresql+psycopg://{name}:{password}@localhost/{name}"
    try:
        # a session of its own: no terminal, so --pwprompt reads the password (twice) from stdin
        made = subprocess.run(create, shell=True, input=f"{password}\n{password}\n", text=True,
                              capture_output=True, start_new_session=True, timeout=60)
        assert made.returncode == 0, made.stderr
        toml = tmp_path / "team.toml"
        toml.write_text(TOML.format("m"))
        tool = Shootout(tmp_path)
        # this machine stands for ssh:user@host-a (host target), with a short run
        done = tool(*run.split()[1:2], "--db", url, "--file", str(toml), "-w", "nap", "--min-rounds", "8",
                    "--max-rounds", "8", "--repeats", "0", timeout=300)
        assert done.returncode == 0, done.stderr
        shown = tool("show", "last", "--db", url)
        assert shown.returncode == 0, shown.stderr
        assert "nap" in shown.stdout and "m1 vs m2" in shown.stdout
        engine = create_engine(url)  # the tables are the role's own, in its database
        with engine.connect() as conn:
            owners = conn.execute(text("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'"))
            assert owners.scalars().all() == [name]
        engine.dispose()
    finally:
        for undo in (["dropdb", "--if-exists", "--force", name], ["dropuser", "--if-exists", name]):
            subprocess.run(["sudo", "-u", "postgres", *undo], capture_output=True, timeout=60)
