"""Schema versions: fresh databases, version 0 files, hand-made v1 files, an appended migration."""

from __future__ import annotations

import re
import sqlite3

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateTable

from shootout.base.errors import StoreError
from shootout.base.model import Config
from shootout.store import Store, migrations, schema

# Written by hand, as shootout 0.1 (schema version 1) made it, to catch drift in migrations.py.
V1_SQL = """
CREATE TABLE runs (
    id INTEGER NOT NULL PRIMARY KEY, created_at FLOAT NOT NULL, updated_at FLOAT NOT NULL,
    status VARCHAR(32) NOT NULL, settings JSON NOT NULL, configs JSON NOT NULL,
    workloads JSON NOT NULL, params JSON NOT NULL, facts JSON NOT NULL,
    user_workloads JSON NOT NULL, elapsed_s FLOAT NOT NULL, note TEXT NOT NULL);
CREATE TABLE trials (
    id INTEGER NOT NULL PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    round INTEGER NOT NULL, position INTEGER NOT NULL, workload VARCHAR(200) NOT NULL,
    config VARCHAR(200) NOT NULL, warmup BOOLEAN NOT NULL, "values" JSON NOT NULL,
    wall_s FLOAT NOT NULL, user_s FLOAT NOT NULL, sys_s FLOAT NOT NULL, max_rss_kb BIGINT NOT NULL,
    ctx_switches BIGINT NOT NULL, exit_status INTEGER NOT NULL, stderr_tail TEXT NOT NULL,
    started_at FLOAT NOT NULL, monitor JSON NOT NULL, error TEXT,
    CONSTRAINT uq_trial_slot UNIQUE (run_id, round, workload, config));
CREATE TABLE settings (key VARCHAR(200) NOT NULL PRIMARY KEY, value JSON NOT NULL, updated_at FLOAT NOT NULL);
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
INSERT INTO runs VALUES (4, 1600000000.5, 1600000001.0, 'complete', '{"seed": 3, "min_rounds": 8}',
    '[{"name": "a"}, {"name": "b", "abi": "m32", "cflags": ["-m32"]}]',
    '[{"name": "w", "category": "cpu", "description": "d",
      "metrics": [{"name": "m", "unit": "s"}], "headline": "m"}]',
    '{"w": {"n": 10}}', '{"machine": {"cores": 4}}', '{}', 30.0, 'old');
INSERT INTO trials VALUES (1, 4, 1, 0, 'w', 'b', 0, '{"m": 1.5}', 1.5, 1.4, 0.1, 2048, 7, 0, '',
    1600000000.75, '{}', NULL);
INSERT INTO settings VALUES ('noise', '{"w": 0.01}', 1600000000.0);
"""


def hand_made_v1(path) -> None:
    con = sqlite3.connect(path)
    con.executescript(V1_SQL)
    con.close()


def raw(path, sql: str) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return f"sqlite:///{tmp_path / 'results.db'}"


def test_fresh_database_matches_schema_py(url: str) -> None:
    """Migrations and schema.py must describe the same tables, or queries break on old files."""
    with Store(url) as s:
        assert s.schema_version == len(migrations.MIGRATIONS) == 5
        insp = inspect(s._engine)
        assert set(insp.get_table_names()) == set(schema.metadata.tables)
        for name, table in schema.metadata.tables.items():
            found = {c["name"]: c["nullable"] for c in insp.get_columns(name)}
            assert found == {c.name: c.nullable for c in table.columns}, name
        uniques = insp.get_unique_constraints("trials")
        assert [sorted(u["column_names"]) for u in uniques] == [["config", "round", "run_id", "workload"]]


def test_version_0_files_are_created(tmp_path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()  # an empty file is an empty SQLite database
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (text TEXT)")
    con.execute("INSERT INTO notes VALUES ('keep me')")
    con.commit()
    con.close()
    for path in (empty, other):
        with Store(f"sqlite:///{path}") as s:
            assert s.schema_version == 5
        assert raw(path, "SELECT version FROM schema_version") == [(5,)]
    assert raw(other, "SELECT text FROM notes") == [("keep me",)]


def test_hand_made_v1_database_is_read(tmp_path) -> None:
    path = tmp_path / "v1.db"
    hand_made_v1(path)
    with Store(f"sqlite:///{path}") as s:
        run = s.get_run("last")
        assert (run.id, run.status, run.settings.seed, run.settings.min_rounds) == (4, "complete", 3, 8)
        assert run.configs == [Config(name="a"), Config(name="b", abi="m32", cflags=("-m32",))]
        [trial] = s.trials(4)
        assert (trial.spec.config, trial.values, trial.max_rss_kb, trial.ok) == ("b", {"m": 1.5}, 2048, True)
        assert trial.in_force == {}  # version 2 added the column; old trials had nothing recorded
        assert trial.observed == {}  # and version 3 this one
        assert run.counters == {}  # and version 5 the counters pass's record
        assert s.get_setting("noise") == {"w": 0.01}
        assert s.create_run(run) == 5  # ids go on after the old ones


def test_appended_migration_upgrades_v1(tmp_path, monkeypatch) -> None:
    path = tmp_path / "v1.db"
    hand_made_v1(path)
    calls = []

    def v6_add_host(conn) -> None:
        calls.append(1)
        conn.execute(text("ALTER TABLE runs ADD COLUMN host VARCHAR(200)"))
        conn.execute(text("UPDATE runs SET host = 'pi4'"))

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, v6_add_host])
    with Store(f"sqlite:///{path}") as s:
        assert s.schema_version == 6
        assert s.get_run(4).note == "old"
    assert raw(path, "SELECT host FROM runs") == [("pi4",)]
    assert raw(path, "SELECT in_force FROM trials") == [("{}",)]
    assert raw(path, "SELECT observed FROM trials") == [("{}",)]
    assert raw(path, "SELECT version FROM schema_version") == [(6,)]
    with Store(f"sqlite:///{path}") as s:  # already at 6: nothing runs again
        assert s.schema_version == 6
    assert calls == [1]


def test_failed_migration_changes_nothing(tmp_path, monkeypatch) -> None:
    path = tmp_path / "v1.db"
    hand_made_v1(path)

    def v3_broken(conn) -> None:
        conn.execute(text("CREATE TABLE extra (x INTEGER)"))
        conn.execute(text("ALTER TABLE no_such_table ADD COLUMN y INTEGER"))

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, v3_broken])
    with pytest.raises(StoreError) as err:
        Store(f"sqlite:///{path}")
    assert "no such table" in err.value.message
    # DDL is transactional here: the half-done step is rolled back with the version bump.
    assert raw(path, "SELECT version FROM schema_version") == [(1,)]
    assert raw(path, "SELECT name FROM sqlite_master WHERE name = 'extra'") == []


def test_newer_database_is_refused(tmp_path) -> None:
    path = tmp_path / "v1.db"
    hand_made_v1(path)
    con = sqlite3.connect(path)
    con.execute("UPDATE schema_version SET version = 9")
    con.commit()
    con.close()
    with pytest.raises(StoreError) as err:
        Store(f"sqlite:///{path}")
    assert "schema version 9, newer than this shootout knows (5)" in err.value.message
    assert "upgrade shootout" in err.value.hint


def test_foreign_table_of_the_same_name_is_an_error(url: str) -> None:
    """The error names the step that failed, not the connection or the credentials."""
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE runs (what TEXT)"))
    with pytest.raises(StoreError) as err:
        Store(url)
    assert err.value.message.startswith("cannot create the tables of ")
    assert "already exists" in err.value.message and "credentials" not in str(err.value)
    assert not inspect(engine).has_table("schema_version")  # nothing made
    engine.dispose()


def test_tables_compile_for_postgresql() -> None:
    """Only portable types: every table has PostgreSQL DDL (and test_fresh_database_matches_schema_py makes them live)."""
    dialect = postgresql.dialect()
    ddl = {name: str(CreateTable(t).compile(dialect=dialect)) for name, t in schema.metadata.tables.items()}
    assert re.search(r'\s"?values"? JSON NOT NULL', ddl["trials"])
    assert "monitor JSON" in ddl["trials"] and "DOUBLE PRECISION" in ddl["runs"]
    assert "id SERIAL NOT NULL" in ddl["runs"]
