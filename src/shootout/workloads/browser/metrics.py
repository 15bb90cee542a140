"""From the driver's `name value` lines to metrics: pure functions, no browser needed.

Page work: a run is every app once through add, complete and delete. runs/min = 60 000 ms
/ the time of a run, per app and for the whole run: in the CPU time of the renderer's main
thread (the headline: on an idle machine close to the wall clock, on a busy one it does not
count the other processes) and in wall-clock time as Speedometer counts it, the sum of each
step's sync and async parts. The driver reports medians over a trial's iterations.
The CPU time is read over DevTools around one call that runs all of an app's iterations (or a
kernel's runs); what that path costs with no page work in the call (the harness: the call,
its result, reading the clock, all on the same main thread) is measured by the driver and
subtracted once per call, so a figure is the page's own work.
Engine: each kernel's runs per second of main-thread CPU time, and their geometric mean.
Start-up: launch and first-paint times, and the largest renderer peak RSS (VmHWM), in MiB.
Tabs: the median and 90th percentile of the switch latencies; the renderers' peaks summed.
"""

from __future__ import annotations

import math

import numpy as np

from shootout.base.errors import WorkloadError
from shootout.execution.process import ProcResult
from shootout.workloads.contract import require

STEPS = ("add", "complete", "delete")
PARTS = ("sync", "async")
KIB_PER_MIB = 1024


def _net(gross: float, harness: float, what: str) -> float:
    """The page's own CPU ms: the measured call's less its harness; a harness as costly as the
    work means the work was too small to tell apart from the measuring."""
    if harness >= 0.5 * gross:
        raise WorkloadError(f"browser: {what} took {gross:.3g} ms of CPU time and the measuring path alone "
                            f"{harness:.3g} ms", "raise todo_target_ms or kernel_target_ms")
    return gross - harness


def todo_metrics(values: dict[str, float], frameworks: list[str], result: ProcResult) -> dict[str, float]:
    keys = {f"todo_{f}_{s}_{p}_ms": (f, s, p) for f in frameworks for s in STEPS for p in PARTS}
    ms = require(values, {k: k for k in keys}, result)
    cpu = require(values, {f"todo_{f}_cpu_ms": f for f in frameworks}, result)
    calls = require(values, {f"todo_{f}_iterations": f for f in frameworks}, result)
    harness = require(values, {f"todo_{f}_harness_cpu_ms": f for f in frameworks}, result)
    cpu = {f: _net(cpu[f], harness[f] / calls[f], f"the {f} app") for f in frameworks}
    out = {f"todo_{f}": 60_000 / cpu[f] for f in frameworks}
    out["todo_runs_per_min"] = 60_000 / sum(cpu.values())
    out["todo_wall_runs_per_min"] = 60_000 / sum(ms.values())
    for s in STEPS:
        out[f"todo_{s}_ms"] = sum(ms[k] for k, (_, st, _) in keys.items() if st == s)
    for p in PARTS:
        out[f"todo_{p}_ms"] = sum(ms[k] for k, (_, _, pt) in keys.items() if pt == p)
    return out


def engine_metrics(values: dict[str, float], kernels: list[str], expect: dict[str, float],
                   result: ProcResult) -> dict[str, float]:
    """Runs per second of each kernel; a check that differs from the expected one is an error."""
    for name, check in expect.items():
        if name in kernels and values.get(f"engine_{name}_check") != check:
            raise WorkloadError(f"browser: the {name} kernel computed {values.get(f'engine_{name}_check')} here, "
                                f"{check} on the first configuration", "this side's JavaScript engine gave a different result")
    ms = require(values, {f"engine_{k}_cpu_ms": k for k in kernels}, result)
    runs = require(values, {f"engine_{k}_runs": k for k in kernels}, result)
    harness = require(values, {f"engine_{k}_harness_cpu_ms": k for k in kernels}, result)
    ms = {k: _net(ms[k], harness[k], f"the {k} kernel") for k in kernels}
    out = {f"engine_{k}": runs[k] / (ms[k] / 1000) for k in kernels}
    out["engine_geomean"] = math.exp(sum(math.log(v) for v in out.values()) / len(out))
    return out


def startup_metrics(values: dict[str, float], result: ProcResult) -> dict[str, float]:
    got = require(values, {"launch_ms": "launch_ms", "first_paint_ms": "first_paint_ms",
                           "renderer_peak_kb": "renderer_peak_rss"}, result)
    got["renderer_peak_rss"] /= KIB_PER_MIB
    return got


def tabs_metrics(values: dict[str, float], switches: int, result: ProcResult) -> dict[str, float]:
    got = require(values, {f"switch_{i}_ms": str(i) for i in range(switches)}, result)
    latencies = np.array(list(got.values()))
    out = require(values, {"tab_open_ms": "tab_open_ms", "renderers_peak_kb_sum": "renderers_rss"}, result)
    out["renderers_rss"] /= KIB_PER_MIB
    out["switch_ms"] = float(np.median(latencies))
    out["switch_p90_ms"] = float(np.percentile(latencies, 90))
    return out
