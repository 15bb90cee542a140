"""Numbered schema migrations: MIGRATIONS[i] takes a database from version i to i + 1.

Version 0 is a database without a schema_version table (new or empty file). To change the
schema, append a function to MIGRATIONS (e.g. one that adds a column with portable DDL)
and change schema.py to the new shape; the newest version is len(MIGRATIONS). Never edit a
migration that has shipped: databases in the field were made by it. That is why version 1
spells out its tables here instead of using schema.py, which moves on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

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
    update,
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


# Keys version 3 kept inside a run's facts: the runner's records in the machine's facts, and
# the workloads it lost at the top beside the configurations' facts.
_V3_MACHINE_RECORDS = {"lost_configurations": "lost", "calibrated_workloads": "calibrated",
                       "budget_refused": "budget_refused", "headline_clock": "headline_clocks",
                       "set_aside": "set_aside", "across_boots": "across_boots"}
_V3_LOST_WORKLOADS = "lost"


def _v3_userspace_ref(config: dict[str, Any]) -> dict[str, str] | None:
    """The userspace_ref of a configuration stored before configurations carried one: a chroot
    in a userspace named as shootout makes them (debian-RELEASE-ARCH, what version 3 read them
    from), or a vm:debian:... with its release and arch options. Stored data has nothing else to
    tell them by; code that runs reads the ref its parser set."""
    options = dict(tuple(p) for p in config.get("options") or [])
    if config.get("target") == "chroot" and (made := re.fullmatch(r"debian-(\w+)-(\w+)", str(config.get("userspace")))):
        return {"release": made[1], "arch": made[2]}
    if config.get("target") == "vm" and options.get("release") and options.get("arch"):
        return {"release": str(options["release"]), "arch": str(options["arch"])}
    return None


def typed_run(run: dict[str, Any]) -> dict[str, Any]:
    """A run as version 3 stored it (its facts one mapping of "machine" and each configuration,
    the runner's records inside it) as version 4 does: facts {"machine", "sides"}, the records
    as the run's own fields, each configuration with its userspace_ref. Also reads results
    files of version 1 (store/results.py)."""
    out = dict(run)
    facts = dict(run.get("facts") or {})
    machine = dict(facts.pop("machine", None) or {})
    names = {str(c.get("name")) for c in run.get("configs") or [] if isinstance(c, dict)}
    for key, field_name in _V3_MACHINE_RECORDS.items():
        if key in machine:
            out[field_name] = machine.pop(key)
    if _V3_LOST_WORKLOADS in facts and _V3_LOST_WORKLOADS not in names:
        out["lost_workloads"] = facts.pop(_V3_LOST_WORKLOADS)
    out["facts"] = {"machine": machine, "sides": facts}
    out["configs"] = [{**c, "userspace_ref": _v3_userspace_ref(c)} if isinstance(c, dict) and "userspace_ref" not in c
                      else c for c in run.get("configs") or []]
    for key, empty in (("lost", {}), ("lost_workloads", {}), ("calibrated", None), ("budget_refused", None),
                       ("headline_clocks", {}), ("set_aside", []), ("across_boots", None)):
        out.setdefault(key, empty)
    return out


def _v4_typed_facts(conn: Connection) -> None:
    """The runner's records out of a run's facts into columns of their own, the facts split into
    the machine's and the sides', and each configuration with its userspace_ref (typed_run)."""
    records = {"lost": "NOT NULL DEFAULT '{}'", "lost_workloads": "NOT NULL DEFAULT '{}'", "calibrated": "NULL",
               "budget_refused": "NULL", "headline_clocks": "NOT NULL DEFAULT '{}'", "set_aside": "NOT NULL DEFAULT '[]'",
               "across_boots": "NULL"}
    for name, rest in records.items():
        conn.execute(text(f"ALTER TABLE runs ADD COLUMN {name} JSON {rest}"))
    runs = Table("runs", MetaData(), Column("id", Integer, primary_key=True), Column("configs", JSON),
                 Column("facts", JSON), *(Column(name, JSON) for name in records))
    for row in conn.execute(select(runs.c.id, runs.c.configs, runs.c.facts)).all():
        moved = typed_run({"configs": row.configs, "facts": row.facts})
        conn.execute(update(runs).where(runs.c.id == row.id).values(
            {key: moved[key] for key in ("configs", "facts", *records)}))


def _v5_run_counters(conn: Connection) -> None:
    """What each run's counters pass recorded (Run.counters): nothing for the runs before it."""
    conn.execute(text("ALTER TABLE runs ADD COLUMN counters JSON NOT NULL DEFAULT '{}'"))


MIGRATIONS: list[Migration] = [
    _v1_create_tables,
    _v2_trial_in_force,
    _v3_trial_observed,
    _v4_typed_facts,
    _v5_run_counters,
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
