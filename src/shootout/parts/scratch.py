"""Scratch storage of a configuration: the directory disk-touching workloads write into.

    scratch = "/mnt/usbssd/shootout"                                   # a directory on the device under test
    scratch = { fs = "btrfs", mount = "compress=zstd:3", size = "4G", in = "/var/tmp" }   # a filesystem in a file

Spec (Config.parts["scratch"], read as a ScratchSpec: storage/scratchspec.py): {"dir": PATH}
or {"fs", "mount", "size" (bytes), "in"}. The area belongs to the run's owner of it
(storage.scratch.Scratch), which the target opens when a workload first needs it; this part
checks the spec before the run and, through the same owner, trims each area at the start of
every round when its device takes discards (storage/trim.py), records the area's device facts
with what was trimmed and, per trial, the filesystem and mount options in force. The run closes
the area.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.base.units import byte_size
from shootout.parts.part import Part, PartSession
from shootout.storage.blockdev import mount_of
from shootout.storage.scratch import MKFS, Scratch, Scratches, scratch_problem
from shootout.storage.scratchspec import DEFAULT_BASE, PART, ScratchSpec
from shootout.storage.trim import ScratchTrim
from shootout.system.journal import Journal

DEFAULT_SIZE = "2G"
_FILE_KEYS = {"fs", "mount", "size", "in"}
_HINT = 'scratch = "/path/on/the/disk" or scratch = { fs = "ext4", size = "4G", in = "/var/tmp" }'


def _absolute(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.startswith("/"):
        raise UsageError(f"{where}: {value!r} is not an absolute path", _HINT)
    return str(Path(value))


class ScratchPart(Part):
    name = PART
    keys = (PART,)

    def parse(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        given = table[PART]
        where = f"{where}: scratch"
        if isinstance(given, str):
            return ScratchSpec.directory(_absolute(given, where)).data()
        if not isinstance(given, dict):
            raise UsageError(f"{where} must be a directory or a table", _HINT)
        if "dir" in given:
            if extra := set(given) - {"dir"}:
                raise UsageError(f"{where}: {', '.join(sorted(extra))} cannot go with dir", "a directory is used as it is")
            return ScratchSpec.directory(_absolute(given["dir"], where)).data()
        if unknown := set(given) - _FILE_KEYS:
            raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}", "allowed: dir, " + ", ".join(sorted(_FILE_KEYS)))
        fs = given.get("fs")
        if fs not in MKFS:
            raise UsageError(f"{where}: unknown filesystem {fs!r}", "use fs = one of " + ", ".join(MKFS))
        options = given.get("mount", "")
        if not isinstance(options, str) or "loop" in options.split(","):
            raise UsageError(f"{where}: mount must be a string of mount options", 'e.g. mount = "compress=zstd:3"')
        return ScratchSpec(fs=fs, mount=options, size=byte_size(given.get("size", DEFAULT_SIZE), f"{where} size"),
                           within=Path(_absolute(given.get("in", str(DEFAULT_BASE)), f"{where} in"))).data()

    def problem(self, spec: dict[str, Any]) -> str | None:
        return scratch_problem(ScratchSpec.of(spec))

    def open(self, configs: Sequence[Config], journal: Journal, scratches: Scratches) -> PartSession:
        return _Session(scratches)


class _Session(PartSession):
    """Nothing to switch: each configuration has its own area (an A/A copy its original's),
    made on first use by the target through the owner both are handed."""

    def __init__(self, scratches: Scratches) -> None:
        self.scratches = scratches
        # Per area (host path): the trimming done. A run's facts rather than a trial's in_force:
        # a trim is done between rounds for every trial of the round, and in_force is the state
        # a configuration asks for, compared between configurations (inforce.py), which the
        # bytes a trim found free are not.
        self.trims: dict[str, ScratchTrim] = {}

    def _owner(self, config: Config) -> Scratch:
        return self.scratches.of(config)

    def new_round(self, round_index: int) -> None:
        """Trim each area made so far (an A/A copy's is its original's: trimmed once)."""
        areas = {str(a.host_path): a for owner in self.scratches.owners() if (a := owner.area) is not None}
        for key, area in areas.items():
            self.trims.setdefault(key, ScratchTrim.of(area.facts)).new_round(round_index)

    def apply(self, config: Config) -> None:
        pass

    def in_force(self, config: Config) -> dict[str, Any]:
        owner = self._owner(config)
        area = owner.area
        if area is None or owner.spec is None or not owner.spec.in_file:
            return {}  # a directory's mount is the machine's, recorded once in the facts
        mount = mount_of(area.host_path) or {}
        return {"filesystem": mount.get("fstype"), "mount_options": mount.get("options")}

    def facts(self, config: Config) -> dict[str, Any]:
        area = self._owner(config).area
        if area is None:
            return {}
        trim = self.trims.get(str(area.host_path))
        return {**area.facts, **({"trim": trim.facts()} if trim is not None else {})}

    def close(self) -> list[str]:
        return []  # the areas are their owners' to close (the run's, after its targets)
