"""The swap setup of a configuration: none, a swap file, zswap in front of it, or zram.

    [[config]]
    swap = { kind = "zswap", size = "2G", compressor = "lzo", max_pool_percent = 15, on = "/var/tmp" }

Spec (Config.parts["swap"]): SwapSpec.as_dict() (shootout.swap.spec, which documents the
keys). The run's swap areas are made once and switched before each trial; what is in force
(/proc/swaps, zswap's parameters, the zram device) is read back and stored with the trial,
and zswap's and zram's figures during it in Trial.observed["swap"] (shootout.swap.setup).
A configuration without `swap` runs with the machine's own swap and zswap as they were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shootout.base.model import Config, Metric
from shootout.parts.part import Part, PartSession
from shootout.storage.scratch import Scratches
from shootout.swap import setup
from shootout.swap.spec import SwapSpec, parse_swap
from shootout.system.journal import Journal


class SwapPart(Part):
    name = "swap"
    keys = ("swap",)
    observes = (
        Metric("zswap_stored_pages", "pages", "pages in the zswap pool at its peak (debugfs)"),
        Metric("zswap_pool_mib", "MiB", "zswap pool size at its peak"),
        Metric("zswap_stored_mib", "MiB", "data zswap held at the pool's peak"),
        Metric("zswap_ratio", "x", "zswap compression ratio at the pool's peak (stored / pool)"),
        Metric("zswap_written_back_pages", "pages", "pages zswap wrote back to the swap device"),
        Metric("zswap_reject_compress_poor", "pages", "pages zswap refused because they compress poorly"),
        Metric("zswap_pool_limit_hit", "pages", "times the zswap pool was full (max_pool_percent)"),
        Metric("zswpout", "pages", "pages stored into zswap"),
        Metric("zswpin", "pages", "pages loaded from zswap"),
        Metric("zram_orig_mib", "MiB", "data the zram device held at its peak"),
        Metric("zram_compr_mib", "MiB", "that data compressed"),
        Metric("zram_mem_mib", "MiB", "memory the zram device used at its peak (mm_stat mem_used_max)"),
        Metric("zram_failed_writes", "pages", "writes the zram device refused (at its mem_limit): pages not swapped out"),
        Metric("zram_ratio", "x", "zram compression ratio at its peak (mm_stat orig / compr)"),
        Metric("zram_same_pages", "pages", "pages zram stored as one repeated value"),
        Metric("zram_huge_pages", "pages", "pages zram stored uncompressed"),
    )

    def parse(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        return parse_swap(table, where).as_dict()

    def problem(self, spec: Mapping[str, Any]) -> str | None:
        return setup.problem(SwapSpec.of(spec))

    def open(self, configs: Sequence[Config], journal: Journal, scratches: Scratches) -> PartSession | None:
        specs = {c.name: SwapSpec.of(c.parts[self.name]) if self.name in c.parts else None for c in configs}
        if not any(specs.values()):
            return None
        limits = {c.name: c.parts["memory"]["limit"] for c in configs if "memory" in c.parts}
        setups = setup.SwapSetups(journal, specs, limits)
        setups.open()
        return _Session(setups)


class _Session(PartSession):
    def __init__(self, setups: setup.SwapSetups) -> None:
        self.setups = setups

    def apply(self, config: Config) -> None:
        self.setups.apply(config.name)
        self.setups.begin_trial(config.name)

    def in_force(self, config: Config) -> dict[str, Any]:
        return self.setups.state(config.name)

    def after_trial(self, config: Config) -> dict[str, Any]:
        return self.setups.end_trial()

    def facts(self, config: Config) -> dict[str, Any]:
        f, area = self.setups.facts, self.setups.areas.get(config.name)
        out = {"machine_swap": f.get("machine_swap"), "zswap_before": f.get("zswap_before"),
               "setup": f.get("setups", {}).get(config.name), "zswap_debugfs": f.get("zswap_debugfs"),
               "area": area.path if area else None, "storage": f.get("swap_files", {}).get(area.path if area else "")}
        # what the compressed pool is a share of: zram's mem_limit, and why zswap's cannot follow the limit
        if (pool := f.get("zram_mem_limit", {}).get(config.name)) is not None:
            out["zram_mem_limit"] = pool
        spec = self.setups.specs.get(config.name)
        if spec is not None and spec.kind == "zswap" and "zswap_pool_scaling" in f:
            out["zswap_pool_scaling"] = f["zswap_pool_scaling"]
        return out

    def failure_note(self, seen: dict[str, Any]) -> str | None:
        # at its mem_limit a zram device refuses writes; under a memory limit the kernel may then
        # retry the swap-out in vain instead of killing (a trial that times out)
        if refused := seen.get("zram_failed_writes"):
            return f"the zram device refused {refused:,.0f} writes at its mem_limit (pages the kernel could not swap out)"
        return None

    def close(self) -> list[str]:
        return self.setups.close()
