"""`js`: real JavaScript tools from npm, at pinned versions, under each userspace's own node.

The packages (a parser, a minifier, a formatter and the TypeScript compiler, plus every
transitive dependency, pinned) are installed once with npm on the host into the cache and
put into each target, where that side's `node` runs them on fixed generated inputs
(jssource). Only pure-JavaScript packages are used, so the same files run on i386, armhf,
amd64 and arm64. Each tool runs a fixed number of times (chosen on the first configuration
so it takes at least MIN_TRIAL_S); module loading is outside the timing. JavaScript in a
real browser is the `browser` workload (workloads/browser).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from statistics import geometric_mean
from typing import Any

from shootout.base.errors import WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.base.paths import cache_dir
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.workloads.contract import (
    Context,
    Prepared,
    Tool,
    Workload,
    parse_key_values,
    repeats_for,
    require,
)
from shootout.workloads.jssource import module_source
from shootout.workloads.npm import check_versions, npm_install

PACKAGES = {"acorn": "8.14.0", "terser": "5.36.0", "prettier": "3.3.3", "typescript": "5.6.3"}
# terser's dependency tree, pinned too so every machine runs the same code
OVERRIDES = {"@jridgewell/source-map": "0.3.11", "@jridgewell/gen-mapping": "0.3.13",
             "@jridgewell/sourcemap-codec": "1.6.0", "@jridgewell/trace-mapping": "0.3.31",
             "@jridgewell/resolve-uri": "3.1.3", "commander": "2.20.3", "source-map-support": "0.5.21",
             "buffer-from": "1.1.2", "source-map": "0.6.1"}
TASKS = {"acorn_parse": "acorn: parse the module to an AST",
         "terser_minify": "terser: minify the module",
         "prettier_format": "prettier: format the module",
         "tsc_check_emit": "TypeScript: type-check and emit the module"}

BENCH = r"""// shootout js workload: run pinned npm tools on fixed inputs; prints `name value` lines.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const [modules, jsPath, tsPath, ...plan] = process.argv.slice(2);
const require = createRequire(modules + "/");
const js = readFileSync(jsPath, "utf8");

// loaded before any timing: start-up is not what is measured
const packages = { acorn_parse: "acorn", terser_minify: "terser", prettier_format: "prettier", tsc_check_emit: "typescript" };
const mod = {};
for (let i = 0; i < plan.length; i += 2) mod[plan[i]] = require(packages[plan[i]]);

const tasks = {
  acorn_parse: async () => mod.acorn_parse.parse(js, { ecmaVersion: 2022, sourceType: "module" }).body.length,
  terser_minify: async () => (await mod.terser_minify.minify(js, { module: true })).code.length,
  prettier_format: async () => (await mod.prettier_format.format(js, { parser: "babel" })).length,
  tsc_check_emit: async () => {
    const ts = mod.tsc_check_emit;
    const options = { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.ES2020, lib: ["lib.es2020.d.ts"], types: [], strict: true, skipLibCheck: true };
    const host = ts.createCompilerHost(options);
    let size = 0;
    host.writeFile = (_name, text) => { size += text.length; };
    const program = ts.createProgram([tsPath], options, host);
    const errors = ts.getPreEmitDiagnostics(program);
    if (errors.length) {
      const first = ts.flattenDiagnosticMessageText(errors[0].messageText, " ");
      throw new Error(`tsc: ${errors.length} type errors, first: ${first}`);
    }
    program.emit();
    return size;
  },
};

for (let i = 0; i < plan.length; i += 2) {
  const name = plan[i];
  const runs = Number(plan[i + 1]);
  if (!(name in tasks) || !(runs > 0)) throw new Error(`bad plan entry ${name} ${plan[i + 1]}`);
  let out = 0;
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < runs; k++) out = await tasks[name]();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`${name}_seconds ${seconds}`);
  console.log(`${name}_runs_per_s ${runs / seconds}`);
  console.log(`${name}_out ${out}`);
}
"""


def node_modules() -> Path:
    """The pinned packages installed once with the host's npm; the directory holding node_modules."""
    manifest = {"name": "shootout-js", "version": "1.0.0", "private": True,
                "dependencies": PACKAGES, "overrides": OVERRIDES}
    text = json.dumps(manifest, indent=1, sort_keys=True)
    root = cache_dir() / "js" / hashlib.sha256(text.encode()).hexdigest()[:12]
    if (root / ".complete").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / "package.json").write_text(text)
    npm_install(root, "install", "the js tools")
    check_versions(root, PACKAGES, "the js tools")
    (root / ".complete").write_text("ok")
    return root


class JavaScript(Workload):
    spec = WorkloadSpec(
        name="js",
        category="js",
        description="acorn, terser, prettier and tsc (pinned npm versions) on a generated module, under node",
        metrics=(Metric("geomean", "runs/s", "geometric mean of the four tools' rates"),
                 *(Metric(name, "runs/s", text) for name, text in TASKS.items())),
        headline="geomean",
        reproduces="D: browser/JavaScript benchmarks (Speedometer, JetStream) 32-bit vs 64-bit",
    )
    tools = (Tool("node", "nodejs"),)
    quick = {"units": 40}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"units": 100, "tasks": list(TASKS), "runs": {}, "expect": {}}

    def prepare(self, ctx: Context) -> Prepared:
        target, params = ctx.target, ctx.params
        unknown = [t for t in params["tasks"] if t not in TASKS]
        if unknown:
            raise WorkloadError(f"js: unknown task {unknown[0]!r}", "use: " + ", ".join(TASKS))
        modules = node_modules()
        dest = ctx.workdir()
        target.put_tree(modules / "node_modules", f"{dest}/node_modules")
        target.put(BENCH.encode(), f"{dest}/bench.mjs")
        units = int(params["units"])
        sources = {"js": module_source(units, typed=False), "ts": module_source(units, typed=True)}
        for ext, text in sources.items():
            target.put(text.encode(), f"{dest}/input.{ext}")
        digest = hashlib.sha256(sources["js"].encode() + b"\0" + sources["ts"].encode()).hexdigest()
        lock = modules / "package-lock.json"
        facts = {"packages": PACKAGES,
                 "lock_sha256": hashlib.sha256(lock.read_bytes()).hexdigest() if lock.exists() else None,
                 "input_sha256": digest, "bench_sha256": hashlib.sha256(BENCH.encode()).hexdigest()}
        files = {"dir": dest, "bench": f"{dest}/bench.mjs", "js": f"{dest}/input.js", "ts": f"{dest}/input.ts"}
        return Prepared(files=files, facts=facts, versions={"node": tool_version(target, ["node", "--version"])})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        plan = []
        for task in params["tasks"]:
            plan += [task, str(int(params.get("runs", {}).get(task, 1)))]
        f = prepared.files
        return ["node", f["bench"], f["dir"], f["js"], f["ts"], *plan]

    def calibrate(self, ctx: Context, prepared: Prepared) -> dict[str, Any]:
        """Runs per tool so each takes at least MIN_TRIAL_S; outputs recorded to check every side."""
        params = ctx.params
        result = ctx.target.run(self.argv(prepared, {**params, "runs": {}}), timeout=1800)
        values = parse_key_values(result.stdout)
        runs, expect = {}, {}
        for task in params["tasks"]:
            seconds = values.get(f"{task}_seconds", 0.0)
            if result.exit_status != 0 or seconds <= 0:
                raise WorkloadError(f"js: {task} failed while calibrating: {result.stderr_tail(1)[:200]}",
                                    "run node bench.mjs by hand in the target")
            runs[task] = repeats_for(seconds)
            expect[task] = values[f"{task}_out"]
        return {**params, "runs": runs, "expect": expect}

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        values = parse_key_values(result.stdout)
        for task, size in params.get("expect", {}).items():
            if values.get(f"{task}_out") != size:
                raise WorkloadError(f"js: {task} gave different output here ({values.get(task + '_out')} "
                                    f"characters, {size} on the first configuration)",
                                    "the tools or node behave differently on this side")
        picked = require(values, {f"{t}_runs_per_s": t for t in params["tasks"]}, result)
        picked["geomean"] = geometric_mean(picked.values())
        return picked


WORKLOADS = (JavaScript,)
