"""An emulated slow device: `scratch = { fs = ..., throttle = "30MB/s" }` limits the scratch's
loop device to that many bytes per second, read and write (a Pi's USB 2 link, here); `iops = N`
or `iops = { read = N, write = N }` beside it also limits its requests per second (a USB 2
bridge completes one command at a time, at a fixed cost each: rpi-iozone's model of it).

How, and why this way. Where cgroup2 offers the io controller, the limit is `io.max` on the
scratch's own loop device in a cgroup made for it, and every trial on that configuration runs
in that cgroup (a wrapper moves the trial there); the group also gets the memory controller
where cgroup2 has it, because cgroup2 charges buffered writeback to the group that dirtied the
pages only when memory and io are both enabled. io.max cannot be set at a cgroup2 root.
Otherwise (a v1 blkio hierarchy: this machine, whose cgroup2 has no controllers) the limit
is a cgroup v1 blkio.throttle rule on the *root* of the blkio hierarchy for the scratch's own
loop device. A rule in a child cgroup limits only I/O its processes submit themselves
(direct I/O, fsync), not background writeback by the flusher threads or btrfs's compression
workers, which run in the root group; a rule at the root limits every byte that reaches the
device, whoever submits it. Measured on this machine
(kernel 6.18, hybrid cgroups): 100 MiB through a 30 MB/s rule took 3.4 s with conv=fsync,
3.2 s with oflag=direct, and `sync` after a buffered write took 3.4 s; with the rule in a
child group instead, `sync` (from outside it) after 100 MB written buffered inside it took
0.36 s: writeback passed unthrottled. The device is one shootout made for this run, so a
device-wide rule limits nothing else.

The rule (v1) or the cgroup holding it (v2) is journalled (undone at the end of the run, by
`shootout doctor` or the next run after a kill) and belongs to the scratch area, so it is
lifted before the loop device is let go (the session reaches the area through the run's owner
of it, storage.scratch.Scratch, the one the target opens). That device stays attached until its own journal entry
detaches it (storage.scratch: no autoclear), so a killed run's rule is on a device of that run,
never on a freed number that the next `losetup` gives to someone else; the lift names the
device by number, so it needs nothing else of the device to exist. On cgroup2 a process is in one group only, so a configuration with a
memory limit as well is refused there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.base.units import byte_size
from shootout.parts.part import Part, PartSession
from shootout.storage.scratch import ScratchArea, Scratches
from shootout.system import cgroups
from shootout.system.journal import Journal

RULES = ("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device")
IOPS_RULES = ("blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device")
_HINT = 'scratch = { fs = "ext4", size = "2G", throttle = "30MB/s" }'
_IOPS_HINT = 'iops = 2900, or iops = { read = 2970, write = 2700 } (requests per second)'
_V2_KEYS = {"rbps": "read_bps", "wbps": "write_bps", "riops": "read_iops", "wiops": "write_iops"}


def blkio_root() -> Path | None:
    """The root of the cgroup v1 hierarchy holding blkio, or None."""
    found = cgroups.layout().holding("io")
    return found.mount if found is not None and found.version == 1 else None


def io_max_line(device: str, bps: int, iops: Mapping[str, int] | None = None) -> str:
    extra = "".join(f" {d[0]}iops={n}" for d, n in (iops or {}).items())
    return f"{device} rbps={bps} wbps={bps}{extra}"


def read_io_max(group: Path, device: str) -> dict[str, int]:
    """cgroup2 io.max of one device, in read_rules' terms ("max": unlimited, absent)."""
    out = {}
    for line in (group / "io.max").read_text().splitlines():
        name, *limits = line.split()
        if name != device:
            continue
        for item in limits:
            key, _, value = item.partition("=")
            if key in _V2_KEYS and value.isdigit():
                out[_V2_KEYS[key]] = int(value)
    return out


def parse_rate(text: Any, where: str) -> int:
    """'30MB/s' -> 30000000 bytes per second."""
    if not isinstance(text, str) or not text.endswith("/s"):
        raise UsageError(f"{where}: throttle {text!r} is not a rate", 'e.g. throttle = "30MB/s"')
    rate = byte_size(text.removesuffix("/s"), where)
    if rate < 4096:
        raise UsageError(f"{where}: throttle {text!r} is below 4 KiB/s", "give a rate a device could have")
    return rate


def parse_iops(value: Any, where: str) -> dict[str, int]:
    """iops = N (both directions) or { read = N, write = N } -> {"read": N, "write": N}: a limit on
    requests per second beside the bandwidth, as a USB 2 bridge's fixed cost per request sets one."""
    given = value if isinstance(value, dict) else {"read": value, "write": value}
    if set(given) - {"read", "write"} or not given:
        raise UsageError(f"{where}: iops {value!r} names something other than read and write", _IOPS_HINT)
    for direction, n in given.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise UsageError(f"{where}: iops {direction} {n!r} is not a whole number of requests per second", _IOPS_HINT)
    return {d: int(given[d]) for d in ("read", "write") if d in given}


def device_number(area: ScratchArea) -> str:
    """'7:3', the scratch's loop device."""
    device = (area.facts.get("loop") or {}).get("device")
    if not device:
        raise UsageError(f"the scratch at {area.host_path} is not on a loop device", _HINT)
    rdev = os.stat(device).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def read_rules(root: Path, device: str) -> dict[str, int]:
    """The rules in force for one device: {"read_bps": N, "write_bps": N, "read_iops": N, ...}
    (absent: unlimited)."""
    out = {}
    for name in RULES + IOPS_RULES:
        if not (root / name).exists() and name in IOPS_RULES:
            continue
        for line in (root / name).read_text().splitlines():
            if (m := re.fullmatch(r"(\d+:\d+)\s+(\d+)", line.strip())) and m.group(1) == device:
                out[name.split(".")[-1].removesuffix("_device")] = int(m.group(2))
    return out


class ThrottlePart(Part):
    name = "throttle"
    keys = ("scratch.throttle", "scratch.iops")

    def parse(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        scratch = table["scratch"]
        where = f"{where}: scratch"
        if "fs" not in scratch:
            raise UsageError(f"{where}: throttle needs a filesystem in a file (a loop device of this run's own)",
                             _HINT)
        if "throttle" not in scratch:
            raise UsageError(f"{where}: iops needs a throttle (the link's bandwidth) beside it", _HINT)
        spec = {"bps": parse_rate(scratch["throttle"], where), "with_memory": "memory" in table}
        if "iops" in scratch:
            spec["iops"] = parse_iops(scratch["iops"], where)
        return spec

    def problem(self, spec: dict[str, Any]) -> str | None:
        if os.geteuid() != 0:
            return "a scratch throttle needs root"
        io = cgroups.layout().holding("io")
        if io is None:
            return "a scratch throttle needs the io controller (cgroup2) or blkio (cgroup v1); this machine has neither"
        if io.version == 2 and spec.get("with_memory"):
            # A process is in one cgroup2 group: the throttle's or the memory limit's, not both.
            return "a scratch throttle and a memory limit together need cgroup v1 blkio (with cgroup2 io.max, not yet)"
        return None

    def open(self, configs: Sequence[Config], journal: Journal, scratches: Scratches) -> PartSession | None:
        throttled = [c for c in configs if self.name in c.parts]
        return _Session(journal, scratches) if throttled else None


class _Session(PartSession):
    def __init__(self, journal: Journal, scratches: Scratches, where: cgroups.Layout | None = None) -> None:
        self.journal = journal
        self.scratches = scratches
        self.where = where or cgroups.layout()
        io = self.where.holding("io")
        self.v2 = io is not None and io.version == 2
        self.root = io.mount if io is not None else None
        self.entries: dict[int, int] = {}  # id(area) -> journal entry of its rule (v1) or cgroup (v2)
        self.groups: dict[int, cgroups.Cgroup] = {}  # v2: id(area) -> the cgroup its trials run in

    def _throttled_area(self, config: Config) -> tuple[ScratchArea, int] | None:
        """The configuration's area (an A/A copy's is its original's) and its limit, once made."""
        spec = config.parts.get(ThrottlePart.name)
        area = self.scratches.of(config).area
        return (area, int(spec["bps"])) if spec and area is not None else None

    def apply(self, config: Config) -> None:
        """Put the rule on the scratch's device once it exists (a workload made it in prepare)."""
        found = self._throttled_area(config)
        if found is None or self.root is None or id(found[0]) in self.entries:
            return
        area, bps = found
        device = device_number(area)
        iops = (config.parts.get(ThrottlePart.name) or {}).get("iops") or {}
        entry = self._limit_v2(device, bps, iops, id(area)) if self.v2 else self._limit_v1(device, bps, iops)
        area.entries.append(entry)  # lifted by the area's close, before its loop device goes
        self.entries[id(area)] = entry

    def _limit_v1(self, device: str, bps: int, iops: Mapping[str, int]) -> int:
        assert self.root is not None
        values = {str(self.root / name): bps for name in RULES}
        values |= {str(self.root / name): iops[d] for d, name in zip(("read", "write"), IOPS_RULES) if d in iops}
        files = list(values)
        lift = {"argv": ["sh", "-c", 'd=$1; shift; for f; do echo "$d 0" > "$f"; done',
                         "shootout-throttle-lift", device, *files], "tolerate_failure": True}

        def limit() -> None:
            for name, value in values.items():
                Path(name).write_text(f"{device} {value}")

        said = f"{bps} bytes/s" + "".join(f", {n} {d}s/s" for d, n in iops.items())
        return self.journal.change(f"throttle the scratch device {device} to {said}", lift, limit)

    def _limit_v2(self, device: str, bps: int, iops: Mapping[str, int], key: int) -> int:
        """A cgroup for the area's trials with io.max on its device; removing the group lifts the limit."""
        unified = self.where.unified
        wanted = ["io"] + (["memory"] if unified is not None and "memory" in unified.controllers else [])
        group = cgroups.create(self.journal, self.where, cgroups.unique_name("shootout-throttle"), wanted)
        group.write("io", "io.max", io_max_line(device, bps, iops))
        self.groups[key] = group
        return group.entry

    def wrap(self, config: Config) -> list[str]:
        found = self._throttled_area(config)
        group = self.groups.get(id(found[0])) if found is not None else None
        return group.enter_argv([]) if group is not None else []

    def in_force(self, config: Config) -> dict[str, Any]:
        found = self._throttled_area(config)
        if found is None or self.root is None:
            return {}
        if self.v2:
            group = self.groups.get(id(found[0]))
            return read_io_max(group.path("io"), device_number(found[0])) if group is not None else {}
        return read_rules(self.root, device_number(found[0]))

    def facts(self, config: Config) -> dict[str, Any]:
        if (found := self._throttled_area(config)) is None:
            return {}
        if self.v2:
            group = self.groups.get(id(found[0]))
            where = group.path("io") if group else "(not made yet)"
            mechanism = (f"cgroup2 io.max in {where}, which the trials run in (with the memory controller, "
                         "so their buffered writeback is charged to it)")
        else:
            mechanism = (f"cgroup v1 {RULES[0]} and {RULES[1]} at {self.root} (device-wide: "
                         "direct I/O, fsync and background writeback alike)")
        iops = (config.parts.get(ThrottlePart.name) or {}).get("iops") or {}
        return {"device": device_number(found[0]), "bytes_per_s": found[1], "mechanism": mechanism,
                **({"iops": dict(iops)} if iops else {})}

    def close(self) -> list[str]:
        errors: list[str] = []
        for entry in self.entries.values():
            errors += self.journal.undo_entry(entry)
        self.entries.clear()
        self.groups.clear()
        return errors
