"""What a run found out, kept apart from what the runner decided: the machine's facts and each
side's, and the runner's own records (a workload it lost, the budget it refused). No I/O.

The machine's facts are the probe's output (conditions.machinefacts, the preflight, the
monitor's samples): a mapping, its keys not typed one by one. A side's facts are what its
target and workloads said (`target`, `workloads`, its parts', e.g. `scratch`), by
configuration name. Read them through the accessors, which give an empty mapping or None for
a fact a run lacks (older runs, other machines), never a KeyError.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_EMPTY: Mapping[str, Any] = {}


def dig(facts: Mapping[str, Any], *path: str, default: Any = None) -> Any:
    """The value at path in nested mappings, or default where a step is missing or not a mapping."""
    found: Any = facts
    for key in path:
        if not isinstance(found, Mapping) or key not in found:
            return default
        found = found[key]
    return default if found is None else found


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY


@dataclass
class RunFacts:
    """The facts of one run: this machine's, and each configuration's by name."""

    machine: dict[str, Any] = field(default_factory=dict)
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)  # configuration name -> its facts

    # -- reading -----------------------------------------------------------------------
    def side(self, name: str) -> Mapping[str, Any]:
        """A configuration's facts (empty when the run has none for it)."""
        return self.sides.get(name, _EMPTY)

    def machine_value(self, *path: str, default: Any = None) -> Any:
        """A fact of this machine, e.g. machine_value("virtualization", "type")."""
        return dig(self.machine, *path, default=default)

    def side_value(self, name: str, *path: str, default: Any = None) -> Any:
        """A fact of one configuration, e.g. side_value("B", "target", "remote")."""
        return dig(self.side(name), *path, default=default)

    def target(self, name: str) -> Mapping[str, Any]:
        """What a configuration's target said of itself (its facts() at preparation)."""
        return _mapping(self.side(name).get("target"))

    def workload(self, name: str, workload: str) -> Mapping[str, Any]:
        """What a workload's prepare() recorded on a configuration, with its versions."""
        return _mapping(_mapping(self.side(name).get("workloads")).get(workload))

    def emulated(self, name: str) -> bool:
        """Whether the configuration ran under an emulator (qemu-user, TCG)."""
        return bool(self.target(name).get("emulated"))

    @property
    def machine_id(self) -> str | None:
        return self.machine.get("machine_id")

    @property
    def cpu_flags(self) -> list[str]:
        return list(self.machine.get("cpu_flags") or [])

    # -- writing (the runner) ------------------------------------------------------------
    def side_for(self, name: str) -> dict[str, Any]:
        """A configuration's facts to add to (made empty on first use)."""
        return self.sides.setdefault(name, {})


@dataclass(frozen=True)
class LostWorkload:
    """A workload the runner stopped measuring: on which configuration it failed, and why."""

    config: str | None  # None: it failed before any configuration (e.g. its calibration)
    reason: str
    left_out: bool = False  # not failed: the budget paid for the other workloads' first verdict only


@dataclass(frozen=True)
class BudgetRefusal:
    """A run refused after its warm-up: its budget could not pay for the rounds a first verdict needs."""

    budget_s: float
    rounds: int
    wanted_min: int  # the budget in minutes that would have paid for them
