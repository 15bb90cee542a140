"""Store: runs and their raw trials in an SQLAlchemy database, each write committed at once."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Row, delete, func, insert, select, update
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from shootout.base.errors import ShootoutError, StoreError
from shootout.base.model import Run, RunSettings, Trial
from shootout.base.paths import default_db_url
from shootout.base.runfacts import RunFacts
from shootout.store import engine as eng
from shootout.store import migrations, results
from shootout.store.schema import runs, settings, trials
from shootout.store.serialize import (
    jsonable,
    run_from_dict,
    run_to_dict,
    trial_from_dict,
)

_RUNS_HINT = "list runs with: shootout runs"
# What update_run(records=run) writes: the facts and the runner's records of Run
RECORDS = ("facts", "lost", "lost_workloads", "calibrated", "budget_refused", "headline_clocks", "set_aside",
           "across_boots", "counters")


class Store:
    """The results database. SQLite by default; any SQLAlchemy URL (or a file path)."""

    def __init__(self, url: str | None = None) -> None:
        parsed = eng.parse_url(url if url is not None else default_db_url())
        self.url: str = parsed.render_as_string(hide_password=False)
        self._where = eng.display(parsed)
        path = eng.sqlite_path(parsed)
        existed = path is not None and path.exists()
        self._engine = eng.open_engine(parsed)
        self._writer = eng.writer(self._engine)
        try:
            conn = self._writer.connect()
        except (SQLAlchemyError, OSError) as exc:
            self._engine.dispose()
            raise _open_error(parsed, existed, exc) from None
        try:
            with conn, conn.begin():
                eng.lock_schema(conn, self._where)  # processes starting at once on a new database
                self.schema_version = migrations.migrate(conn, self._where)
        except ShootoutError:
            self._engine.dispose()
            raise
        except (SQLAlchemyError, OSError) as exc:
            self._engine.dispose()
            raise StoreError(f"cannot open database {self._where}: {eng.one_line(exc)}",
                             "check that the database is reachable and writable") from None

    # -- plumbing ---------------------------------------------------------------------

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Database failures reach the user as one line naming what was being done."""
        try:
            yield
        except SQLAlchemyError as exc:
            raise StoreError(
                f"cannot {action} in {self._where}: {eng.one_line(exc)}",
                "check that the database is reachable and writable",
            ) from None

    @contextmanager
    def _write(self, action: str) -> Iterator[Connection]:
        with self._guard(action), self._writer.begin() as conn:
            yield conn

    @contextmanager
    def _read(self, action: str) -> Iterator[Connection]:
        with self._guard(action), self._engine.connect() as conn:
            yield conn

    def _no_run(self, run_id: int | str) -> StoreError:
        return StoreError(f"no run {run_id} in {self._where}", _RUNS_HINT)

    def _exists(self, conn: Connection, run_id: int) -> bool:
        return conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is not None

    @staticmethod
    def _run_row(run: Run, now: float) -> dict[str, Any]:
        row = run_to_dict(run)
        del row["id"]  # the database numbers runs
        return {**row, "updated_at": now}

    def _insert_run(self, conn: Connection, run: Run) -> int:
        key = conn.execute(insert(runs), self._run_row(run, time.time())).inserted_primary_key
        assert key is not None
        return int(key[0])

    @staticmethod
    def _trial_row(run_id: int, trial: Trial) -> dict[str, Any]:
        s = trial.spec
        return {
            "run_id": run_id,
            "round": s.round,
            "position": s.position,
            "workload": s.workload,
            "config": s.config,
            "warmup": s.warmup,
            "values": dict(trial.values),
            "wall_s": trial.wall_s,
            "user_s": trial.user_s,
            "sys_s": trial.sys_s,
            "max_rss_kb": trial.max_rss_kb,
            "ctx_switches": trial.ctx_switches,
            "exit_status": trial.exit_status,
            "stderr_tail": trial.stderr_tail,
            "started_at": trial.started_at,
            "monitor": jsonable(trial.monitor),
            "error": trial.error,
            "in_force": jsonable(trial.in_force),
            "observed": jsonable(trial.observed),
        }

    @staticmethod
    def _run_from_row(row: Row[Any]) -> Run:
        data = dict(row._mapping)
        data.pop("updated_at")
        return run_from_dict(data)

    @staticmethod
    def _trial_from_row(row: Row[Any]) -> Trial:
        m = row._mapping
        spec = {k: m[k] for k in ("round", "position", "workload", "config")}
        fields = ("values", "wall_s", "user_s", "sys_s", "max_rss_kb", "ctx_switches",
                  "exit_status", "stderr_tail", "started_at", "monitor", "error", "in_force",
                  "observed")  # fmt: skip
        return trial_from_dict({"spec": spec, **{k: m[k] for k in fields}})

    # -- runs -------------------------------------------------------------------------

    def create_run(self, run: Run) -> int:
        with self._write("create a run") as conn:
            return self._insert_run(conn, run)

    def update_run(
        self,
        run_id: int,
        *,
        status: str | None = None,
        params: dict[str, Any] | None = None,
        facts: RunFacts | None = None,
        elapsed_s: float | None = None,
        note: str | None = None,
        records: Run | None = None,
        run_settings: RunSettings | None = None,
    ) -> None:
        """records: write that run's facts and the runner's records kept with it (lost, calibrated, ...);
        run_settings: the run's settings once its last look is planned (measure/roundplan.py)."""
        changes: dict[str, Any] = {"updated_at": time.time()}
        if run_settings is not None:
            changes["settings"] = jsonable(dataclasses.asdict(run_settings))
        given = {"status": status, "params": params, "elapsed_s": elapsed_s, "note": note}
        changes.update({k: jsonable(v) for k, v in given.items() if v is not None})
        if facts is not None:
            changes["facts"] = jsonable(dataclasses.asdict(facts))
        if records is not None:
            row = run_to_dict(records)
            changes.update({k: row[k] for k in RECORDS})
        with self._write(f"update run {run_id}") as conn:
            if conn.execute(update(runs).where(runs.c.id == run_id).values(changes)).rowcount == 0:
                raise self._no_run(run_id)

    def get_run(self, ref: str | int) -> Run:
        with self._read("read a run") as conn:
            if isinstance(ref, str) and ref.strip().lower() == "last":
                row = conn.execute(select(runs).order_by(runs.c.id.desc()).limit(1)).first()
                if row is None:
                    raise StoreError(f"no runs in {self._where}", "start one with: shootout run")
                return self._run_from_row(row)
            run_id = _run_id(ref)
            row = conn.execute(select(runs).where(runs.c.id == run_id)).first()
            if row is None:
                raise self._no_run(run_id)
            return self._run_from_row(row)

    def list_runs(self) -> list[Run]:
        """Newest (most recently stored) first."""
        with self._read("list runs") as conn:
            rows = conn.execute(select(runs).order_by(runs.c.id.desc())).all()
        return [self._run_from_row(r) for r in rows]

    def delete_run(self, run_id: int) -> None:
        with self._write(f"delete run {run_id}") as conn:
            # Explicit, so it does not depend on the backend enforcing ON DELETE CASCADE.
            conn.execute(delete(trials).where(trials.c.run_id == run_id))
            if conn.execute(delete(runs).where(runs.c.id == run_id)).rowcount == 0:
                raise self._no_run(run_id)

    # -- trials -----------------------------------------------------------------------

    def add_trial(self, run_id: int, trial: Trial) -> None:
        """Commits before returning, so a kill afterwards cannot lose this trial."""
        s = trial.spec
        with self._guard(f"store a trial of run {run_id}"):
            try:
                with self._writer.begin() as conn:
                    conn.execute(insert(trials), self._trial_row(run_id, trial))
            except IntegrityError:
                # The unique slot or the run's foreign key: say which.
                with self._engine.connect() as conn:
                    if not self._exists(conn, run_id):
                        raise self._no_run(run_id) from None
                raise StoreError(
                    f"run {run_id} already holds the round {s.round} trial of {s.workload} on {s.config}",
                    "each trial is stored once; --resume skips the ones already stored",
                ) from None

    def trials(self, run_id: int, include_warmup: bool = False) -> list[Trial]:
        """Ordered by round, then position within the round."""
        query = select(trials).where(trials.c.run_id == run_id)
        if not include_warmup:
            query = query.where(trials.c.warmup.is_(False))
        query = query.order_by(trials.c.round, trials.c.position, trials.c.id)
        with self._read(f"read the trials of run {run_id}") as conn:
            rows = conn.execute(query).all()
        return [self._trial_from_row(r) for r in rows]

    def trial_count(self, run_id: int, include_warmup: bool = False) -> int:
        """Counts what trials(run_id, include_warmup) would return."""
        query = select(func.count()).select_from(trials).where(trials.c.run_id == run_id)
        if not include_warmup:
            query = query.where(trials.c.warmup.is_(False))
        with self._read(f"count the trials of run {run_id}") as conn:
            return int(conn.execute(query).scalar_one())

    # -- results files ----------------------------------------------------------------

    def export_run(self, run_id: int) -> dict[str, Any]:
        return results.to_results(self.get_run(run_id), self.trials(run_id, include_warmup=True))

    def import_run(self, data: dict[str, Any]) -> int:
        """Validate first, then write the run and all its trials in one transaction."""
        run, run_trials = results.from_results(data)
        with self._write("import a run") as conn:
            new_id = self._insert_run(conn, run)
            if run_trials:
                conn.execute(insert(trials), [self._trial_row(new_id, t) for t in run_trials])
        return new_id

    def export_csv(self, run_id: int) -> str:
        return results.to_csv(self.get_run(run_id), self.trials(run_id, include_warmup=True))

    # -- settings ---------------------------------------------------------------------

    def put_setting(self, key: str, value: dict[str, Any]) -> None:
        row = {"value": jsonable(value), "updated_at": time.time()}
        with self._write(f"save setting {key}") as conn:
            changed = conn.execute(update(settings).where(settings.c.key == key).values(row)).rowcount
            if changed == 0:
                conn.execute(insert(settings), {"key": key, **row})

    def get_setting(self, key: str) -> dict[str, Any] | None:
        with self._read(f"read setting {key}") as conn:
            value = conn.execute(select(settings.c.value).where(settings.c.key == key)).scalar()
        return dict(value) if value is not None else None

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _open_error(url: URL, existed: bool, exc: BaseException) -> StoreError:
    path = eng.sqlite_path(url)
    if path is None:  # nothing but the connection has been tried
        what, hint = (
            f"cannot connect to database {eng.display(url)}",
            "check the URL, that the server is running, and the user and password",
        )
    elif existed:
        what, hint = f"cannot open database {path}", "pass --db with another path, or check this file"
    else:
        what, hint = f"cannot create database {path}", eng.WRITABLE_HINT
    return StoreError(f"{what}: {eng.one_line(exc)}", hint)


def _run_id(ref: str | int) -> int:
    if isinstance(ref, int) and not isinstance(ref, bool):
        return ref
    if isinstance(ref, str) and ref.strip().isdigit():
        return int(ref.strip())
    raise StoreError(f"bad run reference {ref!r}", "give a run id (a number) or 'last'")
