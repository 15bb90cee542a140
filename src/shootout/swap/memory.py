"""The memory limit of a run's workloads: one cgroup per run, one child per trial.

open() creates the run's cgroup (memory controller, plus the cgroup2 hierarchy for per-cgroup
pressure). Each trial gets a fresh child with the configuration's limits, so its counters
(OOM kills, peak use, stall time) start from zero; the trial's command is wrapped to enter it
(see Cgroup.enter_argv), and the child is removed, stragglers killed, when the trial is over.

Limits, where the memory controller lives:
  cgroup2:  memory.max = limit, memory.swap.max = the swap the setup allows
  cgroup v1: memory.limit_in_bytes = limit, memory.memsw.limit_in_bytes = limit + that swap
"The swap the setup allows" is 0 for kind "none" (the workload may not swap even where the
machine has swap), the swap size for the other kinds, and unlimited for a configuration
that has a memory limit but no swap setup (the machine's own swap, as it is).

zswap's pool and zram's memory are kernel memory that these limits do not count on cgroup
v1 (cgroup2 charges zswap to the cgroup and has memory.zswap.max): the pool sizes are
recorded with every trial so the reader sees how much memory compression added.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.conditions.fsread import read_key_values, read_text
from shootout.errors import TargetError
from shootout.swap import observe
from shootout.swap.spec import MemorySpec, SwapSpec
from shootout.system import cgroups
from shootout.system.journal import Journal

UNLIMITED = None
ROOT = Path("/")


@dataclass
class TrialScope:
    """What a target needs to run one trial inside the limits, and what was recorded."""

    cgroup: cgroups.Cgroup
    limits: dict[str, str]
    recorded: dict[str, float] = field(default_factory=dict)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return self.cgroup.enter_argv(argv)


def swap_allowed(swap: SwapSpec | None) -> int | None:
    """Bytes of swap the workload may use: 0, the setup's size, or None (unlimited)."""
    if swap is None:
        return UNLIMITED
    return 0 if swap.kind == "none" else swap.size


def problem(memory: MemorySpec | None, swap: SwapSpec | None, where: cgroups.Layout | None = None) -> str | None:
    """Why this memory limit cannot be applied here, in one line; None if it can."""
    if memory is None:
        return None
    if os.geteuid() != 0:
        return "a memory limit needs root (it creates cgroups)"
    where = where or cgroups.layout()
    h = where.holding("memory")
    if h is None:
        return "no cgroup hierarchy here offers the memory controller (see /proc/cgroups)"
    memsw = h.mount / "memory.memsw.limit_in_bytes"
    if h.version == 1 and swap_allowed(swap) is not UNLIMITED and not memsw.exists():
        return f"this kernel cannot limit a cgroup's swap ({memsw} is missing; boot with swapaccount=1)"
    return None


def limit_files(version: int, memory: MemorySpec | None, swap: SwapSpec | None) -> dict[str, str]:
    """File -> value for a trial cgroup, in the order they must be written."""
    allowed = swap_allowed(swap)
    if version == 2:
        out = {"memory.max": str(memory.limit) if memory else "max"}
        out["memory.swap.max"] = "max" if allowed is UNLIMITED else str(allowed)
        return out
    if memory is None:
        return {"memory.memsw.limit_in_bytes": "-1"} if allowed is UNLIMITED else {}
    out = {"memory.limit_in_bytes": str(memory.limit)}  # first: memsw may never be below it
    out["memory.memsw.limit_in_bytes"] = "-1" if allowed is UNLIMITED else str(memory.limit + allowed)
    return out


def _psi(text: str | None) -> dict[str, int]:
    """'some avg10=.. total=123' lines -> {'some': 123, 'full': ..} (microseconds)."""
    out = {}
    for line in (text or "").splitlines():
        kind, *fields = line.split()
        values = dict(f.split("=", 1) for f in fields if "=" in f)
        if "total" in values:
            out[kind] = int(values["total"])
    return out


class MemoryLimits:
    def __init__(self, journal: Journal, memory: Mapping[str, MemorySpec | None],
                 swap: Mapping[str, SwapSpec | None], where: cgroups.Layout | None = None) -> None:
        self.journal = journal
        self.memory = dict(memory)
        self.swap = dict(swap)
        self.where = where or cgroups.layout()
        self.group: cgroups.Cgroup | None = None
        self._trials = itertools.count(1)
        self.facts: dict[str, Any] = {}

    def open(self) -> None:
        self.group = cgroups.create(self.journal, self.where, cgroups.unique_name("shootout"), ["memory"])
        h = self.where.holding("memory")
        assert h is not None  # problem() said so before open
        self.facts = {"cgroups": self.where.describe(), "memory_controller": f"v{h.version}",
                      "psi": "cgroup" if "" in self.group.dirs else "system"}

    def close(self) -> list[str]:
        errors = cgroups.remove(self.journal, self.group) if self.group else []
        self.group = None
        return errors

    @contextmanager
    def trial(self, config: str) -> Iterator[TrialScope]:
        """A fresh cgroup with this configuration's limits around one trial."""
        assert self.group is not None, "open() first"
        h = self.where.holding("memory")
        assert h is not None
        child = cgroups.create(self.journal, self.where, f"trial-{next(self._trials)}", ["memory"], parent=self.group)
        try:
            limits = limit_files(h.version, self.memory.get(config), self.swap.get(config))
            for name, value in limits.items():
                child.write("memory", name, value)
            scope = TrialScope(child, {k: child.read("memory", k).strip() for k in limits})
            with observe.sampled(lambda: self._read(child, h.version)) as samples:
                yield scope
            scope.recorded.update(_figures(samples))
        finally:
            errors = cgroups.remove(self.journal, child)
        if errors:
            raise TargetError(f"cannot remove the trial's cgroup: {errors[0]}", "see `shootout doctor`")

    def _read(self, child: cgroups.Cgroup, version: int) -> observe.Reading:
        mem = child.path("memory")
        reading: observe.Reading = {}
        psi_file = child.path("") / "memory.pressure" if child.has("") else Path("/proc/pressure/memory")
        for kind, total in _psi(read_text(ROOT, psi_file)).items():
            reading[f"psi_{kind}_us"] = total
        if version == 2:
            events = read_key_values(ROOT, str(mem / "memory.events"), sep=" ")
            reading["oom_kill"] = int(events.get("oom_kill", 0))
            reading["peak"] = int(read_text(ROOT, mem / "memory.peak") or read_text(ROOT, mem / "memory.current") or 0)
            reading["swap"] = int(read_text(ROOT, mem / "memory.swap.current") or 0)
        else:
            control = read_key_values(ROOT, str(mem / "memory.oom_control"), sep=" ")
            reading["oom_kill"] = int(control.get("oom_kill", 0))
            reading["peak"] = int(read_text(ROOT, mem / "memory.max_usage_in_bytes") or 0)
            reading["swap"] = int(read_key_values(ROOT, str(mem / "memory.stat"), sep=" ").get("swap", 0))
        vmstat = read_key_values(ROOT, "/proc/vmstat", sep=" ")
        for key in ("pswpin", "pswpout"):
            reading[key] = int(vmstat.get(key, 0))
        return reading


def _figures(s: observe.Samples) -> dict[str, float]:
    return observe.present({
        "psi_some_ms": None if (d := s.delta("psi_some_us")) is None else d / 1000,
        "psi_full_ms": None if (d := s.delta("psi_full_us")) is None else d / 1000,
        "oom_kills": s.delta("oom_kill"),
        "mem_peak_mib": observe.mib(s.peak.get("peak")),  # the kernel's own high-water mark
        "swap_peak_mib": observe.mib(s.peak.get("swap")),
        "pswpin": s.delta("pswpin"),
        "pswpout": s.delta("pswpout"),
    })
