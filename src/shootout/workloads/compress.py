"""General-purpose compressors on a fixed mixed corpus: zstd -3/-19, xz -6, gzip -6.

The corpus (inputs.corpus: text, C-like source, binary records, incompressible data) is the
same bytes on every machine. Every tool runs single-threaded, tmpfs to tmpfs. Rates are MB/s
of uncompressed bytes (MB = 10^6); fast codecs repeat their step inside the trial so each
timed step lasts at least MIN_TRIAL_S, with the repeat counts fixed on the first
configuration.
"""

from __future__ import annotations

from statistics import geometric_mean
from typing import Any

from shootout.base.errors import WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.workloads import inputs
from shootout.workloads.contract import Context, Prepared, Tool, Workload, repeats_for
from shootout.workloads.shell import Step, parse_steps, q, step_seconds, timed_argv

# codec -> (compress command, decompress command, file suffix); {i} input, {o} output
CODECS: dict[str, tuple[str, str, str]] = {
    "zstd3": ("zstd -q -3 -T1 -c {i} > {o}", "zstd -q -d -c {i} > {o}", "zst"),
    "zstd19": ("zstd -q -19 -T1 -c {i} > {o}", "zstd -q -d -c {i} > {o}", "zst"),
    "xz6": ("xz -6 -T1 -c {i} > {o}", "xz -d -c {i} > {o}", "xz"),
    "gzip6": ("gzip -6 -c {i} > {o}", "gzip -d -c {i} > {o}", "gz"),
}
VERSIONED = ("zstd", "xz", "gzip")  # each answers --version


def _metrics() -> tuple[Metric, ...]:
    out = [Metric("geomean_mbps", "MB/s", "geometric mean of every compress and decompress rate")]
    for codec in CODECS:
        out += [Metric(f"{codec}_compress_mbps", "MB/s", f"{codec} compression, uncompressed MB per second"),
                Metric(f"{codec}_decompress_mbps", "MB/s", f"{codec} decompression, uncompressed MB per second"),
                Metric(f"{codec}_ratio", "x", f"{codec} uncompressed / compressed size")]
    return tuple(out)


class Compress(Workload):
    spec = WorkloadSpec(
        name="compress",
        category="compress",
        description="zstd -3, zstd -19, xz -6, gzip -6 compress and decompress a fixed mixed corpus",
        metrics=_metrics(),
        headline="geomean_mbps",
        reproduces="E: compression cost on small machines (btrfs compress, zswap)",
    )
    tools = (Tool("zstd", "zstd"), Tool("xz", "xz-utils"), Tool("gzip", "gzip"), Tool("cmp", "diffutils"),
             Tool("date", "coreutils"), Tool("bash", "bash"))
    quick = {"corpus_mib": 2}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"corpus_mib": 16, "codecs": list(CODECS), "repeat": {}}

    def prepare(self, ctx: Context) -> Prepared:
        unknown = [c for c in ctx.params["codecs"] if c not in CODECS]
        if unknown:
            raise WorkloadError(f"compress: unknown codec {unknown[0]!r}", "use: " + ", ".join(CODECS))
        corpus = inputs.corpus(int(ctx.params["corpus_mib"]))
        files = {"corpus": inputs.place(ctx.target, corpus), "out": f"{ctx.workdir()}/out"}
        return Prepared(files=files, facts={"input_sha256": corpus.sha256, "input_bytes": corpus.size},
                        versions={tool: tool_version(ctx.target, [tool, "--version"]) for tool in VERSIONED})

    def _repeat(self, params: dict[str, Any], step: str) -> int:
        return int(params.get("repeat", {}).get(step, 1))

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        src, out = prepared.files["corpus"], prepared.files["out"]
        steps, after = [], []
        for codec in params["codecs"]:
            comp, decomp, suffix = CODECS[codec]
            packed, unpacked = q(f"{out}.{codec}.{suffix}"), q(f"{out}.{codec}.dec")
            steps.append(Step(f"{codec}_compress", comp.format(i=q(src), o=packed),
                              self._repeat(params, f"{codec}_compress")))
            steps.append(Step(f"{codec}_decompress", decomp.format(i=packed, o=unpacked),
                              self._repeat(params, f"{codec}_decompress")))
            after.append(f"echo \"packed {codec} $(wc -c < {packed})\"")
            after.append(f"if cmp -s {q(src)} {unpacked}; then echo 'roundtrip {codec} 1'; "
                         f"else echo 'roundtrip {codec} 0'; fi; rm -f {packed} {unpacked}")
        return timed_argv(steps, after="\n".join(after))

    def calibrate(self, ctx: Context, prepared: Prepared) -> dict[str, Any]:
        """Repeat counts so every timed step lasts at least MIN_TRIAL_S."""
        params = ctx.params
        result = ctx.target.run(self.argv(prepared, {**params, "repeat": {}}), timeout=3600)
        seconds = parse_steps(result.stdout)
        repeat = {}
        for codec in params["codecs"]:
            for part in ("compress", "decompress"):
                step = f"{codec}_{part}"
                if result.exit_status != 0 or seconds.get(step, 0) <= 0:
                    raise WorkloadError(f"compress: {step} failed while calibrating: {result.stderr_tail(1)[:200]}",
                                        "run the codec by hand on a file")
                repeat[step] = repeats_for(seconds[step])
        return {**params, "repeat": repeat}

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        size = int(params["corpus_mib"]) * inputs.CHUNK
        names = [f"{c}_{p}" for c in params["codecs"] for p in ("compress", "decompress")]
        seconds = step_seconds(result, names)
        lines = result.stdout.splitlines()
        values: dict[str, float] = {}
        for codec in params["codecs"]:
            if f"roundtrip {codec} 1" not in lines:
                raise WorkloadError(f"compress: {codec} did not give back the corpus", "check the tool in this userspace")
            packed = [int(line.split()[2]) for line in lines if line.startswith(f"packed {codec} ")]
            if not packed or packed[0] <= 0:
                raise WorkloadError(f"compress: no size for the {codec} output", "check the tool in this userspace")
            values[f"{codec}_ratio"] = size / packed[0]
        for name in names:
            values[f"{name}_mbps"] = size * self._repeat(params, name) / 1e6 / seconds[name]
        values["geomean_mbps"] = geometric_mean(values[f"{n}_mbps"] for n in names)
        return values


WORKLOADS = (Compress,)
