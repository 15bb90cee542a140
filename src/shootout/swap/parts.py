"""The swap setup (`swap = {...}`) and memory limit (`memory = "1G"`) as configuration parts.

Written against the smallest interface a configuration part needs from the mechanism of
issue 10 (which parses [[config]] tables, checks, opens and applies parts); adapting to it
should mean renaming, not redesigning:

  part.key                                   the TOML key of a [[config]] table
  part.parse(value, config) -> spec          pure; UsageError in one line
  part.problem(spec, specs) -> str | None    usable here? one line; nothing is changed to find out
                                             (`specs`: every part's spec of the same configuration)
  part.open(journal, specs) -> PartRun       once per run, with every configuration's specs:
                                             {config: {key: spec or None}}, so a part can switch
                                             between configurations (swap must turn the others off)
  run.apply(config) -> dict                  before each trial: put in force what differs, return
                                             what is in force as read back (recorded with the trial)
  run.trial(config) -> ContextManager[Hook]  around each trial: hook.wrap(argv) runs the trial's
                                             command inside the part (the cgroup); afterwards
                                             hook.recorded holds the part's figures for the trial
                                             and hook.state what was in force (read back)
  run.facts                                  recorded once with the run
  run.close() -> list[str]                   undo; errors as text
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from shootout.swap import memory as memory_limits
from shootout.swap import setup as swap_setup
from shootout.swap.spec import MemorySpec, SwapSpec, parse_memory, parse_swap
from shootout.system.journal import Journal

Specs = Mapping[str, Mapping[str, Any]]  # config -> part key -> spec (None where not set)


@dataclass
class Hook:
    """One part's share of one trial."""

    recorded: dict[str, float] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    scope: memory_limits.TrialScope | None = None

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return self.scope.wrap(argv) if self.scope else list(argv)


class PartRun(Protocol):
    facts: dict[str, Any]

    def apply(self, config: str) -> dict[str, Any]: ...

    def trial(self, config: str) -> Any: ...  # a context manager yielding a Hook

    def close(self) -> list[str]: ...


class SwapRun:
    def __init__(self, journal: Journal, specs: Specs, default_dir: Path) -> None:
        self.setups = swap_setup.SwapSetups(journal, {c: s.get("swap") for c, s in specs.items()}, default_dir)
        self.setups.open()
        self.facts = self.setups.facts

    def apply(self, config: str) -> dict[str, Any]:
        return self.setups.apply(config)

    @contextmanager
    def trial(self, config: str) -> Iterator[Hook]:
        hook = Hook()
        with self.setups.observed(config) as recorded:
            yield hook
        hook.recorded.update(recorded)

    def close(self) -> list[str]:
        return self.setups.close()


class SwapPart:
    key = "swap"

    def __init__(self, default_dir: Path = swap_setup.DEFAULT_DIR) -> None:
        self.default_dir = default_dir  # the scratch directory, once configurations have one

    def parse(self, value: Any, config: str) -> SwapSpec:
        return parse_swap(value, config)

    def problem(self, spec: SwapSpec, specs: Mapping[str, Any]) -> str | None:
        return swap_setup.problem(spec, self.default_dir)

    def open(self, journal: Journal, specs: Specs) -> SwapRun:
        return SwapRun(journal, specs, self.default_dir)


class MemoryRun:
    def __init__(self, journal: Journal, specs: Specs) -> None:
        self.limits = memory_limits.MemoryLimits(journal, {c: s.get("memory") for c, s in specs.items()},
                                                 {c: s.get("swap") for c, s in specs.items()})
        self.limits.open()
        self.facts = self.limits.facts

    def apply(self, config: str) -> dict[str, Any]:
        # The limits go into each trial's fresh cgroup (trial()): nothing to switch here.
        return {}

    @contextmanager
    def trial(self, config: str) -> Iterator[Hook]:
        with self.limits.trial(config) as scope:
            hook = Hook(scope=scope, state={"cgroup": scope.limits})
            yield hook
        hook.recorded.update(scope.recorded)

    def close(self) -> list[str]:
        return self.limits.close()


class MemoryPart:
    key = "memory"

    def parse(self, value: Any, config: str) -> MemorySpec:
        return parse_memory(value, config)

    def problem(self, spec: MemorySpec, specs: Mapping[str, Any]) -> str | None:
        return memory_limits.problem(spec, specs.get("swap"))

    def open(self, journal: Journal, specs: Specs) -> MemoryRun:
        return MemoryRun(journal, specs)


PARTS = (SwapPart(), MemoryPart())
