"""The swap setup and memory limit of a configuration, as written in shootout.toml:

    [[config]]
    name = "zswap"
    memory = "1G"                      # limit of the workload's cgroup
    swap = { kind = "zswap", size = "1G", compressor = "lzo", max_pool_percent = 15, on = "/var/tmp" }

kind "none": no swap for the workload (with a memory limit, its cgroup may not swap even
where the machine has swap; without one, shootout just adds none); "disk": a swap file in the directory `on`; "zswap": zswap in front of such a file, or
in front of a zram device with `on = "zram"` (compressing twice: only when asked);
"zram": a zram device of `size` (uncompressed) bytes. `max_pool_percent` bounds the
compressed pool as a share of the machine's RAM: zswap's parameter of that name, and for
zram the device's mem_limit. Pure parsing: no I/O, one-line UsageErrors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shootout.errors import UsageError
from shootout.units import byte_size

KINDS = ("none", "disk", "zswap", "zram")
KEYS = {"kind", "size", "compressor", "max_pool_percent", "on", "zpool"}
DEFAULT_SIZE = 1 << 30
ZRAM_BACKING = "zram"  # `on` value that puts zswap in front of a zram device


@dataclass(frozen=True)
class SwapSpec:
    kind: str = "none"
    size: int = 0  # bytes of the swap file or of the zram device (uncompressed)
    compressor: str | None = None  # None: the kernel's current choice, recorded
    max_pool_percent: int | None = None
    on: str | None = None  # directory of the swap file; None: the configuration's scratch
    zpool: str | None = None  # only where the kernel still offers a choice

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

    def describe(self) -> str:
        """One line for reports, e.g. 'zswap lzo, pool <= 15% of RAM, in front of 1024 MiB file in /var/tmp'."""
        if self.kind == "none":
            return "no swap"
        settings = [x for x in (self.compressor, self.max_pool_percent and f"pool <= {self.max_pool_percent}% of RAM")
                    if x]
        area = "zram" if self.backing == "zram" else f"file in {self.on or 'the scratch directory'}"
        area = f"{self.size >> 20} MiB {area}"
        if self.kind == "zswap":
            head = "zswap" + (f" {', '.join(settings)}" if settings else "")
            return f"{head}, in front of {area}"
        return ", ".join([area, *settings])


@dataclass(frozen=True)
class MemorySpec:
    limit: int  # bytes the workload's cgroup may use (RAM; swap on top as the swap setup allows)


def _bad(config: str, what: str, hint: str) -> UsageError:
    return UsageError(f"configuration {config}: {what}", hint)


def parse_swap(value: Any, config: str) -> SwapSpec:
    """`swap = { ... }` (or a kind alone, `swap = "none"`) -> SwapSpec."""
    table = {"kind": value} if isinstance(value, str) else value
    if not isinstance(table, dict):
        raise _bad(config, "swap must be a table", 'write e.g. swap = { kind = "zswap", size = "1G" }')
    if unknown := sorted(set(table) - KEYS):
        raise _bad(config, f"swap has no setting {unknown[0]!r}", "use " + ", ".join(sorted(KEYS)))
    kind = table.get("kind")
    if kind not in KINDS:
        raise _bad(config, f"swap kind {kind!r} is not one of {', '.join(KINDS)}", 'write e.g. kind = "zswap"')
    if kind == "none":
        if extra := sorted(set(table) - {"kind"}):
            raise _bad(config, f"swap kind none takes no {extra[0]!r}", 'write swap = { kind = "none" }')
        return SwapSpec()
    if kind == "disk" and ({"compressor", "max_pool_percent", "zpool"} & set(table)):
        raise _bad(config, "disk swap compresses nothing", 'use kind = "zswap" or "zram" for compression')
    if kind != "zswap" and "zpool" in table:
        raise _bad(config, "zpool is a zswap setting", 'remove zpool, or use kind = "zswap"')
    if kind == "zram" and "on" in table:
        raise _bad(config, "a zram device lives in RAM: it takes no 'on'", 'remove on, or use kind = "disk"')
    size = byte_size(table.get("size", DEFAULT_SIZE), f"configuration {config}: swap size")
    if size < 1 << 20:
        raise _bad(config, f"swap size {size} bytes is too small", "give at least 1M (mkswap needs some pages)")
    pct = table.get("max_pool_percent")
    if pct is not None and (isinstance(pct, bool) or not isinstance(pct, int) or not 1 <= pct <= 100):
        raise _bad(config, f"max_pool_percent {pct!r} is not a whole percentage from 1 to 100",
                   "write e.g. max_pool_percent = 15")
    for key in ("compressor", "on", "zpool"):
        if key in table and not (isinstance(table[key], str) and table[key]):
            raise _bad(config, f"swap {key} must be a non-empty string", f'write e.g. {key} = "..."')
    return SwapSpec(kind, size, table.get("compressor"), pct, table.get("on"), table.get("zpool"))


def parse_memory(value: Any, config: str) -> MemorySpec:
    """`memory = "1G"` -> MemorySpec."""
    limit = byte_size(value, f"configuration {config}: memory")
    if limit < 16 << 20:
        raise _bad(config, f"memory limit {limit >> 20} MiB is too small to run anything",
                   'give at least 16M, e.g. memory = "1G"')
    return MemorySpec(limit)
