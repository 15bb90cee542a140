"""Memory-pressure workloads (category `swap`): browser-like tabs, and a build with -j too high.

They are meant to run under a configuration's memory limit and swap setup (shootout.swap):
the limit makes them swap, the setup decides how fast the pages come back. Without a limit
they still run, in RAM. Besides their metrics (strictly positive, compared as speed-ups)
they report *recorded* amounts that may be zero — tabs the OOM killer took, major faults,
and, from the configuration's parts, stall time and swap traffic (RECORDED): those are
summarised per configuration, and a configuration that lost more tabs is never called faster
(shootout.stats.recorded).
"""

from __future__ import annotations

import os
from typing import Any

from shootout.build import build_native
from shootout.errors import UsageError
from shootout.model import Metric, WorkloadSpec
from shootout.targets.base import Target
from shootout.targets.process import ProcResult
from shootout.workloads.base import Prepared, Workload, parse_key_values, require
from shootout.workloads.compile import Build

# A text-like block repeats this share of its bytes (TEXT_REPEAT_PERMILLE in tabs.c); zero
# blocks save everything and random blocks nothing, so the mix below gives the asked
# compressibility (1 - compressed/original, per 4 KiB page as zswap and zram compress).
TEXT_SAVED = 0.85
ZERO_SHARE = 0.2  # of the compressibility that zero blocks provide; text blocks the rest
MAX_COMPRESSIBILITY = 0.85
# What one tab needs beyond its working set: the process, its page tables, the driver's share.
TAB_OVERHEAD_MIB = 8

_MS = "switch latency from request to the tab's answer"
RECORDED: dict[str, Metric] = {m.name: m for m in (
    Metric("tabs_killed", "tabs", "tabs the OOM killer killed (each reloaded when next switched to)"),
    Metric("major_faults", "faults", "major page faults of the tabs and the driver"),
    Metric("psi_some_ms", "ms", "memory stall time of some of the workload's tasks (PSI, cgroup or system)"),
    Metric("psi_full_ms", "ms", "memory stall time of all of the workload's tasks at once (PSI)"),
    Metric("oom_kills", "processes", "OOM kills in the workload's cgroup"),
    Metric("pswpin", "pages", "pages swapped in from a swap device, machine-wide"),
    Metric("pswpout", "pages", "pages swapped out to a swap device, machine-wide"),
    Metric("zswap_stored_pages", "pages", "pages in the zswap pool at its peak (debugfs)"),
    Metric("zswap_pool_mib", "MiB", "zswap pool size at its peak"),
    Metric("zswap_ratio", "x", "zswap compression ratio at the pool's peak (stored / pool)"),
    Metric("zswap_written_back_pages", "pages", "pages zswap wrote back to the swap device"),
    Metric("zswap_reject_compress_poor", "pages", "pages zswap refused because they compress poorly"),
    Metric("zswap_pool_limit_hit", "pages", "times the zswap pool was full (max_pool_percent)"),
    Metric("zram_ratio", "x", "zram compression ratio at its peak (mm_stat orig / compr)"),
    Metric("zram_mem_mib", "MiB", "memory the zram device used at its peak"),
)}


def mix_for(compressibility: float) -> tuple[int, int]:
    """(text, zero) shares in thousandths for a compressibility from 0 to MAX_COMPRESSIBILITY."""
    if not 0 <= compressibility <= MAX_COMPRESSIBILITY:
        raise UsageError(f"tabs: compressibility {compressibility} is outside 0..{MAX_COMPRESSIBILITY}",
                         "give the share a compressor saves, e.g. compressibility = 0.6")
    zero = ZERO_SHARE * compressibility
    text = (compressibility - zero) / TEXT_SAVED
    return round(text * 1000), round(zero * 1000)


def expected_compressibility(text_permille: int, zero_permille: int) -> float:
    return zero_permille / 1000 + text_permille / 1000 * TEXT_SAVED


def tab_mib(params: dict[str, Any]) -> int:
    return max(1, int(params["limit_mib"] * params["overcommit"] / params["tabs"]))


def check_limit(params: dict[str, Any], limit_bytes: int | None) -> None:
    """UsageError when a memory limit cannot hold even one tab (and its process)."""
    if limit_bytes is None:
        return
    need = tab_mib(params) + TAB_OVERHEAD_MIB
    if limit_bytes >> 20 < need:
        raise UsageError(f"tabs: the memory limit {limit_bytes >> 20} MiB is below what one tab needs ({need} MiB)",
                         "raise memory, or use more, smaller tabs (tabs, overcommit)")


class Tabs(Workload):
    spec = WorkloadSpec(
        name="tabs",
        category="swap",
        description="switch between N worker processes ('tabs') whose memory exceeds the limit; seeded order",
        metrics=(
            Metric("p95_ms", "ms", f"95th percentile {_MS}"),
            Metric("p50_ms", "ms", f"median {_MS}"),
            Metric("p99_ms", "ms", f"99th percentile {_MS}"),
            Metric("switches_per_s", "switches/s", "switches completed per second"),
            Metric("open_s", "s", "time to open every tab (fill its memory)"),
        ),
        headline="p95_ms",
        reproduces="E: a dozen browser tabs on a 1 GB Pi 3 with zswap in front of swap on a USB SSD",
    )

    def default_params(self) -> dict[str, Any]:
        # Sized for a 1 GiB limit at twice that load; limit_mib follows the configuration's
        # memory limit once configurations carry one.
        return {"tabs": 12, "limit_mib": 1024, "overcommit": 2.0, "compressibility": 0.6, "touch_pct": 10,
                "switches": 400, "max_seconds": 120, "seed": 1}

    @classmethod
    def quick_params(cls) -> dict[str, Any]:
        return {**cls().default_params(), "tabs": 4, "limit_mib": 64, "switches": 100, "max_seconds": 30}

    def prepare(self, target: Target, params: dict[str, Any]) -> Prepared:
        self.check_tools(target)
        text, zero = mix_for(float(params["compressibility"]))
        binary = build_native(target, "tabs", target.config)
        return Prepared(files={"binary": binary.path},
                        facts={"binary": binary.facts, "tab_mib": tab_mib(params), "text_permille": text,
                               "zero_permille": zero, "compressibility": expected_compressibility(text, zero)})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        f = prepared.facts
        return [prepared.files["binary"], str(int(params["tabs"])), str(f["tab_mib"]), str(int(params["switches"])),
                str(f["text_permille"]), str(f["zero_permille"]), str(int(params["touch_pct"])),
                str(int(params["seed"])), str(int(params["max_seconds"]))]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        return require(parse_key_values(result.stdout), {m.name: m.name for m in self.spec.metrics}, result.stdout)

    def recorded(self, result: ProcResult) -> dict[str, float]:
        """Amounts the program counted that may be zero (see RECORDED)."""
        values = parse_key_values(result.stdout)
        return {k: values[k] for k in ("tabs_killed", "major_faults", "reloads", "truncated") if k in values}


class KbuildPressure(Build):
    """The original zswap patch's benchmark: a parallel build squeezed by the memory limit."""

    spec = WorkloadSpec(
        name="kbuild-pressure",
        category="swap",
        description="make -jN (N well above the cores) of the build workload's code base under the memory limit",
        metrics=Build.spec.metrics,
        headline=Build.spec.headline,
        reproduces="E: zswap's own benchmark (a kernel build in a memory-limited cgroup)",
    )

    def default_params(self) -> dict[str, Any]:
        return {**super().default_params(), "jobs": 8 * (os.cpu_count() or 1)}


WORKLOADS = (Tabs, KbuildPressure)
