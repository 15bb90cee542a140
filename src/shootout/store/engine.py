"""Opening a database by URL: SQLite files (WAL, created with their directory) or any
SQLAlchemy URL, with every failure turned into a one-line StoreError."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from shootout.base.errors import StoreError

WRITABLE_HINT = "pass --db with a writable path"
URL_HINT = "give a file path or a URL such as sqlite:////var/lib/results.db or postgresql://user@host/db"
# Driver module -> (Debian package, pip requirement), for the error when one is missing.
_DRIVERS = {
    "psycopg": ("python3-psycopg", "'psycopg[binary]'"),
    "psycopg2": ("python3-psycopg2", "psycopg2-binary"),
    "pg8000": ("python3-pg8000", "pg8000"),
    "MySQLdb": ("python3-mysqldb", "mysqlclient"),
    "pymysql": ("python3-pymysql", "pymysql"),
}
# How long a writer waits for another process's write lock before failing.
BUSY_TIMEOUT_S = 30.0
# PostgreSQL advisory lock held while the schema is made or migrated: "shootout" in ASCII.
SCHEMA_LOCK_KEY = int.from_bytes(b"shootout", "big")


def parse_url(url: str) -> URL:
    """A plain path (no scheme) means an SQLite file."""
    if "://" not in url:
        return URL.create("sqlite", database=str(Path(url).expanduser().absolute()))
    try:
        return make_url(url)
    except (ArgumentError, ValueError):
        raise StoreError(f"bad database URL {url!r}", URL_HINT) from None


def sqlite_path(url: URL) -> Path | None:
    """The file of an SQLite URL; None for other databases and in-memory SQLite."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    if url.database.startswith("file:"):  # URI filenames are passed through to SQLite as-is
        return None
    return Path(url.database)


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        for ancestor in path.parents:
            if ancestor.exists():
                if not ancestor.is_dir():
                    reason = f"{ancestor} is not a directory"
                break
        raise StoreError(f"cannot create database {path}: {reason}", WRITABLE_HINT) from None


def _wal(cur: Any) -> None:
    """PRAGMA journal_mode=WAL, waiting for the lock it needs. Processes that open one new database
    at once meet here, and SQLite answers "database is locked" at once rather than wait when
    waiting could deadlock (a shared lock held while another process asks for the write lock)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _sqlite_events(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # SQLAlchemy emits BEGIN itself (below) so DDL in migrations is transactional too.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        # WAL + FULL: a commit survives a killed process and a power cut; readers never block the runner.
        _wal(cur)
        cur.execute("PRAGMA synchronous=FULL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers take the write lock up front: a deferred transaction that reads first
        # can fail at once with SQLITE_BUSY instead of waiting for the lock.
        mode = conn.get_execution_options().get("sqlite_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())


def one_line(exc: BaseException) -> str:
    """The driver's own message, first line only (PostgreSQL adds DETAIL lines)."""
    inner = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = str(inner).strip() or type(inner).__name__
    return text.splitlines()[0]


def open_engine(url: URL) -> Engine:
    backend = url.get_backend_name()
    path = sqlite_path(url)
    if path is not None:
        if path.is_dir():
            raise StoreError(f"cannot create database {path}: it is a directory", WRITABLE_HINT)
        _make_parent(path)
    kwargs: dict[str, Any] = {}
    if backend == "sqlite":
        kwargs["connect_args"] = {"timeout": BUSY_TIMEOUT_S}
    try:
        engine = create_engine(url, **kwargs)
    except NoSuchModuleError:
        raise StoreError(f"unknown database kind {url.drivername!r}", URL_HINT) from None
    except ImportError as exc:
        module = (exc.name or "").split(".")[0]
        if module in _DRIVERS:
            debian, pip = _DRIVERS[module]
            hint = f"install the Debian package {debian}, or pip install {pip}"
        else:
            hint = f"install the Python driver for {url.drivername}"
        raise StoreError(
            f"the {backend} database driver {module or url.drivername} is not installed", hint
        ) from None
    except (ArgumentError, SQLAlchemyError, TypeError, ValueError) as exc:
        raise StoreError(f"bad database URL {display(url)}: {one_line(exc)}", URL_HINT) from None
    if backend == "sqlite":
        _sqlite_events(engine)
    return engine


def lock_schema(conn: Connection, where: str) -> None:
    """Make processes that open one database at once create and migrate its schema one at a
    time, until the caller's transaction ends. SQLite's writer transactions hold the file's
    write lock from their start already (writer() below); PostgreSQL needs an advisory lock,
    waited for as long as SQLite waits for its lock (a stopped holder would hang us forever)."""
    if conn.dialect.name != "postgresql":
        return
    conn.exec_driver_sql(f"SET LOCAL lock_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    try:
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
    except DBAPIError as exc:
        if getattr(exc.orig, "sqlstate", None) != "55P03":  # lock_not_available
            raise
        raise StoreError(
            f"another process held the schema of {where} for {BUSY_TIMEOUT_S:g} s (creating or migrating it)",
            "try again; if it stays, find it with: SELECT pid FROM pg_locks WHERE locktype = 'advisory'",
        ) from None
    conn.exec_driver_sql("SET LOCAL lock_timeout = DEFAULT")


def display(url: URL) -> str:
    return url.render_as_string(hide_password=True)


def writer(engine: Engine) -> Engine:
    """The same engine, but its transactions take SQLite's write lock when they begin."""
    if engine.dialect.name == "sqlite":
        return engine.execution_options(sqlite_begin="IMMEDIATE")
    return engine
