"""Facts of every configuration side by side, with the ones that differ marked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shootout.judge.analysis import Analysis

# said elsewhere: drawn in the report's timeline (report/timeline.py)
_NOT_LISTED = {"monitor_samples"}


def flatten(facts: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested facts as dotted keys -> display strings (lists joined, None as '—')."""
    out: dict[str, str] = {}
    for key, value in facts.items():
        name = f"{prefix}{key}"
        if key in _NOT_LISTED:
            continue
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, (list, tuple)):
            out[name] = ", ".join(str(v) for v in value)
        elif value is None:
            out[name] = "\u2014"
        else:
            out[name] = str(value)
    return out


@dataclass(frozen=True)
class FactTable:
    columns: tuple[str, ...]  # column headings (configuration labels or machine keys)
    rows: tuple[tuple[str, tuple[str, ...], bool], ...]  # (fact, value per column, differs)

    @property
    def differing(self) -> list[str]:
        return [key for key, _, differs in self.rows if differs]


def _table(columns: list[tuple[str, Mapping[str, Any]]]) -> FactTable:
    flat = [flatten(facts) for _, facts in columns]
    keys: list[str] = []
    for f in flat:
        keys.extend(k for k in f if k not in keys)
    rows = []
    for key in keys:
        values = tuple(f.get(key, "\u2014") for f in flat)
        # A fact present on one side only also differs: it may be the confounder.
        rows.append((key, values, len(set(values)) > 1))
    return FactTable(tuple(label for label, _ in columns), tuple(rows))


def _facts(analysis: Analysis) -> dict[str, Mapping[str, Any]]:
    """The table's columns: "machine" (one per run when several) and each configuration's facts."""
    if analysis.facts.machine or analysis.facts.sides:
        return {"machine": analysis.facts.machine, **analysis.facts.sides}
    merged: dict[str, Mapping[str, Any]] = {}
    for run in analysis.runs:
        merged.setdefault("machine" if len(analysis.runs) == 1 else f"machine (run {run.id})", run.facts.machine)
        for key, value in run.facts.sides.items():
            merged.setdefault(key, value)
    return merged


def config_facts(analysis: Analysis) -> FactTable:
    facts = _facts(analysis)
    return _table([(c.display, facts.get(c.name, {})) for c in analysis.configs])


def machine_facts(analysis: Analysis) -> FactTable:
    """Facts not tied to one configuration: the machine (one column per run when several)."""
    facts = _facts(analysis)
    names = {c.name for c in analysis.configs}
    return _table([(key, value) for key, value in facts.items() if key not in names and isinstance(value, Mapping)])
