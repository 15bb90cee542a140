"""Memory workloads on the native kernels: bandwidth per cache level, largest buffer, latency."""

from __future__ import annotations

import math
from typing import Any

from shootout.base.errors import WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import LEVELS, TargetFacts
from shootout.execution.process import ProcResult
from shootout.workloads.contract import (
    Context,
    Prepared,
    parse_key_values,
    repeats_for,
    require,
)
from shootout.workloads.kernel import THREAD_CPU_TIMING, CompiledWorkload
from shootout.workloads.shell import q
from shootout.workloads.sizes import process_budget_mib

OPS = ("read", "write", "copy", "fill")
# When the target's sysfs says nothing (some ARM boards): typical Cortex-A72-class sizes.
FALLBACK_CACHES = {"l1": 32, "l2": 1024}
FAR_PASS_MIB = 1024  # what the far buffer's repetitions move at least: four of the 256 MiB minimum


def sections(result: ProcResult) -> dict[str, dict[str, float]]:
    """The `name value` lines of each run of a multi-run trial, by section."""
    return {name: parse_key_values(text) for name, text in result.sections().items()}


# The C library routines behind two metrics, whose strategy for large sizes (cached or
# non-temporal stores) the probe of `membw --paths` tells: routine, its count of bypasses.
LIBC_ROUTINES = {"copy_mbps": ("memcpy", "copy_bypass_reps"), "fill_mbps": ("memset", "fill_bypass_reps")}
MIN_PROBES = 5  # fewer calls with separable references make no claim
ODD_CALLS = 1  # calls allowed to disagree with a claim (a noisy neighbour, a stray interrupt)


def code_paths(probe: dict[str, float], size_mib: int) -> dict[str, str]:
    """Per metric, how the C library wrote the destination: through the cache or around it.

    Claimed only when (nearly) every call of the probe agrees (see membw.c): some routines
    stream only sometimes (rep stosb on some CPUs), and a claim that flips from run to run
    would show as a confounder between two identical sides.
    """
    valid = int(probe.get("probe_valid_reps", 0))
    if valid < MIN_PROBES:
        return {}  # cache and memory could not be told apart here: no claim
    paths = {}
    for metric, (routine, key) in LIBC_ROUTINES.items():
        bypassed = probe.get(key)
        if bypassed is not None and bypassed >= valid - ODD_CALLS:
            paths[metric] = f"{routine} of {size_mib} MiB bypasses the cache (non-temporal stores)"
        elif bypassed is not None and bypassed <= ODD_CALLS:
            paths[metric] = f"{routine} of {size_mib} MiB through the cache"
    return paths


def far_wanted_mib(caches_kib: dict[str, int]) -> int:
    """The far buffer membw aims at: four times the largest cache, at least 256 MiB."""
    return max(256, 4 * max(caches_kib.values()) // 1024)


def far_reps(size_mib: int, reps: int) -> int:
    """Repetitions of the far buffer's passes (the best is kept): as many as move FAR_PASS_MIB, at
    most `reps`. A pass over a 1 GiB buffer (a VM that reports a 260 MiB L3) takes as long as four
    over 256 MiB; a second one cost 0.8 s a trial and made membw two thirds of the main job's
    measuring, where membw decides at the rule's first look anyway. Where rounds are bought for
    precision one pass is the worse buy: writeread's paired spread, amd64 against i386, was 0.029
    against two passes' 0.019 (benchmarks/membw_passes.py), 1.5 x the trial time for one interval."""
    return max(1, min(reps, math.ceil(FAR_PASS_MIB / size_mib)))


def far_buffer_mib(caches_kib: dict[str, int], facts: TargetFacts) -> int:
    """The far buffer: as wanted, unless two of them (membw maps two) do not fit one process of
    the smallest side; then the largest multiple of 64 MiB that does."""
    wanted = far_wanted_mib(caches_kib)
    budget = process_budget_mib(facts)
    if budget is None or 2 * wanted <= budget:
        return wanted
    half = budget // 2
    return max(1, half // 64 * 64 if half >= 64 else half)


class MemBandwidth(CompiledWorkload):
    spec = WorkloadSpec(
        name="membw",
        category="memory",
        description="write then read back an mlock()ed buffer far larger than every cache (the articles' RAM "
                    "test); read, write, copy, fill inside each cache level and far outside",
        metrics=tuple(
            [Metric("writeread_mbps", "MB/s", "write then read back a buffer far larger than every cache "
                                              "(bytes written plus read)")]
            + [Metric(f"{op}_mbps", "MB/s", f"{op}, buffers far larger than every cache") for op in OPS]
            + [Metric(f"{op}_{lvl}_mbps", "MB/s", f"{op}, two buffers filling half of {lvl.upper()}")
               for lvl in LEVELS for op in OPS]
        ),
        # Not copy: memcpy's strategy for large copies differs between C libraries (glibc's
        # i386 build switches to non-temporal stores at a smaller size than amd64's), which
        # says nothing about 32 vs 64 bits. The compiled write-then-read loop is what the
        # articles measured.
        headline="writeread_mbps",
        reproduces="A, D: RAM bandwidth (mlock'd buffer written and read back; mbw) 32-bit vs 64-bit",
        timing=THREAD_CPU_TIMING,
    )
    suites = ("native",)
    kernel = "membw"
    quick = {"reps": 3}
    needs_root = "mlock() of buffers beyond the default RLIMIT_MEMLOCK (or ulimit -l, or mlock = false)"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        caches = facts.caches_kib or FALLBACK_CACHES
        # two buffers take half of the level, so they stay resident while being copied
        levels = {lvl: max(1, kib // 4) for lvl, kib in caches.items()}
        return {"levels_kib": levels, "caches_kib": caches, "size_mib": far_buffer_mib(caches, facts), "reps": 5,
                "mlock": True}

    def prepare(self, ctx: Context) -> Prepared:
        prepared = super().prepare(ctx)
        # Which strategy this side's C library takes for the far buffer: a code-path fact,
        # a confounder of copy and fill when the two sides differ.
        size = int(ctx.params["size_mib"])
        if size < (wanted := far_wanted_mib(ctx.params.get("caches_kib") or FALLBACK_CACHES)):
            prepared.facts["far_buffer"] = (f"{size} MiB, below 4 x the largest cache ({wanted} MiB): "
                                            "two such buffers must fit one process on every side")
        probe = ctx.target.run([prepared.files["binary"], str(size), "1", "--paths",
                                *([] if ctx.params.get("mlock", True) else ["--no-mlock"])], timeout=300)
        if probe.exit_status != 0:
            raise WorkloadError(f"membw failed: {probe.stderr_tail(1)[:200]}", "run the membw kernel by hand")
        found = parse_key_values(probe.stdout)
        prepared.facts["paths_probe"] = {k: v for k, v in found.items() if k.endswith(("_ns", "_reps"))}
        prepared.facts["code_paths"] = code_paths(found, size)
        return prepared

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        binary = q(prepared.files["binary"])
        extra = "" if params.get("mlock", True) else " --no-mlock"
        reps = int(params["reps"])
        lines = ["set -e"]
        for lvl, kib in sorted(params["levels_kib"].items()):
            lines.append(f"echo 'section {lvl}'; {binary} {int(kib)} {reps} --kib{extra}")
        size = int(params["size_mib"])
        lines.append(f"echo 'section mem'; {binary} {size} {far_reps(size, reps)}{extra}")
        return ["sh", "-c", "\n".join(lines)]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        runs = sections(result)
        values: dict[str, float] = {}
        for name in ["mem", *sorted(params["levels_kib"])]:
            suffix = "" if name == "mem" else f"_{name}"
            ops = [*OPS, "writeread"] if name == "mem" else OPS
            picked = require(runs.get(name, {}), {f"{op}_mbps": f"{op}{suffix}_mbps" for op in ops}, result)
            values.update(picked)
        return values


class MaxAlloc(CompiledWorkload):
    """The largest single buffer one process gets, and whether it gets the one asked for.

    Not a speed: `max_mib` is a capacity, and the verdict is the guard's (`refused`: the whole
    limit_mib could not be had), so a side that cannot get it is "worse", never "slower", and the
    workload stays out of the speed-up geomean; sides that both get it are "same". The search
    costs one touched buffer a trial (maxalloc.c probes address space first)."""

    spec = WorkloadSpec(
        name="maxalloc",
        category="memory",
        description="largest buffer one process can map, touch and mlock, up to limit_mib (bounded well below "
                    "free memory), and whether it gets all of it",
        metrics=(Metric("max_mib", "MiB", "largest buffer that worked"),),
        headline="max_mib",
        reproduces="A: a 3 GB buffer works in 64-bit and fails in 32-bit",
        recorded=(Metric("refused", "refusals", "1 when a buffer of limit_mib could not be had, else 0"),),
        guard="refused",
    )
    kernel = "maxalloc"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        # Above the 4 GiB a 32-bit process can address, far below what the target has free.
        step = 64
        free = _free_mib(facts)
        bound = min(free // 2, 4608) if free is not None else 1024
        return {"limit_mib": max(step, bound // step * step), "step_mib": step}

    def prepare(self, ctx: Context) -> Prepared:
        free = _free_mib(ctx.facts)
        if free is not None and int(ctx.params["limit_mib"]) > free * 3 // 4:  # chosen at half of the baseline's
            raise WorkloadError(f"maxalloc: limit {ctx.params['limit_mib']} MiB is too close to the free memory "
                                f"of {ctx.config.display} ({free} MiB)", "lower limit_mib or free memory first")
        return super().prepare(ctx)

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return [prepared.files["binary"], str(int(params["limit_mib"])), str(int(params["step_mib"]))]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        values = require(parse_key_values(result.stdout), {"max_mib": "max_mib"}, result)
        return {**values, "refused": float(values["max_mib"] < int(params["limit_mib"]))}


def _free_mib(facts: TargetFacts) -> int | None:
    return None if facts.available_bytes is None else facts.available_bytes >> 20


MEMLAT_SIZES_KIB = tuple(4**i for i in range(10))  # 1 KiB .. 256 MiB
THP_MODES = {"nothp": "--no-thp", "thp": "--thp"}


def size_label(kib: int) -> str:
    return f"{kib >> 20}g" if kib >= 1 << 20 and kib % (1 << 20) == 0 else \
        f"{kib >> 10}m" if kib >= 1024 and kib % 1024 == 0 else f"{kib}k"


class MemLatency(CompiledWorkload):
    spec = WorkloadSpec(
        name="memlat",
        category="memory",
        description="random dependent-load latency, 1 KiB to 256 MiB, with and without transparent huge pages",
        metrics=tuple(
            [Metric("largest_nothp", "ns/load", "the largest buffer, huge pages off")]
            + [Metric(f"{mode}_{size_label(k)}", "ns/load", f"{size_label(k).upper()}iB buffer, "
                      f"huge pages {'on' if mode == 'thp' else 'off'}")
               for mode in THP_MODES for k in MEMLAT_SIZES_KIB]
        ),
        headline="largest_nothp",
        reproduces="D: pointer-heavy code pays per hop (cache and TLB misses)",
        timing=THREAD_CPU_TIMING,
    )
    TARGET_S = 0.05  # timed seconds per size; set-up of the biggest buffers costs more than this
    kernel = "memlat"
    quick = {"sizes_kib": [16, 1024, 65536], "modes": ["nothp"]}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        # one buffer (and 2 MiB to align it) per run of the kernel, on every side
        budget = process_budget_mib(facts)
        sizes = [k for k in MEMLAT_SIZES_KIB if budget is None or k + 2048 <= budget << 10]
        return {"sizes_kib": sizes or [MEMLAT_SIZES_KIB[0]], "modes": list(THP_MODES), "loads": {}}

    def prepare(self, ctx: Context) -> Prepared:
        bad = [k for k in ctx.params["sizes_kib"] if k not in MEMLAT_SIZES_KIB]
        if bad:
            raise WorkloadError(f"memlat: size {bad[0]} KiB is not one of the measured sizes",
                                "use powers of 4 from 1 to 262144 KiB")
        prepared = super().prepare(ctx)
        probe = ctx.target.run([prepared.files["binary"], "8192", "1000", "--thp"], timeout=120)
        huge = parse_key_values(probe.stdout).get("anon_huge_kib")
        prepared.facts["thp_effective"] = None if huge is None else huge > 0
        return prepared

    def _loads(self, params: dict[str, Any], kib: int) -> int:
        return int(params.get("loads", {}).get(str(kib), 1_000_000))

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        binary = q(prepared.files["binary"])
        lines = ["set -e"]
        for mode in params["modes"]:
            for kib in params["sizes_kib"]:
                lines.append(f"echo 'section {mode}_{size_label(kib)}'; "
                             f"{binary} {kib} {self._loads(params, kib)} {THP_MODES[mode]}")
        return ["sh", "-c", "\n".join(lines)]

    def calibrate(self, ctx: Context, prepared: Prepared) -> dict[str, Any]:
        """Loads per size so each timed loop lasts about TARGET_S; the same for every configuration."""
        params = ctx.params
        probe = {**params, "modes": ["nothp"], "loads": {}}
        result = ctx.target.run(self.argv(prepared, probe), timeout=1800)
        runs = sections(result)
        loads = {}
        for kib in params["sizes_kib"]:
            ns = runs.get(f"nothp_{size_label(kib)}", {}).get("ns_per_load")
            if result.exit_status != 0 or not ns or ns <= 0:
                raise WorkloadError(f"memlat failed while calibrating: {result.stderr_tail(1)[:200]}",
                                    "run the memlat kernel by hand")
            loads[str(kib)] = min(50_000_000, max(100_000, repeats_for(ns * 1e-9, self.TARGET_S)))
        return {**params, "loads": loads}

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        runs = sections(result)
        values = {}
        for mode in params["modes"]:
            for kib in params["sizes_kib"]:
                name = f"{mode}_{size_label(kib)}"
                values.update(require(runs.get(name, {}), {"ns_per_load": name}, result))
        if "nothp" in params["modes"]:
            values["largest_nothp"] = values[f"nothp_{size_label(max(params['sizes_kib']))}"]
        return values


WORKLOADS = (MemBandwidth, MaxAlloc, MemLatency)
