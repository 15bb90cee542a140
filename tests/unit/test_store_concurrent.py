"""Several processes opening one new, empty database at the same moment: one creates the
schema, the others wait for it and use it (on PostgreSQL both once created the tables at once
and one failed with "duplicate key value violates unique constraint pg_type_typname_nsp_index").

Each child imports the store, says "ready" and waits; the parent releases them together.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

import shootout
from shootout.store import Store, migrations, schema

CHILD = """
import sys
from shootout.errors import ShootoutError
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


def _open_at_once(url: str, script: Path) -> list[str]:
    src = str(Path(shootout.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    children = [subprocess.Popen([sys.executable, str(script), url], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, env=env) for _ in range(PROCESSES)]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    for child in children:  # go, as close together as pipes allow
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    return [child.communicate(timeout=120)[0].strip() for child in children]


def test_schema_is_made_once_when_processes_start_together(new_url: str, tmp_path: Path) -> None:
    script = tmp_path / "opener.py"
    script.write_text(CHILD)
    newest = len(migrations.MIGRATIONS)
    assert _open_at_once(new_url, script) == [f"version {newest}"] * PROCESSES
    with Store(new_url) as store:  # one schema, at the newest version, recorded once
        assert set(inspect(store._engine).get_table_names()) == set(schema.metadata.tables)
        with store._engine.connect() as conn:
            assert conn.execute(text("SELECT version FROM schema_version")).scalars().all() == [newest]

