"""`browser` and `browser-tabs`: the target's own Chromium, driven over the DevTools protocol.

One trial is one process tree inside the target: the target's node runs driver.mjs, which
launches the target's /usr/lib/chromium/chromium (Debian's package, installed in that
userspace) over a pipe with puppeteer-core, with the flags below and a fresh profile on the
work directory's tmpfs, and prints what it measured. Driving from inside keeps the trial
the same shape on any target (chroot today, a VM or an SSH machine tomorrow): nothing
crosses the target boundary while it runs, and the runner's rusage and timeout cover the
browser too. The wrapper /usr/bin/chromium is not used: it adds flags that depend on the
machine (e.g. on the size of /dev/shm), and the flags must be the same on every side.

Page work and the engine kernels are timed by the CPU time of the page's renderer main
thread (Chromium's own ThreadTime), where their JavaScript, style and layout run: on an
idle machine that is close to the wall clock, and a busy machine's other processes do not
count. The wall-clock figures (Speedometer's own definition) are reported beside them;
start-up, first paint and tab switches are wall-clock latencies.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from shootout.base.errors import WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.workloads import inputs
from shootout.workloads.browser import assets
from shootout.workloads.browser.metrics import (
    engine_metrics,
    startup_metrics,
    tabs_metrics,
    todo_metrics,
)
from shootout.workloads.browser.pages import FRAMEWORKS
from shootout.workloads.contract import (
    Context,
    Prepared,
    Tool,
    Workload,
    parse_key_values,
)

CHROMIUM = "/usr/lib/chromium/chromium"
# The same on every side. --no-sandbox: trials run as root, where Chromium refuses its
# sandbox; the background-networking flags keep it off the network (closed here anyway).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-default-apps", "--disable-extensions", "--disable-breakpad",
         "--disable-domain-reliability", "--disable-field-trial-config", "--metrics-recording-only",
         "--mute-audio", "--password-store=basic", "--lang=en-US", "--window-size=1280,800",
         "--force-device-scale-factor=1",
         "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication")
KERNELS = ("splay", "raytrace", "regexp", "json", "physics")
SETS = ("startup", "todo", "engine")
# what a kernel's time is mostly spent in, where that is not the page's own JavaScript
KERNEL_NOTES = {"json": ": V8's C++ JSON.stringify and JSON.parse of a document (4000 records by default) made once, outside the "
                        "timing; doubles are formatted with 64-bit integer arithmetic, costlier on a 32-bit CPU"}


class _Chromium(Workload):
    """What both browser workloads share: the tools, the files, the facts, the plan."""

    tools = (Tool("node", "nodejs"), Tool("setpriv", "util-linux"), Tool(CHROMIUM, "chromium"))
    preinstalled = False  # a browser is big: a userspace gets it on first use, at one version on every side

    def prepare(self, ctx: Context) -> Prepared:
        target, params = ctx.target, ctx.params
        self.check_params(params)
        dest = ctx.workdir()
        driver = assets.driver()
        target.put_tree(driver / "node_modules", f"{dest}/driver/node_modules")
        script = (assets.DRIVER / "driver.mjs").read_bytes()
        target.put(script, f"{dest}/driver/driver.mjs")
        site = assets.site()
        target.put_tree(site, f"{dest}/site")
        heavy = assets.heavy(int(params["heavy_sections"]))
        site_sha = assets.tree_sha256(site)
        facts = {
            "chromium_flags": list(FLAGS),
            "npm_versions": {**_pins(assets.DRIVER), **_pins(assets.APPS)},
            "driver_sha256": hashlib.sha256(script + (driver / "package-lock.json").read_bytes()).hexdigest(),
            "input_sha256": hashlib.sha256(f"{site_sha} {heavy.sha256}".encode()).hexdigest(),
            "site_sha256": site_sha,
            "heavy_sha256": heavy.sha256,
            "heavy_bytes": heavy.size,
        }
        versions = {"chromium": tool_version(target, [CHROMIUM, "--version"], r"Chromium"),
                    "node": tool_version(target, ["node", "--version"])}
        files = {"driver": f"{dest}/driver/driver.mjs", "site": f"{dest}/site",
                 "heavy": inputs.place(target, heavy), "scratch": dest}
        return Prepared(files=files, facts=facts, versions=versions)

    def check_params(self, params: dict[str, Any]) -> None:
        if int(params["heavy_sections"]) < 1:
            raise WorkloadError("browser: heavy_sections must be at least 1", "set a positive page size")

    def plan(self, prepared: Prepared, params: dict[str, Any]) -> dict[str, Any]:
        f = prepared.files
        # the driver stops itself a little before the runner would kill it, to say why
        return {"chromium": CHROMIUM, "flags": list(FLAGS), "scratch": f["scratch"], "site": f["site"],
                "heavy": f["heavy"], "timeout_ms": int(0.9 * 1000 * float(params["timeout_s"]))}

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return ["node", prepared.files["driver"], json.dumps(self.plan(prepared, params), separators=(",", ":"))]

    def run_once(self, ctx: Context, prepared: Prepared, params: dict[str, Any]) -> dict[str, float]:
        """One trial outside the runner (calibration): its values, or the driver's error."""
        result = ctx.target.run(self.argv(prepared, params), timeout=float(params["timeout_s"])).check(
            WorkloadError, self.spec.name, "run the driver by hand in the target: node driver.mjs PLAN", width=300)
        return parse_key_values(result.stdout)


def _pins(project) -> dict[str, str]:
    return json.loads((project / "package.json").read_text())["dependencies"]


class Browser(_Chromium):
    spec = WorkloadSpec(
        name="browser",
        category="browser",
        description="Chromium from the userspace: to-do apps in React, Preact, Vue, Svelte and plain DOM; "
                    "JavaScript engine kernels; start-up and memory of a heavy page",
        metrics=(Metric("todo_runs_per_min", "runs/min", "page work: the five to-do apps, each adding, completing "
                        "and deleting items (Speedometer's idea), in the renderer main thread's CPU time"),
                 *(Metric(f"todo_{f}", "runs/min", f"page work in the {f} app alone (CPU time)") for f in FRAMEWORKS),
                 Metric("todo_wall_runs_per_min", "runs/min", "page work in wall-clock time, as Speedometer counts it"),
                 *(Metric(f"todo_{s}_ms", "ms", f"page work: the {s} step, all apps (sync + async, wall clock)")
                   for s in ("add", "complete", "delete")),
                 Metric("todo_sync_ms", "ms", "page work: event handlers, all apps and steps (wall clock)"),
                 Metric("todo_async_ms", "ms", "page work: deferred rendering and layout, all apps and steps (wall clock)"),
                 Metric("engine_geomean", "runs/s", "JavaScript engine: geometric mean of the five kernels "
                        "(Octane's and JetStream's idea), per second of main-thread CPU time"),
                 *(Metric(f"engine_{k}", "runs/s", f"JavaScript engine: the {k} kernel (CPU time){KERNEL_NOTES.get(k, '')}")
                   for k in KERNELS),
                 Metric("launch_ms", "ms", "start-up: launch until the browser answers with its first tab"),
                 Metric("first_paint_ms", "ms", "start-up: navigation to first contentful paint of the heavy page"),
                 Metric("renderer_peak_rss", "MiB used", "memory: peak RSS of the heavy page's renderer")),
        headline="todo_runs_per_min",
        reproduces="D: browser benchmarks in Chromium (Speedometer, Octane, JetStream) 32-bit vs 64-bit",
    )

    quick = {"todo_target_ms": 500, "kernel_target_ms": 50, "heavy_sections": 40,
             "kernels": {"splay": 5000, "raytrace": 100, "regexp": 1000, "json": 1000, "physics": 1000}}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"sets": list(SETS), "frameworks": list(FRAMEWORKS), "items": 100, "warmup": 3,
                "todo_target_ms": 2000, "iterations": 0,
                "kernels": {"splay": 20000, "raytrace": 200, "regexp": 4000, "json": 4000, "physics": 3000},
                "kernel_target_ms": 100, "samples": 5, "runs": {}, "expect": {},
                "heavy_sections": 300, "timeout_s": 900}

    def check_params(self, params: dict[str, Any]) -> None:
        super().check_params(params)
        for key, known in (("sets", SETS), ("frameworks", FRAMEWORKS), ("kernels", KERNELS)):
            unknown = [v for v in params[key] if v not in known]
            if unknown or not params[key]:
                raise WorkloadError(f"browser: {key} {unknown[0] if unknown else 'is empty'}",
                                    f"choose from: {', '.join(known)}")

    def plan(self, prepared: Prepared, params: dict[str, Any]) -> dict[str, Any]:
        runs = params.get("runs", {})
        return {**super().plan(prepared, params), "sets": params["sets"],
                "todo": {"frameworks": params["frameworks"], "items": int(params["items"]),
                         "iterations": max(1, int(params["iterations"])), "warmup": int(params["warmup"])},
                "engine": {"samples": int(params["samples"]),
                           "kernels": {k: [max(1, int(runs.get(k, 1))), int(size)] for k, size in params["kernels"].items()}}}

    def calibrate(self, ctx: Context, prepared: Prepared) -> dict[str, Any]:
        """Iterations of the apps and runs of each kernel from one trial at one of each; the
        kernels' checks recorded, so every other side must compute the same."""
        params = dict(ctx.params)
        values = self.run_once(ctx, prepared, {**params, "iterations": 1, "samples": 1, "runs": {}})
        if "todo" in params["sets"]:
            per_run = sum(values[f"todo_{f}_cpu_ms"] for f in params["frameworks"])
            params["iterations"] = max(1, math.ceil(params["todo_target_ms"] / max(1e-3, per_run)))
        if "engine" in params["sets"]:
            params["runs"] = {k: max(1, math.ceil(params["kernel_target_ms"] / max(1e-3, values[f"engine_{k}_cpu_ms"])))
                              for k in params["kernels"]}
            params["expect"] = {k: values[f"engine_{k}_check"] for k in params["kernels"]}
        return params

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        values = parse_key_values(result.stdout)
        out: dict[str, float] = {}
        if "startup" in params["sets"]:
            out.update(startup_metrics(values, result))
        if "todo" in params["sets"]:
            out.update(todo_metrics(values, params["frameworks"], result))
        if "engine" in params["sets"]:
            out.update(engine_metrics(values, list(params["kernels"]), params.get("expect", {}), result))
        return out


class BrowserTabs(_Chromium):
    spec = WorkloadSpec(
        name="browser-tabs",
        category="browser",
        description="Chromium from the userspace: N tabs of the heavy page in one browser, switched between",
        metrics=(Metric("switch_ms", "ms", "median latency of bringing a tab to the front, scrolling it and "
                        "drawing two frames"),
                 Metric("switch_p90_ms", "ms", "90th percentile of the switch latency"),
                 Metric("tab_open_ms", "ms", "mean time to open and load one tab of the heavy page"),
                 Metric("renderers_rss", "MiB used", "the renderers' peak RSS, summed")),
        headline="switch_ms",
        reproduces="E: a browser that survives a dozen tabs (Pi3Desk); D: browser memory 32-bit vs 64-bit",
    )

    quick = {"tabs": 4, "switches": 16, "heavy_sections": 40}
    slow = "a dozen tabs of the heavy page: 15-18 s a trial on 2 cores"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"tabs": 12, "switches": 48, "seed": 1, "heavy_sections": 300, "timeout_s": 900}

    def check_params(self, params: dict[str, Any]) -> None:
        super().check_params(params)
        if int(params["tabs"]) < 2 or int(params["switches"]) < 1:
            raise WorkloadError("browser-tabs: needs at least 2 tabs and 1 switch", "raise tabs or switches")

    def plan(self, prepared: Prepared, params: dict[str, Any]) -> dict[str, Any]:
        return {**super().plan(prepared, params), "sets": ["tabs"],
                "tabs": {"count": int(params["tabs"]), "switches": int(params["switches"]), "seed": int(params["seed"])}}

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        return tabs_metrics(parse_key_values(result.stdout), int(params["switches"]), result)
