"""The memory limit of a run's workloads: one cgroup per run, one child per trial.

open() creates the run's cgroup (memory controller, plus the cgroup2 hierarchy for per-cgroup
pressure). Each trial gets a fresh child with its configuration's limits, so its counters
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shootout.base.errors import TargetError
from shootout.execution.fsread import read_key_values, read_text
from shootout.swap import observe
from shootout.system import cgroups
from shootout.system.journal import Journal

ROOT = Path("/")


def swap_allowed(swap: Mapping[str, Any] | None) -> int | None:
    """Bytes of swap the workload may use under a swap spec (SwapSpec.as_dict): 0, the
    setup's size, or None (unlimited: no swap setup, the machine's own swap)."""
    if swap is None:
        return None
    return 0 if swap["kind"] == "none" else int(swap["size"])


def problem(limit: int, allowed: int | None, where: cgroups.Layout | None = None) -> str | None:
    """Why this memory limit cannot be applied here, in one line; None if it can."""
    if os.geteuid() != 0:
        return "a memory limit needs root (it creates cgroups)"
    where = where or cgroups.layout()
    h = where.holding("memory")
    if h is None:
        return "no cgroup hierarchy here offers the memory controller (see /proc/cgroups)"
    memsw = h.mount / "memory.memsw.limit_in_bytes"
    if h.version == 1 and allowed is not None and not memsw.exists():
        return f"this kernel cannot limit a cgroup's swap ({memsw} is missing; boot with swapaccount=1)"
    return None


def limit_files(version: int, limit: int | None, allowed: int | None) -> dict[str, str]:
    """File -> value for a trial cgroup, in the order they must be written."""
    if version == 2:
        return {"memory.max": "max" if limit is None else str(limit),
                "memory.swap.max": "max" if allowed is None else str(allowed)}
    if limit is None:
        return {"memory.memsw.limit_in_bytes": "-1"} if allowed is None else {}
    return {"memory.limit_in_bytes": str(limit),  # first: memsw may never be below it
            "memory.memsw.limit_in_bytes": "-1" if allowed is None else str(limit + allowed)}


def _psi(text: str | None) -> dict[str, int]:
    """'some avg10=.. total=123' lines -> {'some': 123, 'full': ..} (microseconds)."""
    out = {}
    for line in (text or "").splitlines():
        kind, *fields = line.split()
        values = dict(f.split("=", 1) for f in fields if "=" in f)
        if "total" in values:
            out[kind] = int(values["total"])
    return out


class TrialGroups:
    """The run's cgroup and, during a trial, the trial's child in it with its limits and sampler."""

    def __init__(self, journal: Journal, where: cgroups.Layout | None = None) -> None:
        self.journal = journal
        self.where = where or cgroups.layout()
        h = self.where.holding("memory")
        if h is None:
            raise TargetError("no cgroup hierarchy here offers the memory controller", "see /proc/cgroups")
        self.version = h.version
        self.group: cgroups.Cgroup | None = cgroups.create(journal, self.where, cgroups.unique_name("shootout"),
                                                           ["memory"])
        self.facts = {"cgroups": self.where.describe(), "memory_controller": f"v{h.version}",
                      "psi": "cgroup" if "" in self.group.dirs else "system",
                      "cgroup": sorted(str(d) for d in set(self.group.dirs.values()))}
        self._trials = itertools.count(1)
        self.child: cgroups.Cgroup | None = None
        self.limits: dict[str, str] = {}
        self._sampler: observe.Sampler | None = None

    def begin(self, limit: int | None, allowed: int | None) -> None:
        """A fresh child cgroup with these limits, sampled from now until end()."""
        self.end()  # a trial that failed before it ran leaves its child behind
        assert self.group is not None, "closed"
        child = cgroups.create(self.journal, self.where, f"trial-{next(self._trials)}", ["memory"], parent=self.group)
        self.child = child
        files = limit_files(self.version, limit, allowed)
        for name, value in files.items():
            child.write("memory", name, value)
        self.limits = {k: child.read("memory", k).strip() for k in files}
        self._sampler = observe.Sampler(lambda: self._read(child)).start()

    def wrap(self) -> list[str]:
        return self.child.enter_argv([]) if self.child is not None else []

    def end(self) -> dict[str, float]:
        """The trial's figures; the child removed (what is left in it killed)."""
        if self.child is None:
            return {}
        figures = _figures(self._sampler.stop()) if self._sampler is not None else {}
        child, self.child, self._sampler = self.child, None, None
        if errors := cgroups.remove(self.journal, child):
            raise TargetError(f"cannot remove the trial's cgroup: {errors[0]}", "see `shootout doctor`")
        return figures

    def close(self) -> list[str]:
        errors: list[str] = []
        try:
            self.end()
        except TargetError as exc:
            errors.append(str(exc))
        if self.group is not None:
            errors += cgroups.remove(self.journal, self.group)
            self.group = None
        return errors

    def _read(self, child: cgroups.Cgroup) -> observe.Reading:
        mem = child.path("memory")
        reading: observe.Reading = {}
        psi_file = child.path("") / "memory.pressure" if child.has("") else Path("/proc/pressure/memory")
        for kind, total in _psi(read_text(ROOT, psi_file)).items():
            reading[f"psi_{kind}_us"] = total
        if self.version == 2:
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
