"""CPU workloads: native kernels for integer work and pointer chasing."""

from __future__ import annotations

from typing import Any

from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.workloads.kernel import THREAD_CPU_TIMING, NativeKernel


class IntMix(NativeKernel):
    spec = WorkloadSpec(
        name="intmix",
        category="cpu",
        description="Dhrystone-style integer mix: string copy/compare, record assignment, calls, arithmetic",
        metrics=(Metric("iterations", "iter/s", "loop iterations per second"),),
        headline="iterations",
        reproduces="A: Dhrystone on the Pi 4, 32-bit vs 64-bit",
        timing=THREAD_CPU_TIMING,
    )
    suites = ("native",)
    kernel = "intmix"
    outputs = {"iter_per_s": "iterations"}
    calibrate_param = "iterations"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"iterations": 1_000_000}

    def args(self, params: dict[str, Any]) -> list[str]:
        return [str(params["iterations"])]


class PtrTree(NativeKernel):
    spec = WorkloadSpec(
        name="ptrtree",
        category="cpu",
        description="binary search tree of millions of malloc'd nodes, random lookups (pointer-heavy)",
        metrics=(Metric("lookups", "lookups/s", "random key lookups per second"),),
        headline="lookups",
        reproduces="D: pointer-heavy work favours 32-bit (12-byte vs 24-byte nodes)",
        timing=THREAD_CPU_TIMING,
    )
    suites = ("native",)
    kernel = "ptrtree"
    outputs = {"lookups_per_s": "lookups"}
    calibrate_param = "lookups"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"nodes": 2_000_000, "lookups": 500_000}

    def args(self, params: dict[str, Any]) -> list[str]:
        return [str(params["nodes"]), str(params["lookups"])]


WORKLOADS = (IntMix, PtrTree)
