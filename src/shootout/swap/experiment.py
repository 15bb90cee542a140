"""The named experiment `pi3desk-swap` (EXPERIMENTS.md E, measured instead of "it keeps running").

none vs disk swap vs zswap in front of disk swap vs zram, each under the same 1 GiB memory
limit, with twelve tabs holding about twice that. What the command line will run, once
configurations carry swap and memory (issue 10):

    shootout run --experiment pi3desk-swap
    # = shootout run --file <CONFIGS written out> -w tabs   (with PARAMS for tabs)

Compressed pools: on cgroup v1 the kernel does not count zswap's pool or zram's memory in
the cgroup's limit (measured: memory.kmem.usage_in_bytes stays 0 while the pool grows), so
the compressed setups hold more than the 1 GiB; their pool sizes are recorded with every
trial and reported beside the latencies. zswap keeps the write-up's max_pool_percent = 15
(15% of this machine's RAM: not binding). zram gets no mem_limit: a zram device that reaches
its limit fails writes, and under a memory limit the kernel then reclaims in vain instead of
killing (measured: a trial that never ended, its processes unkillable until the limit was
lifted). The write-up's zpool z3fold no longer exists (6.15+: zsmalloc only); both
compressed setups use lzo, the kernel's default compressor for zswap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

NAME = "pi3desk-swap"
LIMIT = "1G"
POOL_PERCENT = 15

CONFIGS = f"""\
[[config]]
name = "none"
memory = "{LIMIT}"
swap = {{ kind = "none" }}

[[config]]
name = "disk"
memory = "{LIMIT}"
swap = {{ kind = "disk", size = "2G" }}

[[config]]
name = "zswap"
memory = "{LIMIT}"
swap = {{ kind = "zswap", size = "2G", compressor = "lzo", max_pool_percent = {POOL_PERCENT} }}

[[config]]
name = "zram"
memory = "{LIMIT}"
swap = {{ kind = "zram", size = "2G", compressor = "lzo" }}
"""
WORKLOADS = ("tabs",)
PARAMS = {"tabs": {"tabs": 12, "limit_mib": 1024, "overcommit": 2.0, "compressibility": 0.6, "touch_pct": 10}}


@dataclass(frozen=True)
class SetupResult:
    """One configuration's figures over the rounds (medians) and the tabs it lost in all."""

    p95_ms: float
    tabs_lost: float
    psi_full_ms: float | None = None


def paragraph(results: Mapping[str, SetupResult]) -> str:
    """The report's one paragraph: which setup keeps switches fastest and which loses tabs.

    Setups that lost tabs are ranked after every setup that lost none (stats/recorded.py)."""
    ranked = sorted(results, key=lambda c: (results[c].tabs_lost > 0, results[c].p95_ms))
    best = ranked[0]
    losing = [c for c in ranked if results[c].tabs_lost > 0]
    parts = [f"Under a {LIMIT} limit with about twice that in tabs, {best} kept tab switches fastest "
             f"(p95 {results[best].p95_ms:.0f} ms"]
    parts[0] += f", {results[best].tabs_lost:.0f} tabs lost)." if results[best].tabs_lost else ", no tab lost)."
    rest = [c for c in ranked[1:] if c not in losing]
    if rest:
        parts.append("Then " + ", ".join(f"{c} ({results[c].p95_ms:.0f} ms)" for c in rest) + ".")
    if losing:
        parts.append(" and ".join(f"{c} lost {results[c].tabs_lost:.0f} tabs to the OOM killer" for c in losing)
                     + ": a lost tab is reloaded, so its switches only look fast.")
    else:
        parts.append("No setup lost a tab.")
    return " ".join(parts)
