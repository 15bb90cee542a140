"""Import a Phoronix Test Suite result file (composite.xml) as a run.

The format (pts-core/definitions/result-file.xsd): <PhoronixTestSuite> holds <Generated>,
one <System> per tested system and one <Result> per test; a result's <Data> holds one
<Entry> per system with <Identifier> (the system), <Value> (the average) and <RawString>
(every run's value, colon-separated). Every system becomes a configuration, every result a
workload with one metric, and every run value a trial; round r holds the r-th value of each
system. PTS runs systems one after another, so those rounds are not interleaved in time:
the run's note says so.
"""

from __future__ import annotations

import calendar
import os
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config, Metric, Run, RunSettings, Trial, WorkloadSpec
from shootout.base.runfacts import RunFacts
from shootout.base.units import UNITS, Direction
from shootout.importers.common import (
    IMPORTED_CATEGORY,
    PLACEHOLDER_RUN_ID,
    imported_trial,
    positive_number,
    read_bytes,
    unique,
)

WHAT = "Phoronix Test Suite result file (composite.xml)"
METRIC = "result"

# PTS <Scale> text (lower-cased, spaces collapsed) -> shootout unit symbol.
SCALES: dict[str, str] = {
    "seconds": "s", "second": "s", "sec": "s", "s": "s",
    "milliseconds": "ms", "ms": "ms", "msec": "ms",
    "microseconds": "us", "us": "us", "usec": "us", "\u00b5s": "us",
    "nanoseconds": "ns", "ns": "ns", "nsec": "ns",
    "mb/s": "MB/s", "mb/sec": "MB/s", "megabytes per second": "MB/s",
    "mib/s": "MiB/s", "mib/sec": "MiB/s",
    "gb/s": "GB/s", "gb/sec": "GB/s",
    "kb/s": "kB/s", "kb/sec": "kB/s",
    "mbits/sec": "Mbit/s", "mbit/s": "Mbit/s", "mbits/s": "Mbit/s", "mbps": "Mbit/s",
    "gbits/sec": "Gbit/s", "gbit/s": "Gbit/s", "gbits/s": "Gbit/s", "gbps": "Gbit/s",
    "mips": "MIPS",
    "ops/sec": "ops/s", "ops/s": "ops/s", "operations per second": "ops/s", "bogo ops/s": "ops/s",
    "iterations per second": "iter/s", "iterations/sec": "iter/s", "iter/s": "iter/s",
    "runs per second": "runs/s", "runs/s": "runs/s",
    "mhz": "MHz",
    "frames per second": "fps", "fps": "fps",
    "requests per second": "req/s", "requests/sec": "req/s", "req/s": "req/s",
    "events per second": "events/s", "events/sec": "events/s",
    "items per second": "items/s", "items/sec": "items/s",
    "score": "score", "points": "score",
    "gflops": "GFLOPS", "gflop/s": "GFLOPS",
    "watts": "W", "w": "W",
}
PROPORTIONS = {"HIB": Direction.HIGHER, "LIB": Direction.LOWER}
# Results drawn as bars hold one number per system; other formats (line graphs, pass/fail,
# image comparisons) hold no comparable value and are listed in the run's note instead.
NUMERIC_FORMATS = {"", "BAR_GRAPH", "HORIZONTAL_BAR_GRAPH", "VERTICAL_BAR_GRAPH"}
_KEYED = re.compile(r",\s+(?=[A-Z][A-Za-z0-9 /().-]*:\s)")


def _text(elem: ET.Element | None, tag: str) -> str:
    found = elem.find(tag) if elem is not None else None
    return (found.text or "").strip() if found is not None else ""


def _timestamp(text: str) -> float | None:
    """PTS writes 'YYYY-MM-DD HH:MM:SS' without a zone; read it as UTC."""
    try:
        return float(calendar.timegm(time.strptime(text, "%Y-%m-%d %H:%M:%S")))
    except ValueError:
        return None


def _keyed(text: str) -> dict[str, str]:
    """'Processor: X, Motherboard: Y' -> {'processor': 'X', 'motherboard': 'Y'}."""
    out: dict[str, str] = {}
    for part in _KEYED.split(text) if text else []:
        key, sep, value = part.partition(":")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


def scale_unit(scale: str, proportion: str, where: str) -> str:
    """The shootout unit of a PTS scale, checked against the file's HIB/LIB."""
    direction = PROPORTIONS.get(proportion.strip().upper())
    if direction is None:
        raise UsageError(f"{where}: <Proportion> is {proportion!r}, expected HIB or LIB")
    symbol = SCALES.get(" ".join(scale.lower().split()))
    if symbol is None:
        raise UsageError(
            f"{where}: unit {scale!r} has no shootout unit",
            "known PTS scales: " + ", ".join(sorted({s for s in SCALES if len(s) > 2})),
        )
    if UNITS[symbol].direction is not direction:
        raise UsageError(f"{where}: {scale!r} is {UNITS[symbol].direction} is better but the file says {proportion}")
    return symbol


def _systems(root: ET.Element, path: Path) -> tuple[list[Config], dict[str, dict[str, Any]], dict[str, float]]:
    configs, facts, stamps = [], {}, {}
    for i, system in enumerate(root.findall("System"), start=1):
        ident = _text(system, "Identifier")
        if not ident:
            raise UsageError(f"{path}: <System> number {i} has no <Identifier>")
        if ident in facts:
            raise UsageError(f"{path}: two systems are both called {ident!r}")
        configs.append(Config(name=ident, target="imported", label=ident))
        facts[ident] = {
            "hardware": _keyed(_text(system, "Hardware")),
            "software": _keyed(_text(system, "Software")),
            "user": _text(system, "User"),
            "pts_version": _text(system, "TestClientVersion"),
            "notes": _text(system, "Notes"),
        }
        stamp = _timestamp(_text(system, "TimeStamp"))
        if stamp is not None:
            stamps[ident] = stamp
    if not configs:
        raise UsageError(f"{path}: no <System> in this result file", "the file holds no tested system")
    return configs, facts, stamps


def _entry_values(entry: ET.Element, where: str) -> list[float]:
    raw = _text(entry, "RawString")
    parts = [p for p in raw.split(":") if p.strip()] if raw else [_text(entry, "Value")]
    return [positive_number(p.strip(), where) for p in parts]


def _root(path: Path) -> ET.Element:
    """The file's <PhoronixTestSuite> element."""
    data = read_bytes(path, WHAT)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise UsageError(f"{path}: not well-formed XML ({exc})", f"expected a {WHAT}") from None
    if root.tag != "PhoronixTestSuite":
        raise UsageError(f"{path}: root element is <{root.tag}>, not <PhoronixTestSuite>", f"expected a {WHAT}")
    return root


@dataclass
class _Results:
    """What the <Result> elements hold: a workload per numeric result, its values per system."""

    workloads: list[WorkloadSpec] = field(default_factory=list)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    values: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (workload, system) -> values
    skipped: list[str] = field(default_factory=list)  # results with no single number, for the note


def _result_values(result: ET.Element, name: str, systems: Collection[str], where: str,
                   values: dict[tuple[str, str], list[float]]) -> None:
    """Add each <Entry>'s values under (name, its system)."""
    entries = result.findall("Data/Entry")
    if not entries:
        raise UsageError(f"{where}: no <Entry> values")
    for entry in entries:
        system = _text(entry, "Identifier")
        if system not in systems:
            raise UsageError(f"{where}: value for unknown system {system!r}", "every <Entry> must name a <System>")
        if (name, system) in values:
            raise UsageError(f"{where}: two values for system {system!r}")
        values[(name, system)] = _entry_values(entry, f"{where}, system {system}")


def _results(root: ET.Element, path: Path, systems: Collection[str]) -> _Results:
    results = root.findall("Result")
    if not results:
        raise UsageError(f"{path}: no <Result> in this result file", "the file holds no test result")
    out = _Results()
    taken: set[str] = set()
    for i, result in enumerate(results, start=1):
        title = _text(result, "Title") or _text(result, "Identifier") or f"result {i}"
        desc = _text(result, "Description")
        label = f"{title}: {desc}" if desc else title
        where = f"{path}: result {i} ({label})"
        if _text(result, "DisplayFormat").upper() not in NUMERIC_FORMATS:
            out.skipped.append(f"{label} ({_text(result, 'DisplayFormat')})")
            continue
        unit = scale_unit(_text(result, "Scale"), _text(result, "Proportion"), where)
        name = unique(label, taken)
        _result_values(result, name, systems, where, out.values)
        out.workloads.append(WorkloadSpec(
            name=name, category=IMPORTED_CATEGORY, description=label,
            metrics=(Metric(METRIC, unit, _text(result, "Scale")),), headline=METRIC,
        ))
        out.params[name] = {k: v for k, v in {
            "pts_test": _text(result, "Identifier"), "profile_version": _text(result, "ProfileVersion"),
            "app_version": _text(result, "AppVersion"), "arguments": _text(result, "Arguments"),
        }.items() if v}
    if not out.workloads:
        raise UsageError(f"{path}: no numeric result to import", "skipped: " + "; ".join(out.skipped))
    return out


def _trials(found: _Results, configs: list[Config], stamps: dict[str, float], created: float) -> list[Trial]:
    """Round r holds each system's r-th value of each result (the systems ran one after another)."""
    trials: list[Trial] = []
    rounds = max(len(v) for v in found.values.values())
    for r in range(rounds):
        position = 0
        for spec in found.workloads:
            for cfg in configs:
                series = found.values.get((spec.name, cfg.name), [])
                if r < len(series):
                    start = stamps.get(cfg.name, created)
                    trials.append(imported_trial(spec.name, cfg.name, r + 1, position, {METRIC: series[r]}, start))
                    position += 1
    return trials


def import_phoronix(path: Path) -> tuple[Run, list[Trial]]:
    """Run (id 0, status complete) and its trials from a composite.xml; nothing is written.

    Raises UsageError with a one-line message for anything that is not a well-formed PTS
    result file or holds a value, unit or system reference that cannot be imported.
    """
    path = Path(path)
    root = _root(path)
    configs, facts, stamps = _systems(root, path)
    generated = root.find("Generated")
    created = _timestamp(_text(generated, "LastModified")) or min(stamps.values(), default=None) or os.path.getmtime(path)
    found = _results(root, path, facts)
    trials = _trials(found, configs, stamps, created)

    note = (f"imported from Phoronix Test Suite result file {path.name}: systems ran one after another, "
            "so rounds are value indexes, not interleaved rounds")
    if found.skipped:
        note += "; not imported (no single numeric value): " + "; ".join(found.skipped)
    machine = {k: v for k, v in {
        "source": "Phoronix Test Suite", "title": _text(generated, "Title"),
        "description": _text(generated, "Description"), "test_client": _text(generated, "TestClient"),
        "file": str(path),
    }.items() if v}
    run = Run(
        id=PLACEHOLDER_RUN_ID, created_at=created, status="complete", settings=RunSettings(interleaved=False),
        configs=configs, workloads=found.workloads, params=found.params, facts=RunFacts(machine=machine, sides=facts),
        note=note,
    )
    return run, trials
