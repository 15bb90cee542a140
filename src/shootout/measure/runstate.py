"""What a run holds while it executes: the request it was started with, and its live state."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from shootout.base.errors import ShootoutError
from shootout.base.model import Config, Run, RunSettings, Trial
from shootout.conditions.repeats import Repeats
from shootout.counters.energy import EnergySource
from shootout.measure.smallparent import SmallParent
from shootout.parts import RunParts
from shootout.places.target import Target
from shootout.storage.scratch import Scratches
from shootout.workloads.contract import Context, Prepared, Workload


@dataclass
class RunRequest:
    configs: list[Config]
    workloads: list[Workload]
    settings: RunSettings
    user_workloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # overrides of default params
    lost: dict[str, str] = field(default_factory=dict)  # configurations asked for that cannot run here: why
    prepared: list[str] = field(default_factory=list)  # what the preparation step did (preparation.py), said once


@dataclass
class Live:
    run: Run
    workloads: dict[str, Workload]
    targets: dict[str, Target]
    prepared: dict[tuple[str, str], Prepared]
    done: set[tuple[int, str, str]]
    trials: list[Trial]
    failed: set[str] = field(default_factory=set)
    errors: dict[str, ShootoutError] = field(default_factory=dict)  # why each failed workload failed
    fresh: bool = False  # started by this session (not resumed): dropped if it fails before measuring
    contexts: dict[tuple[str, str], Context] = field(default_factory=dict)  # (workload, config)
    parts: RunParts | None = None  # settings, scratch, ...: applied before every trial
    scratches: Scratches | None = None  # the scratch areas' owners, handed to targets and parts
    session_start: float = field(default_factory=time.monotonic)
    elapsed_before: float = 0.0
    trial_seconds: list[float] = field(default_factory=list)
    # workload -> the round it is projected to be decided by at the noise so far (measure/projected.py),
    # None past the last look; updated as each round starts, for the ETA
    projected: dict[str, int | None] = field(default_factory=dict)
    repeats: dict[str, Repeats] = field(default_factory=dict)  # each machine's count of interrupted attempts
    energy: EnergySource | None = None  # where this machine reports the energy its trials use
    small_parent: SmallParent | None = None  # what this machine's trials are forked from (smallparent.py)
    # with reserved CPUs (system/cpureserve.py): workload -> the prefix that starts its trials on
    # their CPUs, and the CPUs whose ticks judge an interrupted trial (absent: every CPU)
    pins: dict[str, list[str]] = field(default_factory=dict)
    judged: dict[str, frozenset[int]] = field(default_factory=dict)
    # machines measured in parallel (lanes.py): one lane records at a time; after a lane's
    # failure or an interrupt nothing more is recorded
    lock: threading.RLock = field(default_factory=threading.RLock)
    abort: threading.Event = field(default_factory=threading.Event)

    def repeats_on(self, machine: str) -> Repeats:
        """The count of interrupted attempts on one machine (lanes.machine_key)."""
        return self.repeats.setdefault(machine, Repeats(self.run.settings.repeats))

    def elapsed(self) -> float:
        return self.elapsed_before + time.monotonic() - self.session_start
