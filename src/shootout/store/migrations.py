"""Numbered schema migrations: MIGRATIONS[i] takes a database from version i to i + 1.

Version 0 is a database without a schema_version table (new or empty file). To change the
schema, append a function to MIGRATIONS (e.g. one that adds a column with portable DDL)
and change schema.py to the new shape; the newest version is len(MIGRATIONS). Never edit a
migration that has shipped: databases in the field were made by it. That is why version 1
spells out its tables here instead of using schema.py, which moves on.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Connection,
    Double,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    insert,
    inspect,
    select,
    text,
)
from sqlalchemy.exc import SQLAlchemyError

from shootout.base.errors import StoreError
from shootout.store import schema
from shootout.store.engine import one_line

Migration = Callable[[Connection], None]


def _v1_create_tables(conn: Connection) -> None:
    md = MetaData()
    Table(
        "runs",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("created_at", Double, nullable=False),
        Column("updated_at", Double, nullable=False),
        Column("status", String(32), nullable=False),
        *(
            Column(name, JSON, nullable=False)
            for name in ("settings", "configs", "workloads", "params", "facts", "user_workloads")
        ),
        Column("elapsed_s", Double, nullable=False),
        Column("note", Text, nullable=False),
    )
    Table(
        "trials",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        Column("round", Integer, nullable=False),
        Column("position", Integer, nullable=False),
        Column("workload", String(200), nullable=False),
        Column("config", String(200), nullable=False),
        Column("warmup", Boolean, nullable=False),
        Column("values", JSON, nullable=False),
        Column("wall_s", Double, nullable=False),
        Column("user_s", Double, nullable=False),
        Column("sys_s", Double, nullable=False),
        Column("max_rss_kb", BigInteger, nullable=False),
        Column("ctx_switches", BigInteger, nullable=False),
        Column("exit_status", Integer, nullable=False),
        Column("stderr_tail", Text, nullable=False),
        Column("started_at", Double, nullable=False),
        Column("monitor", JSON, nullable=False),
        Column("error", Text, nullable=True),
        UniqueConstraint("run_id", "round", "workload", "config", name="uq_trial_slot"),
    )
    Table(
        "settings",
        md,
        Column("key", String(200), primary_key=True),
        Column("value", JSON, nullable=False),
        Column("updated_at", Double, nullable=False),
    )
    Table("schema_version", md, Column("version", Integer, nullable=False))
    # checkfirst=False: a foreign table of the same name is an error, not something to adopt.
    md.create_all(conn, checkfirst=False)


def _v2_trial_in_force(conn: Connection) -> None:
    """What each trial's configuration had in force on the machine (settings, scratch)."""
    conn.execute(text("ALTER TABLE trials ADD COLUMN in_force JSON NOT NULL DEFAULT '{}'"))


def _v3_trial_observed(conn: Connection) -> None:
    """What each configuration part saw during the trial (e.g. swap and pressure counters)."""
    conn.execute(text("ALTER TABLE trials ADD COLUMN observed JSON NOT NULL DEFAULT '{}'"))


MIGRATIONS: list[Migration] = [
    _v1_create_tables,
    _v2_trial_in_force,
    _v3_trial_observed,
]


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table("schema_version"):
        return 0
    version = conn.execute(select(func.max(schema.schema_version.c.version))).scalar()
    return int(version or 0)


def migrate(conn: Connection, where: str) -> int:
    """Bring the database to the newest version inside the caller's transaction.

    Failures name the step that failed (reading the version, creating the tables, or one
    migration), so a table in the way or missing rights is not mistaken for a login problem."""
    hint = _hint(conn)
    try:
        version = current_version(conn)
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read the schema version of {where}: {one_line(exc)}", hint) from None
    newest = len(MIGRATIONS)
    if version > newest:
        raise StoreError(
            f"database {where} has schema version {version}, newer than this shootout knows ({newest})",
            "upgrade shootout, or pass --db with another database",
        )
    for step in range(version, newest):
        try:
            MIGRATIONS[step](conn)
            conn.execute(schema.schema_version.delete())
            conn.execute(insert(schema.schema_version), {"version": step + 1})
        except SQLAlchemyError as exc:
            what = (f"cannot create the tables of {where}" if step == 0
                    else f"cannot migrate {where} from schema version {step} to {step + 1}")
            raise StoreError(f"{what}: {one_line(exc)}", hint) from None
    return newest


def _hint(conn: Connection) -> str:
    if conn.dialect.name == "sqlite":
        return "pass --db with another path, or check this file"
    return ("use a database of shootout's own, owned by the user in the URL "
            "(createdb -O USER NAME) or where it may create tables")
