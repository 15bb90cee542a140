"""What a configuration asks of its scratch storage, typed: the one way to read it.

Config.parts keeps each part's spec as JSON-able data (it is stored with the run); the scratch
part's is {"dir": PATH} or {"fs", "mount", "size" (bytes), "in"}. Everything that needs to
know what the scratch is (the area's owner, the parts, the storage workloads) reads it through
scratch_spec(), so those keys are spelled here and in the part's parser only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shootout.base.model import Config

PART = "scratch"  # the part's name: its key in Config.parts, Trial.in_force and a configuration's facts
DEFAULT_BASE = Path("/var/tmp")


@dataclass(frozen=True)
class ScratchSpec:
    """A directory used as it is (the device under test), or a filesystem shootout makes in a file."""

    dir: Path | None = None  # the directory; None for a filesystem in a file:
    fs: str = ""  # its type (a key of storage.scratch.MKFS),
    mount: str = ""  # its mount options ("" for the defaults),
    size: int = 0  # its size in bytes,
    within: Path = DEFAULT_BASE  # and the directory holding its file (`in`)

    @property
    def in_file(self) -> bool:
        return self.dir is None

    @classmethod
    def directory(cls, path: str | Path) -> ScratchSpec:
        return cls(dir=Path(path))

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> ScratchSpec:
        """From the data kept in Config.parts (as ScratchPart.parse made it)."""
        if "dir" in data:
            return cls.directory(data["dir"])
        return cls(fs=str(data["fs"]), mount=str(data.get("mount") or ""), size=int(data["size"]),
                   within=Path(data["in"]))

    def data(self) -> dict[str, Any]:
        """The JSON-able form kept in Config.parts; of(data()) gives this spec back."""
        if self.dir is not None:
            return {"dir": str(self.dir)}
        return {"fs": self.fs, "mount": self.mount, "size": self.size, "in": str(self.within)}


DEFAULT = ScratchSpec.directory(DEFAULT_BASE)  # a configuration that names no scratch: a directory in /var/tmp


def scratch_spec(config: Config) -> ScratchSpec | None:
    """The scratch the configuration names, or None (then its scratch, if a workload needs one, is DEFAULT)."""
    data = config.parts.get(PART)
    return ScratchSpec.of(data) if data else None
