"""The swap setup and memory limit of a configuration, as written in shootout.toml:

    [[config]]
    name = "zswap"
    memory = "1G"                      # limit of the workload's cgroup
    swap = { kind = "zswap", size = "1G", compressor = "lzo", max_pool_percent = 15, on = "/var/tmp" }

kind "none": no swap for the workload (with a memory limit, its cgroup may not swap even
where the machine has swap; without one, shootout just adds none); "disk": a swap file in the
directory `on`; "zswap": zswap in front of such a file, or in front of a zram device with
`on = "zram"` (compressing twice: only when asked); "zram": a zram device of `size`
(uncompressed) bytes. `max_pool_percent` bounds the compressed pool: zswap's parameter of that
name, a share of the machine's RAM (it cannot follow a configuration's memory limit: the run's
facts say why); for zram the device's mem_limit, a share of the configuration's memory limit
where it has one (the machine it emulates), else of the machine's RAM.

`on` is a directory on a disk, or "scratch" for the configuration's scratch directory; without
it the swap file goes into the scratch directory when the configuration names one
(`scratch = "/dir"`), else into /var/tmp. A scratch filesystem shootout makes in a file is
mounted only in the run's private mount namespace, where `shootout doctor` could not turn the
swap off after a kill, so it never holds swap. Pure parsing: no I/O, one-line UsageErrors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.units import byte_size

KINDS = ("none", "disk", "zswap", "zram")
KEYS = {"kind", "size", "compressor", "max_pool_percent", "on", "zpool"}
DEFAULT_SIZE = 1 << 30
DEFAULT_DIR = "/var/tmp"
ZRAM_BACKING = "zram"  # `on` value that puts zswap in front of a zram device
SCRATCH = "scratch"  # `on` value for the configuration's scratch directory


@dataclass(frozen=True)
class SwapSpec:
    kind: str = "none"
    size: int = 0  # bytes of the swap file or of the zram device (uncompressed)
    compressor: str | None = None  # None: the kernel's current choice, recorded
    max_pool_percent: int | None = None
    on: str | None = None  # directory of the swap file, or "zram"; None for kinds none and zram
    zpool: str | None = None  # only where the kernel still offers a choice

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> SwapSpec:
        """From the JSON-able form kept in Config.parts."""
        return cls(**data)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def backing(self) -> str:
        """Where swapped pages finally go: "none", "file" or "zram"."""
        if self.kind == "none":
            return "none"
        if self.kind == "zram" or (self.kind == "zswap" and self.on == ZRAM_BACKING):
            return "zram"
        return "file"

    def zswap_settings(self) -> dict[str, str]:
        """zswap parameters this setup needs in force: on with its settings, or off."""
        if self.kind != "zswap":
            return {"enabled": "N"}
        wanted = {"enabled": "Y"}
        if self.compressor:
            wanted["compressor"] = self.compressor
        if self.max_pool_percent is not None:
            wanted["max_pool_percent"] = str(self.max_pool_percent)
        if self.zpool:
            wanted["zpool"] = self.zpool
        return wanted

    def describe(self, limit: int | None = None) -> str:
        """One line for reports, e.g. 'zswap lzo, pool <= 15% of RAM, in front of 1024 MiB file in /var/tmp';
        a zram pool is a share of the configuration's memory `limit` (bytes) where it has one."""
        if self.kind == "none":
            return "no swap"
        of = f"the {limit >> 20} MiB memory limit" if limit and self.kind == "zram" else "RAM"
        settings = [x for x in (self.compressor, self.max_pool_percent and f"pool <= {self.max_pool_percent}% of {of}")
                    if x]
        area = "zram" if self.backing == "zram" else f"file in {self.on}"
        area = f"{self.size >> 20} MiB {area}"
        if self.kind == "zswap":
            head = "zswap" + (f" {', '.join(settings)}" if settings else "")
            return f"{head}, in front of {area}"
        return ", ".join([area, *settings])


def _bad(where: str, what: str, hint: str) -> UsageError:
    return UsageError(f"{where}: {what}", hint)


def scratch_directory(scratch: Any) -> str | None:
    """The directory of a [[config]] `scratch` value when it names one (not a filesystem in a file)."""
    if isinstance(scratch, str):
        return scratch
    if isinstance(scratch, Mapping) and isinstance(scratch.get("dir"), str):
        return scratch["dir"]
    return None


def _directory(on: Any, table: Mapping[str, Any], where: str) -> str:
    """The swap file's directory: `on`, the scratch directory, or /var/tmp."""
    scratch = scratch_directory(table.get("scratch"))
    if on is None:
        return scratch or DEFAULT_DIR
    if on == SCRATCH:
        if scratch is None:
            raise _bad(where, "swap on the scratch needs scratch = \"/a/directory\"" if "scratch" not in table else
                       "swap cannot go on a scratch filesystem made in a file: it is mounted only in the run's "
                       "private mount namespace, where `shootout doctor` could not turn the swap off after a kill",
                       'name a directory on a disk: on = "/var/tmp" or scratch = "/mnt/disk/dir"')
        return scratch
    if not isinstance(on, str) or not on.startswith("/"):
        raise _bad(where, f"swap on {on!r} is not an absolute directory",
                   'write e.g. on = "/var/tmp", on = "scratch" or (zswap) on = "zram"')
    return on


def parse_swap(table: Mapping[str, Any], where: str) -> SwapSpec:
    """The `swap` value of a [[config]] table (a table, or a kind alone: swap = "none") -> SwapSpec;
    the table's `scratch` decides where a swap file goes by default."""
    value = table["swap"]
    swap = {"kind": value} if isinstance(value, str) else value
    if not isinstance(swap, Mapping):
        raise _bad(where, "swap must be a table", 'write e.g. swap = { kind = "zswap", size = "1G" }')
    if unknown := sorted(set(swap) - KEYS):
        raise _bad(where, f"swap has no setting {unknown[0]!r}", "use " + ", ".join(sorted(KEYS)))
    kind = swap.get("kind")
    if kind not in KINDS:
        raise _bad(where, f"swap kind {kind!r} is not one of {', '.join(KINDS)}", 'write e.g. kind = "zswap"')
    if kind == "none":
        if extra := sorted(set(swap) - {"kind"}):
            raise _bad(where, f"swap kind none takes no {extra[0]!r}", 'write swap = { kind = "none" }')
        return SwapSpec()
    if kind == "disk" and ({"compressor", "max_pool_percent", "zpool"} & set(swap)):
        raise _bad(where, "disk swap compresses nothing", 'use kind = "zswap" or "zram" for compression')
    if kind != "zswap" and "zpool" in swap:
        raise _bad(where, "zpool is a zswap setting", 'remove zpool, or use kind = "zswap"')
    if kind == "zram" and "on" in swap:
        raise _bad(where, "a zram device lives in RAM: it takes no 'on'", 'remove on, or use kind = "disk"')
    size = byte_size(swap.get("size", DEFAULT_SIZE), f"{where}: swap size")
    if size < 1 << 20:
        raise _bad(where, f"swap size {size} bytes is too small", "give at least 1M (mkswap needs some pages)")
    pct = swap.get("max_pool_percent")
    if pct is not None and (isinstance(pct, bool) or not isinstance(pct, int) or not 1 <= pct <= 100):
        raise _bad(where, f"max_pool_percent {pct!r} is not a whole percentage from 1 to 100",
                   "write e.g. max_pool_percent = 15")
    for key in ("compressor", "zpool"):
        if key in swap and not (isinstance(swap[key], str) and swap[key]):
            raise _bad(where, f"swap {key} must be a non-empty string", f'write e.g. {key} = "lzo"')
    on = None
    if kind != "zram":
        on = ZRAM_BACKING if kind == "zswap" and swap.get("on") == ZRAM_BACKING else _directory(swap.get("on"), table, where)
    return SwapSpec(kind, size, swap.get("compressor"), pct, on, swap.get("zpool"))


def parse_memory(value: Any, where: str) -> int:
    """`memory = "1G"` -> the limit in bytes."""
    limit = byte_size(value, f"{where}: memory")
    if limit < 16 << 20:
        raise _bad(where, f"memory limit {limit >> 20} MiB is too small to run anything",
                   'give at least 16M, e.g. memory = "1G"')
    return limit
