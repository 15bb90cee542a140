"""What a configuration part is: one kind of machine state that a [[config]] may set.

A part lives in one module and is registered with one line in shootout/parts/__init__.py.
Its life in a run, driven by RunParts:
  parse(table, where)     its spec from a [[config]] table: JSON-able data kept in
                          Config.parts[name]; UsageError for bad input (no I/O)
  problem(spec)           why the spec cannot be used here, in one line, or None; may try
                          a change through a journal of its own, but leaves nothing changed
  sizing(spec, facts)     the target's resources as a trial under this part gets them (a
                          memory limit), which workloads size their default parameters by
  observes                the amounts after_trial reports (name, unit, description)
  open(configs, journal, scratches)  a session for one run over every configuration of it
                          (a configuration that does not set something runs with the machine's
                          own state), or None when the part has nothing to do in this run;
                          scratches: the run's owners of the scratch areas, the same objects
                          the targets put the workloads' files in
  session.new_round(round)  at the start of each round (0 is the warm-up), before its first
                          trial: work between rounds, e.g. trimming the scratch
  session.apply(config)   before each trial: put the configuration's state in force where it
                          is not (switching between interleaved configurations)
  session.in_force(config)  the state in force now, read back; stored with the trial
  session.wrap(config)    a command prefix around the trial's command (e.g. entering a cgroup
                          made for it), run on the machine outside the target's userspace
  session.after_trial(config)  what the part saw during the trial (counters), stored with it
  session.facts(config)   facts of the run about this part (e.g. the scratch's device and
                          what was trimmed), recorded when the run ends
  session.close()         undo what the session did; the journal undoes it too after a kill
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from shootout.base.model import Config, Metric
from shootout.execution.placefacts import TargetFacts
from shootout.storage.scratch import Scratches
from shootout.system.journal import Journal


class PartSession(ABC):
    def new_round(self, round_index: int) -> None:
        pass

    @abstractmethod
    def apply(self, config: Config) -> None: ...

    def in_force(self, config: Config) -> dict[str, Any]:
        return {}

    def wrap(self, config: Config) -> list[str]:
        return []

    def after_trial(self, config: Config) -> dict[str, Any]:
        return {}

    def facts(self, config: Config) -> dict[str, Any]:
        return {}

    def failure_note(self, seen: dict[str, Any]) -> str | None:
        """What this part saw during a trial that failed (after_trial's figures) that may say why."""
        return None

    @abstractmethod
    def close(self) -> list[str]:
        """Undo; returns what could not be undone."""


class Part(ABC):
    name: ClassVar[str]  # key in Config.parts and Trial.in_force
    keys: ClassVar[tuple[str, ...]]  # the [[config]] keys it reads
    observes: ClassVar[tuple[Metric, ...]] = ()  # what its sessions' after_trial may report
    # It changes this machine (a sysctl, a device, a cgroup here): refused for configurations
    # whose target is another machine (ssh, vm), where it would change the wrong one.
    local_only: ClassVar[bool] = True

    @abstractmethod
    def parse(self, table: Mapping[str, Any], where: str) -> Any:
        """The spec from a table that has at least one of `keys`."""

    def problem(self, spec: Any) -> str | None:
        return None

    def sizing(self, spec: Any, facts: TargetFacts) -> TargetFacts:
        return facts

    @abstractmethod
    def open(self, configs: Sequence[Config], journal: Journal, scratches: Scratches) -> PartSession | None: ...
