"""The tables of the results database, as of the newest schema version.

Queries use these definitions; migrations.py holds the history that brings an older
database to this shape. Only portable types: the same tables work on SQLite and PostgreSQL.
Every raw trial is kept; statistics are recomputed on read and never stored.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Double,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_at", Double, nullable=False),  # Unix time
    Column("updated_at", Double, nullable=False),
    Column("status", String(32), nullable=False),
    Column("settings", JSON, nullable=False),  # RunSettings
    Column("configs", JSON, nullable=False),  # [Config], baseline first
    Column("workloads", JSON, nullable=False),  # [WorkloadSpec]
    Column("params", JSON, nullable=False),
    Column("facts", JSON, nullable=False),  # RunFacts: {"machine": ..., "sides": {config: ...}} (version 4)
    Column("user_workloads", JSON, nullable=False),
    Column("elapsed_s", Double, nullable=False, default=0.0),
    Column("note", Text, nullable=False, default=""),
    # the runner's records, each a field of Run (version 4; before, keys inside the facts)
    Column("lost", JSON, nullable=False),
    Column("lost_workloads", JSON, nullable=False),
    Column("calibrated", JSON, nullable=True),
    Column("budget_refused", JSON, nullable=True),
    Column("headline_clocks", JSON, nullable=False),
    Column("set_aside", JSON, nullable=False),
    Column("across_boots", JSON, nullable=True),
    Column("counters", JSON, nullable=False),  # version 5
)

trials = Table(
    "trials",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("round", Integer, nullable=False),
    Column("position", Integer, nullable=False),
    Column("workload", String(200), nullable=False),
    Column("config", String(200), nullable=False),
    Column("warmup", Boolean, nullable=False),
    Column("values", JSON, nullable=False),  # metric name -> value
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
    Column("in_force", JSON, nullable=False),  # part name -> machine state read back (version 2)
    Column("observed", JSON, nullable=False),  # part name -> what it saw during the trial (version 3)
    # One trial per slot: this is what keeps --resume from ever doubling a trial.
    UniqueConstraint("run_id", "round", "workload", "config", name="uq_trial_slot"),
)

settings = Table(
    "settings",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("value", JSON, nullable=False),
    Column("updated_at", Double, nullable=False),
)

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, nullable=False),
)
