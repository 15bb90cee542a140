"""An emulated slow device: `scratch = { fs = ..., throttle = "30MB/s" }` limits the scratch's
loop device to that many bytes per second, read and write (a Pi's USB 2 link, here).

How, and why this way: the limit is a cgroup v1 blkio.throttle rule on the *root* of the blkio
hierarchy for the scratch's own loop device. A rule in a child cgroup limits only I/O its
processes submit themselves (direct I/O, fsync), not background writeback by the flusher
threads or btrfs's compression workers, which run in the root group; a rule at the root
limits every byte that reaches the device, whoever submits it. Measured on this machine
(kernel 6.18, hybrid cgroups): 100 MiB through a 30 MB/s rule took 3.4 s with conv=fsync,
3.2 s with oflag=direct, and `sync` after a buffered write took 3.4 s. The device is one
shootout made for this run, so a device-wide rule limits nothing else. cgroup2's io.max
cannot be set at its root (it needs a child group and a wrapper); machines with cgroup2
alone are told so (not implemented yet).

The rule is journalled (undone at the end of the run, by `shootout doctor` after a kill) and
belongs to the scratch area, so it is lifted before the loop device is let go.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.errors import UsageError
from shootout.model import Config
from shootout.parts.base import Part, PartSession
from shootout.system import cgroups
from shootout.system.journal import Journal
from shootout.system.scratch import ScratchArea, opened_scratch
from shootout.units import byte_size

RULES = ("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device")
_HINT = 'scratch = { fs = "ext4", size = "2G", throttle = "30MB/s" }'


def blkio_root() -> Path | None:
    """The root of the cgroup v1 hierarchy holding blkio, or None."""
    found = cgroups.layout().holding("io")
    return found.mount if found is not None and found.version == 1 else None


def parse_rate(text: Any, where: str) -> int:
    """'30MB/s' -> 30000000 bytes per second."""
    if not isinstance(text, str) or not text.endswith("/s"):
        raise UsageError(f"{where}: throttle {text!r} is not a rate", 'e.g. throttle = "30MB/s"')
    rate = byte_size(text.removesuffix("/s"), where)
    if rate < 4096:
        raise UsageError(f"{where}: throttle {text!r} is below 4 KiB/s", "give a rate a device could have")
    return rate


def device_number(area: ScratchArea) -> str:
    """'7:3', the scratch's loop device."""
    device = (area.facts.get("loop") or {}).get("device")
    if not device:
        raise UsageError(f"the scratch at {area.host_path} is not on a loop device", _HINT)
    rdev = os.stat(device).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def read_rules(root: Path, device: str) -> dict[str, int]:
    """The rules in force for one device: {"read_bps": N, "write_bps": N} (absent: unlimited)."""
    out = {}
    for name in RULES:
        for line in (root / name).read_text().splitlines():
            if (m := re.fullmatch(r"(\d+:\d+)\s+(\d+)", line.strip())) and m.group(1) == device:
                out[name.split(".")[-1].removesuffix("_device")] = int(m.group(2))
    return out


class ThrottlePart(Part):
    name = "throttle"
    keys = ("scratch.throttle",)

    def parse(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        scratch = table["scratch"]
        where = f"{where}: scratch"
        if "fs" not in scratch:
            raise UsageError(f"{where}: throttle needs a filesystem in a file (a loop device of this run's own)",
                             _HINT)
        return {"bps": parse_rate(scratch["throttle"], where)}

    def problem(self, spec: dict[str, Any]) -> str | None:
        if os.geteuid() != 0:
            return "a scratch throttle needs root"
        if blkio_root() is None:
            return ("a scratch throttle needs the cgroup v1 blkio controller (this machine has none; "
                    "cgroup2 io.max is not supported yet)")
        return None

    def open(self, configs: Sequence[Config], journal: Journal) -> PartSession | None:
        throttled = [c for c in configs if self.name in c.parts]
        return _Session(journal, list(configs)) if throttled else None


class _Session(PartSession):
    def __init__(self, journal: Journal, configs: list[Config]) -> None:
        self.journal = journal
        self.by_name = {c.name: c for c in configs}
        self.root = blkio_root()
        self.entries: dict[int, int] = {}  # id(area) -> journal entry of its rule

    def _throttled_area(self, config: Config) -> tuple[ScratchArea, int] | None:
        from shootout.configs import aa_original  # configs imports the parts

        original = self.by_name.get(aa_original(config.name), config)
        spec = original.parts.get(ThrottlePart.name)
        area = opened_scratch(self.journal, original)
        return (area, int(spec["bps"])) if spec and area is not None else None

    def apply(self, config: Config) -> None:
        """Put the rule on the scratch's device once it exists (a workload made it in prepare)."""
        found = self._throttled_area(config)
        if found is None or self.root is None or id(found[0]) in self.entries:
            return
        area, bps = found
        device = device_number(area)
        files = [str(self.root / name) for name in RULES]
        lift = {"argv": ["sh", "-c", 'd=$1; shift; for f; do echo "$d 0" > "$f"; done',
                         "shootout-throttle-lift", device, *files], "tolerate_failure": True}

        def limit() -> None:
            for name in files:
                Path(name).write_text(f"{device} {bps}")

        entry = self.journal.change(f"throttle the scratch device {device} to {bps} bytes/s", lift, limit)
        area.entries.append(entry)  # lifted by the area's close, before its loop device goes
        self.entries[id(area)] = entry

    def in_force(self, config: Config) -> dict[str, Any]:
        found = self._throttled_area(config)
        if found is None or self.root is None:
            return {}
        return read_rules(self.root, device_number(found[0]))

    def facts(self, config: Config) -> dict[str, Any]:
        if (found := self._throttled_area(config)) is None:
            return {}
        return {"device": device_number(found[0]), "bytes_per_s": found[1],
                "mechanism": f"cgroup v1 {RULES[0]} and {RULES[1]} at {self.root} (device-wide: "
                             "direct I/O, fsync and background writeback alike)"}

    def close(self) -> list[str]:
        errors: list[str] = []
        for entry in self.entries.values():
            errors += self.journal.undo_entry(entry)
        self.entries.clear()
        return errors
