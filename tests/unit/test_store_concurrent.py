"""Several processes opening one new, empty database at the same moment: one creates the
schema, the others wait for it and use it (on PostgreSQL two once created the tables at once
and one failed with "duplicate key value violates unique constraint pg_type_typname_nsp_index").

Each child imports the store, says "ready" and waits; the parent releases them together. On
PostgreSQL the parent also plays a slow creator: it holds an uncommitted table `runs` until
every child waits on a lock, so all of them reach the schema at once, every time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, inspect, text

import shootout
from shootout.store import Store, migrations, schema

CHILD = """
import sys
from shootout.base.errors import ShootoutError
from shootout.store import Store

print("ready", flush=True)
sys.stdin.readline()
try:
    with Store(sys.argv[1]) as store:
        print("version", store.schema_version, flush=True)
except ShootoutError as exc:
    print("error", exc, flush=True)
"""

PROCESSES = 8


@pytest.fixture(params=["sqlite", "postgresql"])
def new_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return f"sqlite:///{tmp_path / 'new.db'}"


def _start(url: str, script: Path) -> list[subprocess.Popen[str]]:
    src = str(Path(shootout.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    children = [subprocess.Popen([sys.executable, str(script), url], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, env=env) for _ in range(PROCESSES)]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return children


def _go(children: list[subprocess.Popen[str]]) -> None:
    for child in children:  # as close together as pipes allow
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()


def _wait_for_lock_waiters(engine: Engine, count: int) -> None:
    watch = create_engine(engine.url, isolation_level="AUTOCOMMIT")
    deadline = time.monotonic() + 60
    waiting = 0
    with watch.connect() as conn:
        while time.monotonic() < deadline:
            waiting = conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                        "AND wait_event_type = 'Lock'")).scalar_one()
            if waiting >= count:
                break
            time.sleep(0.02)
    watch.dispose()
    assert waiting == count, f"{waiting} of {count} openers reached the schema"


def test_schema_is_made_once_when_processes_start_together(new_url: str, tmp_path: Path) -> None:
    script = tmp_path / "opener.py"
    script.write_text(CHILD)
    children = _start(new_url, script)
    if new_url.startswith("postgresql"):
        engine = create_engine(new_url)
        with engine.connect() as conn:
            slow = conn.begin()
            conn.execute(text("CREATE TABLE runs (id INTEGER)"))
            _go(children)
            _wait_for_lock_waiters(engine, PROCESSES)
            slow.rollback()
        engine.dispose()
    else:
        _go(children)
    newest = len(migrations.MIGRATIONS)
    assert [child.communicate(timeout=120)[0].strip() for child in children] == [f"version {newest}"] * PROCESSES
    with Store(new_url) as store:  # one schema, at the newest version, recorded once
        assert set(inspect(store._engine).get_table_names()) == set(schema.metadata.tables)
        with store._engine.connect() as conn:
            assert conn.execute(text("SELECT version FROM schema_version")).scalars().all() == [newest]


def test_schema_held_too_long_is_named(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that holds the schema lock (stopped mid-migration, say) is named, not waited for forever."""
    from shootout.base.errors import StoreError
    from shootout.store import engine as eng

    monkeypatch.setattr(eng, "BUSY_TIMEOUT_S", 0.5)
    holder = create_engine(pg_url)
    with holder.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": eng.SCHEMA_LOCK_KEY})
        started = time.monotonic()
        with pytest.raises(StoreError) as err:
            Store(pg_url)
        assert time.monotonic() - started < 10
    holder.dispose()
    assert err.value.message.startswith("another process held the schema of postgresql")
    assert "for 0.5 s (creating or migrating it)" in err.value.message
    with Store(pg_url) as store:  # once it is let go
        assert store.schema_version == len(migrations.MIGRATIONS)
