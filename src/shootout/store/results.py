"""The results file (versioned JSON of one run with every raw trial) and the CSV export."""

from __future__ import annotations

import csv
import io
from typing import Any

from shootout.base.errors import StoreError
from shootout.base.model import Run, Trial
from shootout.store.migrations import typed_run
from shootout.store.serialize import (
    run_from_dict,
    run_to_dict,
    trial_from_dict,
    trial_to_dict,
)

RESULTS_FORMAT = "shootout-results"
# 2: the run's facts as {"machine", "sides"} and the runner's records as its own fields;
# version 1 files (facts one mapping, the records inside it) are read through typed_run
RESULTS_FORMAT_VERSION = 2

_HINT = "import a file written by: shootout export"

CSV_COLUMNS = (
    "run_id", "round", "position", "workload", "config", "warmup", "metric", "unit", "value",
    "wall_s", "user_s", "sys_s", "max_rss_kb", "ctx_switches", "exit_status", "started_at",
    "error",
)  # fmt: skip


def to_results(run: Run, trials: list[Trial]) -> dict[str, Any]:
    return {
        "format": RESULTS_FORMAT,
        "version": RESULTS_FORMAT_VERSION,
        "run": run_to_dict(run),
        "trials": [trial_to_dict(t) for t in trials],
    }


def from_results(data: Any) -> tuple[Run, list[Trial]]:
    """Check a results dict and rebuild its records; StoreError says what is wrong."""
    if not isinstance(data, dict):
        raise StoreError(f"not a shootout results file: expected an object, got {type(data).__name__}", _HINT)
    if data.get("format") != RESULTS_FORMAT:
        raise StoreError(
            f"not a shootout results file: format is {data.get('format')!r}, expected {RESULTS_FORMAT!r}",
            _HINT,
        )
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise StoreError(f"bad results file version {version!r}", _HINT)
    if version > RESULTS_FORMAT_VERSION:
        raise StoreError(
            f"results file version {version} is newer than this shootout reads ({RESULTS_FORMAT_VERSION})",
            "upgrade shootout to import it",
        )
    for key in ("run", "trials"):
        if key not in data:
            raise StoreError(f"malformed results file: missing key {key!r}", _HINT)
    stored = data["run"]
    run = run_from_dict(typed_run(stored) if version == 1 and isinstance(stored, dict) else stored)
    if not isinstance(data["trials"], list):
        raise StoreError("malformed results file: 'trials' should be a list", _HINT)
    trials = [trial_from_dict(t) for t in data["trials"]]
    _check_consistent(run, trials)
    return run, trials


def _check_consistent(run: Run, trials: list[Trial]) -> None:
    configs = {c.name for c in run.configs}
    workloads = {w.name for w in run.workloads}
    seen: set[tuple[int, str, str]] = set()
    for t in trials:
        s = t.spec
        if s.config not in configs or s.workload not in workloads:
            raise StoreError(
                f"malformed results file: trial of {s.workload} on {s.config} names a "
                "workload or configuration the run does not have",
                _HINT,
            )
        slot = (s.round, s.workload, s.config)
        if slot in seen:
            raise StoreError(
                f"malformed results file: two trials of {s.workload} on {s.config} in round {s.round}",
                _HINT,
            )
        seen.add(slot)


def to_csv(run: Run, trials: list[Trial]) -> str:
    """One row per (trial, metric); a trial without values (failed) still gets one row."""
    units = {(w.name, m.name): m.unit for w in run.workloads for m in w.metrics}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for t in trials:
        s = t.spec
        common = (
            t.wall_s,
            t.user_s,
            t.sys_s,
            t.max_rss_kb,
            t.ctx_switches,
            t.exit_status,
            t.started_at,
            t.error or "",
        )
        metrics: list[tuple[str, str, float | str]] = [
            (name, units.get((s.workload, name), ""), value) for name, value in t.values.items()
        ]
        for name, unit, value in metrics or [("", "", "")]:
            writer.writerow(
                (run.id, s.round, s.position, s.workload, s.config, int(s.warmup), name, unit, value, *common)
            )
    return out.getvalue()
