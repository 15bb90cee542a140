"""Make the target a configuration names: its kind's (shootout.places) Target class."""

from __future__ import annotations

import importlib

from shootout.places import kind_of
from shootout.base.model import Config
from shootout.system.journal import Journal
from shootout.places.target import Target


def target_problem(config: Config) -> str | None:
    """Why the configuration's target cannot be used here, in one line, before anything starts."""
    return kind_of(config).problem(config)


def runs_emulated(config: Config) -> bool:
    """A configuration that --emulate puts under an emulator here (a VM without hardware KVM): no verdicts."""
    return kind_of(config).emulated_here(config)


def target_class(config: Config) -> type[Target]:
    # Named by the kind, imported here only: shootout.places stays below the targets.
    module, _, name = kind_of(config).target.partition(":")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, Target), f"{kind_of(config).target} is not a Target"
    return cls


def make_target(config: Config, journal: Journal) -> Target:
    return target_class(config)(config, journal)
