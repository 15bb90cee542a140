"""The swap setups of one run: made once, switched before each trial, read back, undone.

open() makes every configuration's swap area once (a swap file formatted with mkswap, or a
zram device) without turning it on. Before each trial, apply(config) switches cheaply to that
configuration's setup: swapoff the run's other areas, set zswap on (with its parameters) or
off, swapon this configuration's area — each step only when not already in force — then
reads back /proc/swaps, zswap's parameters and the zram device and fails if they are not what
the configuration asked for. A configuration without a swap setup gets the machine's own
state back (zswap as it was, none of the run's areas on). close() undoes everything.

Swap files go into the directory the spec names (`on`, resolved when parsed: see spec.py).
They must be on a filesystem of the machine's own mount namespace (see swap/swapfile.py).
Between begin_trial and end_trial a sampler reads zswap's and zram's figures for the trial.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shootout.base.errors import TargetError
from shootout.swap import observe, swapfile, swaps, zram, zswap
from shootout.swap.spec import SwapSpec
from shootout.system import cgroups
from shootout.system.journal import Journal


@dataclass
class _Area:
    """One configuration's swap area: its path in /proc/swaps and the entries that undo it."""

    path: str
    entries: list[int]
    device: zram.ZramDevice | None = None
    active_entry: int | None = None  # the swapon entry while on


def problem(spec: SwapSpec) -> str | None:
    """Why this swap setup cannot be used here, in one line (nothing is changed to find out)."""
    if spec.kind == "none":
        return None
    if os.geteuid() != 0:
        return f"swap kind {spec.kind} needs root (swapon, sysfs)"
    if (missing := swaps.missing_tool()) is not None:
        return missing
    if spec.kind == "zswap" and (reason := zswap.check(spec.zswap_settings())):
        return reason
    if spec.backing == "zram":
        if not zram.present():
            return zram.absent_reason()
        offered = zram.any_algorithms()
        if spec.kind == "zram" and spec.compressor and offered is not None and spec.compressor not in offered:
            return f"zram: this kernel has no algorithm {spec.compressor!r} (it has: {', '.join(offered)})"
    if spec.backing == "file":
        return swapfile.problem(swapfile.storage(Path(str(spec.on))), spec.size)
    return None


def zram_mem_limit(spec: SwapSpec, limit: int | None, ram: int) -> tuple[int, str] | None:
    """A zram device's mem_limit for max_pool_percent, and what it is a share of: the
    configuration's memory limit (the machine it emulates) where it has one, else this RAM."""
    if spec.kind != "zram" or not spec.max_pool_percent:
        return None
    base, of = (limit, "the configuration's memory limit") if limit else (ram, "this machine's RAM")
    return base * spec.max_pool_percent // 100, f"{spec.max_pool_percent}% of {of} ({base >> 20} MiB)"


def zswap_scaling(where: cgroups.Layout) -> str:
    """Why zswap's pool does not follow a configuration's memory limit here, in one line."""
    found = [h.version for h in where.hierarchies if "memory" in h.controllers]
    if 2 in found and 1 not in found:
        return ("max_pool_percent is a share of this machine's RAM, not of the limit; the memory controller is "
                "on cgroup2, which charges the pool to the limit (memory.zswap.max could cap it there)")
    return ("max_pool_percent is a share of this machine's RAM, not of the limit, and the memory controller is on "
            "cgroup v1: no memory.zswap.max, and the pool is not charged to the limit, so it cannot be scaled "
            "to the machine a configuration emulates")


class SwapSetups:
    def __init__(self, journal: Journal, specs: Mapping[str, SwapSpec | None],
                 limits: Mapping[str, int | None] | None = None) -> None:
        self.journal = journal
        self.specs = dict(specs)
        self.limits = dict(limits or {})  # configuration -> its memory limit in bytes (parts/memory.py)
        self.areas: dict[str, _Area] = {}
        self.zswap: zswap.Zswap | None = None
        self.facts: dict[str, Any] = {}
        self.lock = swaps.MachineLock(journal)
        self._debugfs: int | None = None  # the journal entry of a debugfs mount made for zswap's counters
        self._sampler: observe.Sampler | None = None
        self._sampled: str | None = None  # the configuration whose trial is being sampled

    # -- once per run ----------------------------------------------------------------------
    def open(self) -> None:
        self.lock.acquire()
        if left := swaps.left_on():  # a killed run's area that its undo could not turn off
            self.lock.release()
            raise TargetError(f"a swap area shootout made is still on ({', '.join(a.path for a in left)}, priority "
                              f"{swaps.PRIORITY}); swap configurations would be measured with it",
                              "run `shootout doctor` to turn it off, then run again")
        self.facts = {"machine_swap": [a.as_fact() for a in swaps.areas()], "zswap_before": zswap.parameters(),
                      "setups": {c: s.describe(self.limits.get(c)) if s else "the machine's own"
                                 for c, s in self.specs.items()}}
        try:
            if zswap.present():
                self.zswap = zswap.Zswap(self.journal)
            for config, spec in self.specs.items():
                if spec is not None and spec.backing != "none":
                    self.areas[config] = self._make(spec, config)
            if any(s and s.kind == "zswap" for s in self.specs.values()):
                self.facts["zswap_pool_scaling"] = zswap_scaling(cgroups.layout())
                if zswap.present():
                    self._debugfs = zswap.mount_debugfs(self.journal)
                    self.facts["zswap_debugfs"] = zswap.debugfs_mounted()
        except BaseException:
            self.close()
            raise

    def _make(self, spec: SwapSpec, config: str) -> _Area:
        if spec.backing == "zram":
            ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            pool = zram_mem_limit(spec, self.limits.get(config), ram)
            device = zram.add(self.journal, spec.size, spec.compressor if spec.kind == "zram" else None,
                              pool[0] if pool else None)
            if pool is not None:  # as the device holds it (whole pages), and what it is a share of
                held = zram.state(device).get("mem_limit")
                self.facts.setdefault("zram_mem_limit", {})[config] = f"{held} bytes, {pool[1]}"
            return _Area(device.dev, [device.entry], device=device)
        where = swapfile.storage(Path(str(spec.on)))
        made = swapfile.create(self.journal, where, spec.size, cgroups.unique_name("shootout-swap"))
        self.facts.setdefault("swap_files", {})[made.path] = where.as_fact()
        return _Area(made.path, [made.entry])

    def close(self) -> list[str]:
        """Undo in reverse: zswap as the machine had it, every area off and removed, debugfs."""
        self.end_trial()
        errors = self.zswap.restore() if self.zswap is not None else []
        for area in reversed(list(self.areas.values())):
            if area.active_entry is not None:
                errors += self.journal.undo_entry(area.active_entry)
            for entry in reversed(area.entries):
                errors += self.journal.undo_entry(entry)
        self.areas = {}
        if self._debugfs is not None:
            errors += self.journal.undo_entry(self._debugfs)
            self._debugfs = None
        self.lock.release()
        return errors

    # -- before each trial -----------------------------------------------------------------
    def apply(self, config: str) -> None:
        """Put this configuration's swap setup in force (only what differs), then check it is."""
        spec = self.specs.get(config)
        mine = self.areas.get(config)
        errors: list[str] = []
        for area in self.areas.values():
            if area is not mine and area.active_entry is not None:
                errors += self.journal.undo_entry(area.active_entry)
                area.active_entry = None
        if self.zswap is not None:
            if spec is None:
                errors += self.zswap.restore()
            else:
                self.zswap.set(spec.zswap_settings())
        if errors:
            raise TargetError(f"cannot switch to the swap setup of {config}: {errors[0]}", "see dmesg")
        if mine is not None and swaps.active(mine.path) is None:
            mine.active_entry = swaps.swapon(self.journal, mine.path)
        self._verify(config)

    def state(self, config: str) -> dict[str, Any]:
        """What is in force now, read back: the run's swap area that is on, the machine's own
        areas, zswap's parameters and the zram device's settings (its counters are in end_trial)."""
        areas = swaps.areas()
        ours = [a for a in areas if self._ours(a.path)]
        out: dict[str, Any] = {
            "area": ", ".join(f"{a.kind} of {a.size_kib >> 10} MiB, priority {a.priority}" for a in ours) or "none",
            "machine_swap": ", ".join(f"{a.path} ({a.size_kib >> 10} MiB)" for a in areas if a not in ours) or "none",
            "zswap": zswap.in_force() if zswap.present() else None,
        }
        area = self.areas.get(config)
        if area is not None and area.device is not None:
            zram_state = zram.state(area.device)
            out["zram"] = {k: zram_state[k] for k in ("comp_algorithm", "disksize", "mem_limit") if k in zram_state}
        return out

    def _ours(self, shown: str) -> bool:
        return any(swaps.same_area(shown, a.path) for a in self.areas.values())

    def _verify(self, config: str) -> None:
        mine = self.areas.get(config)
        active = {a.path for a in self.areas.values() if swaps.active(a.path) is not None}
        wanted = {mine.path} if mine else set()
        if active != wanted:
            raise TargetError(f"swap in force for {config} is {sorted(active) or 'none'}, not {sorted(wanted) or 'none'}",
                              "another process changed swap meanwhile; see /proc/swaps")

    # -- around each trial -----------------------------------------------------------------
    def begin_trial(self, config: str) -> None:
        """Sample zswap's and zram's figures from now until end_trial."""
        self.end_trial()
        area = self.areas.get(config)
        device = area.device if area else None
        if device is not None:
            zram.restart_peak(device)

        def read() -> observe.Reading:
            reading = {f"zswap.{k}": v for k, v in zswap.statistics().items()}
            if device is not None:
                reading.update({f"zram.{k}": v for k, v in zram.state(device).items() if isinstance(v, int)})
            return reading

        self._sampler, self._sampled = observe.Sampler(read).start(), config

    def end_trial(self) -> dict[str, float]:
        """The figures of the trial begun last: pool sizes at their peak, counters as differences."""
        if self._sampler is None or self._sampled is None:
            return {}
        samples, config = self._sampler.stop(), self._sampled
        self._sampler = self._sampled = None
        area = self.areas.get(config)
        return _figures(samples, zswap_on=(self.specs.get(config) or SwapSpec()).kind == "zswap",
                        zram_on=area is not None and area.device is not None)


def _figures(s: observe.Samples, zswap_on: bool, zram_on: bool) -> dict[str, float]:
    """The trial's zswap and zram figures: pool sizes at their peak, counters as differences."""
    out: dict[str, float | None] = {}
    if zswap_on:
        at = s.at_peak.get("zswap.pool_bytes", {})
        out.update(
            zswap_pool_mib=observe.mib(s.peak.get("zswap.pool_bytes")),
            zswap_stored_mib=observe.mib(at.get("zswap.stored_bytes")),
            zswap_ratio=observe.ratio(at.get("zswap.stored_bytes"), at.get("zswap.pool_bytes")),
            zswap_stored_pages=s.peak.get("zswap.stored_pages"),
            zswap_written_back_pages=s.delta("zswap.written_back_pages") if "zswap.written_back_pages" in s.first
            else s.delta("zswap.zswpwb"),
            zswap_reject_compress_poor=s.delta("zswap.reject_compress_poor"),
            zswap_pool_limit_hit=s.delta("zswap.pool_limit_hit"),
            zswpout=s.delta("zswap.zswpout"),
            zswpin=s.delta("zswap.zswpin"),
        )
    if zram_on:
        at = s.at_peak.get("zram.orig_data_size", {})
        out.update(
            zram_orig_mib=observe.mib(s.peak.get("zram.orig_data_size")),
            zram_compr_mib=observe.mib(at.get("zram.compr_data_size")),
            zram_mem_mib=observe.mib(s.peak.get("zram.mem_used_max")),  # restarted at begin_trial
            zram_failed_writes=s.delta("zram.failed_writes"),
            zram_ratio=observe.ratio(at.get("zram.orig_data_size"), at.get("zram.compr_data_size")),
            zram_same_pages=s.peak.get("zram.same_pages"),
            zram_huge_pages=s.peak.get("zram.huge_pages"),
        )
    return observe.present(out)
