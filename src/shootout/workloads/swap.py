"""Memory-pressure workloads (category `swap`): browser-like tabs, and a build with -j too high.

They are meant to run under a configuration's memory limit and swap setup (parts/memory.py,
parts/swap.py): the limit makes them swap, the setup decides how fast the pages come back.
Without a limit they still run, in RAM. Besides their metrics (strictly positive, compared as
speed-ups) tabs reports *recorded* amounts that may be zero (RECORDED: tabs the OOM killer
took, major faults); the parts add stall time, swap traffic and pool sizes. Those are
summarised per configuration (shootout.judge.amounts), and a configuration that lost more tabs is
never called faster (the spec's guard).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.workloads.compile import Build
from shootout.workloads.contract import Context, Prepared, parse_key_values, require
from shootout.workloads.kernel import CompiledWorkload
from shootout.workloads.sizes import memory_budget_mib, process_budget_mib

# A text-like block repeats this share of its bytes (TEXT_REPEAT_PERMILLE in tabs.c); zero
# blocks save everything and random blocks nothing, so the mix below gives the asked
# compressibility (1 - compressed/original, per 4 KiB page as zswap and zram compress).
TEXT_SAVED = 0.85
ZERO_SHARE = 0.2  # of the compressibility that zero blocks provide; text blocks the rest
MAX_COMPRESSIBILITY = 0.85
# What one tab needs beyond its working set: the process, its page tables, the driver's share.
TAB_OVERHEAD_MIB = 8

_MS = "switch latency from request to the tab's answer"
# What the program counts that may be zero: stored with the trial's values, summarised per
# configuration (shootout.judge.amounts), never compared as speed-ups.
RECORDED = (
    Metric("tabs_killed", "tabs", "tabs the OOM killer killed (each reloaded when next switched to)"),
    Metric("major_faults", "faults", "major page faults of the tabs and the driver"),
)
# Without a memory limit the tabs run in RAM: a modest load, nothing to swap.
UNLIMITED_MIB = 256


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


class Tabs(CompiledWorkload):
    kernel = "tabs"
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
        recorded=RECORDED,
        guard="tabs_killed",
    )
    quick = {"tabs": 4, "switches": 100, "max_seconds": 30}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        # The load is `overcommit` times the configuration's memory limit (parts/memory.py).
        overcommit = 2.0
        budget = memory_budget_mib(facts)
        limit = facts.memory_limit >> 20 if facts.memory_limit else \
            UNLIMITED_MIB if budget is None else max(1, min(UNLIMITED_MIB, int(budget / overcommit)))
        # each tab one process: on a 32-bit side no tab may outgrow its address space
        per_tab = process_budget_mib(replace(facts, available_bytes=None)) or 0
        tabs = max(12, math.ceil(limit * overcommit / per_tab)) if per_tab else 12
        return {"tabs": tabs, "limit_mib": limit, "overcommit": overcommit, "compressibility": 0.6,
                "touch_pct": 10, "switches": 400, "max_seconds": 120, "seed": 1}

    def prepare(self, ctx: Context) -> Prepared:
        check_limit(ctx.params, ctx.facts.memory_limit)
        text, zero = mix_for(float(ctx.params["compressibility"]))
        prepared = super().prepare(ctx)
        prepared.facts.update(tab_mib=tab_mib(ctx.params), text_permille=text, zero_permille=zero,
                              compressibility=expected_compressibility(text, zero))
        return prepared

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        f = prepared.facts
        return [prepared.files["binary"], str(int(params["tabs"])), str(f["tab_mib"]), str(int(params["switches"])),
                str(f["text_permille"]), str(f["zero_permille"]), str(int(params["touch_pct"])),
                str(int(params["seed"])), str(int(params["max_seconds"]))]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        """The metrics, and the recorded amounts (which may be zero) beside them."""
        names = [m.name for m in (*self.spec.metrics, *self.spec.recorded)]
        return require(parse_key_values(result.stdout), {n: n for n in names}, result)


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

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {**super().default_params(facts), "jobs": 8 * (facts.cores or 1)}


WORKLOADS = (Tabs, KbuildPressure)
