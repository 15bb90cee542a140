"""Import `hyperfine --export-json` results as a run.

hyperfine's JSON: {"results": [{"command", "mean", "stddev", "median", "user", "system",
"min", "max", "times": [...], "exit_codes": [...], "parameters": {...}}]}. Each command
becomes a configuration of one workload, "hyperfine", with one metric: wall time in
seconds, lower is better; each entry of "times" is a trial, round r holding the r-th
time of every command. hyperfine runs one command's runs after the other's, so those
rounds are not interleaved in time: the run's note says so. A run whose exit code was not
0 (hyperfine -i) is kept as a failed trial, not silently dropped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config, Metric, Run, RunSettings, Trial, WorkloadSpec
from shootout.base.runfacts import RunFacts
from shootout.importers.common import (
    IMPORTED_CATEGORY,
    PLACEHOLDER_RUN_ID,
    imported_trial,
    positive_number,
    read_bytes,
    unique,
)

WHAT = "hyperfine JSON file (hyperfine --export-json FILE)"
WORKLOAD = "hyperfine"
METRIC = "wall"
LABEL_MAX = 40


def _label(command: str) -> str:
    return command if len(command) <= LABEL_MAX else command[: LABEL_MAX - 1] + "\u2026"


def _results(doc: Any, path: Path) -> list[dict[str, Any]]:
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise UsageError(f"{path}: no \"results\" list at the top level", f"expected a {WHAT}")
    results = doc["results"]
    if not results:
        raise UsageError(f"{path}: \"results\" is empty", "the file holds no benchmarked command")
    for i, item in enumerate(results, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("command"), str) or not item["command"]:
            raise UsageError(f"{path}: result {i} has no \"command\" string", f"expected a {WHAT}")
        times = item.get("times")
        if not isinstance(times, list) or not times:
            raise UsageError(f"{path}: result {i} ({item['command']}) has no \"times\" list",
                             "export with hyperfine 1.6 or newer, which records every run")
        codes = item.get("exit_codes")
        if codes is not None and (not isinstance(codes, list) or len(codes) != len(times)
                                  or not all(isinstance(c, int) or c is None for c in codes)):
            raise UsageError(f"{path}: result {i} ({item['command']}): \"exit_codes\" does not match \"times\"")
    return results


def import_hyperfine(path: Path) -> tuple[Run, list[Trial]]:
    """Run (id 0, status complete) and its trials from a hyperfine JSON export; nothing is written."""
    path = Path(path)
    data = read_bytes(path, WHAT)
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        detail = f"{exc.msg} at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else "not UTF-8 text"
        raise UsageError(f"{path}: not valid JSON ({detail})", f"expected a {WHAT}") from None
    results = _results(doc, path)
    created = os.path.getmtime(path)  # hyperfine records no date

    configs: list[Config] = []
    facts: dict[str, dict[str, Any]] = {}
    series: list[tuple[str, list[float], list[int | None]]] = []
    taken: set[str] = set()
    for i, item in enumerate(results, start=1):
        name = unique(item["command"], taken)
        where = f"{path}: result {i} ({item['command']}), time"
        times = [positive_number(t, f"{where} {j + 1}") for j, t in enumerate(item["times"])]
        codes = item.get("exit_codes") or [0] * len(times)
        configs.append(Config(name=name, target="imported", label=_label(name)))
        facts[name] = {k: v for k, v in {
            "command": item["command"],
            "parameters": item.get("parameters") or None,
            "mean_user_s": item.get("user"),
            "mean_system_s": item.get("system"),
        }.items() if v is not None}
        series.append((name, times, codes))

    trials: list[Trial] = []
    for r in range(max(len(times) for _, times, _ in series)):
        position = 0
        for name, times, codes in series:
            if r >= len(times):
                continue
            code = codes[r]
            # null: hyperfine saw the command killed by a signal.
            error = None if code == 0 else (
                "command killed by a signal" if code is None else f"command exited with status {code}")
            trials.append(imported_trial(
                WORKLOAD, name, r + 1, position, {} if error else {METRIC: times[r]}, created,
                wall_s=times[r], exit_status=-1 if code is None else int(code), error=error,
            ))
            position += 1

    spec = WorkloadSpec(
        name=WORKLOAD, category=IMPORTED_CATEGORY,
        description=f"hyperfine benchmark of {len(configs)} commands",
        metrics=(Metric(METRIC, "s", "wall-clock time of one run"),), headline=METRIC,
    )
    run = Run(
        id=PLACEHOLDER_RUN_ID, created_at=created, status="complete", settings=RunSettings(interleaved=False),
        configs=configs, workloads=[spec], params={WORKLOAD: {"commands": [c.name for c in configs]}},
        facts=RunFacts(machine={"source": "hyperfine", "file": str(path)}, sides=facts),
        note=(f"imported from hyperfine JSON {path.name}: each command's runs ran one after another, "
              "so rounds are run indexes, not interleaved rounds"),
    )
    return run, trials
