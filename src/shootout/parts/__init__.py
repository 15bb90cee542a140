"""Configuration parts: what a configuration sets on the machine besides its target.

Each part is one module with one class (see part.py for the interface) and one line in
PARTS below; the order of PARTS is the order in which parts are applied before a trial
(a throttle on the scratch comes after the scratch). configs/specs.py parses them from [[config]]
tables, request.py drops configurations whose parts cannot be used here, and the runner
applies them in one place (RunParts.before_trial) and stores what it read back with each trial.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shootout.base.model import Config
from shootout.execution.placefacts import TargetFacts
from shootout.parts.memory import MemoryPart
from shootout.parts.network import NetworkPart
from shootout.parts.part import Part, PartSession
from shootout.parts.scratch import ScratchPart
from shootout.parts.settings import SettingsPart
from shootout.parts.swap import SwapPart
from shootout.parts.throttle import ThrottlePart
from shootout.places import kind_of
from shootout.storage.scratch import Scratches
from shootout.system.journal import Journal

PARTS: dict[str, Part] = {p.name: p for p in (
    SettingsPart(),
    ScratchPart(),
    ThrottlePart(),
    SwapPart(),
    MemoryPart(),  # after swap: the limit allows the swap that is in force
    NetworkPart(),
)}


def config_keys() -> set[str]:
    """The [[config]] keys the parts read (a part may claim a sub-key, "scratch.throttle")."""
    return {key.split(".", 1)[0] for part in PARTS.values() for key in part.keys}


def _present(table: Mapping[str, Any], key: str) -> bool:
    top, _, sub = key.partition(".")
    return top in table and (not sub or (isinstance(table[top], dict) and sub in table[top]))


def _view(table: Mapping[str, Any], part: Part) -> dict[str, Any]:
    """The table without the sub-keys other parts claim, so each part checks only its own."""
    out = dict(table)
    for other in PARTS.values():
        for key in other.keys:
            top, _, sub = key.partition(".")
            if other is not part and sub and isinstance(out.get(top), dict):
                out[top] = {k: v for k, v in out[top].items() if k != sub}
    return out


def parse_parts(table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Config.parts from a [[config]] table; UsageError for bad input."""
    return {part.name: part.parse(_view(table, part), where)
            for part in PARTS.values() if any(_present(table, key) for key in part.keys)}


def parts_problem(config: Config) -> str | None:
    """Why a part of this configuration cannot be used here, in one line, or None."""
    for name, spec in config.parts.items():
        part = PARTS.get(name)
        if part is None:
            return f"it sets {name}, which this shootout does not know"
        if part.local_only and kind_of(config).elsewhere:
            return (f"it sets {name}, which shootout changes on this machine only, not on the "
                    f"{config.target} target's machine; set it there by hand or use a local target")
        if (problem := part.problem(spec)) is not None:
            return problem
    return None


def sized(config: Config, facts: TargetFacts) -> TargetFacts:
    """The target's resources as this configuration's trials get them (e.g. under a memory limit)."""
    for name, spec in config.parts.items():
        if (part := PARTS.get(name)) is not None:
            facts = part.sizing(spec, facts)
    return facts


class RunParts:
    """The sessions of every part for one run. scratches: the run's owners of the scratch
    areas, which it hands its targets too; without them (parts used without targets) the
    parts get owners of their own, closed with them."""

    def __init__(self, configs: Sequence[Config], journal: Journal, scratches: Scratches | None = None) -> None:
        self.sessions: dict[str, PartSession] = {}
        self._own_scratches = Scratches(configs, journal) if scratches is None else None
        try:
            for part in PARTS.values():
                if (session := part.open(configs, journal, scratches if scratches is not None else self._own_scratches)) is not None:
                    self.sessions[part.name] = session
        except BaseException:
            self.close()
            raise

    def new_round(self, round_index: int) -> None:
        for session in self.sessions.values():
            session.new_round(round_index)

    def before_trial(self, config: Config) -> dict[str, Any]:
        """Put the configuration's state in force, then read back what is in force."""
        for session in self.sessions.values():
            session.apply(config)
        return {name: state for name, s in self.sessions.items() if (state := s.in_force(config))}

    def wrap(self, config: Config) -> list[str]:
        """The parts' command prefixes for this trial, in apply order (each execs the next)."""
        return [arg for session in self.sessions.values() for arg in session.wrap(config)]

    def after_trial(self, config: Config) -> dict[str, Any]:
        """What each part saw during the trial that just ended."""
        return {name: seen for name, s in self.sessions.items() if (seen := s.after_trial(config))}

    def facts(self, config: Config) -> dict[str, Any]:
        return {name: found for name, s in self.sessions.items() if (found := s.facts(config))}

    def failure_notes(self, observed: dict[str, Any]) -> list[str]:
        """What the parts saw during a failed trial that may say why (e.g. a full zram device)."""
        return [note for name, s in self.sessions.items() if (note := s.failure_note(observed.get(name) or {}))]

    def session(self, name: str) -> PartSession | None:
        """The session of one part (a workload that uses a part's state asks for it: the network
        workloads for their configuration's namespaces)."""
        return self.sessions.get(name)

    def close(self) -> list[str]:
        errors: list[str] = []
        for session in reversed(list(self.sessions.values())):
            errors += session.close()
        self.sessions.clear()
        if self._own_scratches is not None:
            errors += self._own_scratches.close()
        return errors
