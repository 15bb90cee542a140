"""fio in the configuration's disk scratch: sequential 1 MiB read and write, random 4 KiB read
and write at queue depth 1 and 32; MB/s, IOPS and p50/p99 completion latency from its JSON.

The job file is shootout's own (one job after another, `stonewall`), each trial in a fresh
directory: a ramp time, `end_fsync=1` (a write counts once it is on the device), `invalidate=1`
(the file's cached pages are dropped before each job), no preallocation (btrfs writes into
preallocated extents without compressing them). I/O is `direct=1`, except on a compressing
btrfs, where O_DIRECT silently falls back to buffered writes *without compression*: there the
buffered variant runs (with end_fsync), and the run's facts say so. Data is incompressible
unless `compress_pct` asks otherwise (fio's buffer_compress_percentage), since on a compressing
filesystem that decides the result.
"""

from __future__ import annotations

import json
from statistics import geometric_mean
from typing import Any

from shootout.base.errors import WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.places.target import Target
from shootout.workloads.contract import Context, Prepared, Tool
from shootout.workloads.diskscratch import (
    ScratchWorkload,
    compsize_command,
    compsize_metrics,
    compsize_values,
    fresh_dir_setup,
    open_disk,
)

# job name -> (rw, block size, queue depth)
JOBS: dict[str, tuple[str, str, int]] = {
    "seq_write": ("write", "1M", 1),
    "seq_read": ("read", "1M", 1),
    "randwrite_qd1": ("randwrite", "4k", 1),
    "randread_qd1": ("randread", "4k", 1),
    "randwrite_qd32": ("randwrite", "4k", 32),
    "randread_qd32": ("randread", "4k", 32),
}
PERCENTILES = {"p50": "50.000000", "p99": "99.000000"}
# The jobs' libaio engine needs io_setup(2), which qemu-user does not implement (ENOSYS): one 4 KiB
# read of /dev/zero through it tells, before any scratch is made, whether this target can run them.
ENGINE_PROBE = ("fio", "--name=engine-probe", "--ioengine=libaio", "--filename=/dev/zero", "--size=4k",
                "--rw=read", "--output-format=terse")


def _metrics() -> tuple[Metric, ...]:
    out = [Metric("geomean", "score", "geometric mean of the sequential MB/s and random IOPS"),
           *compsize_metrics("", "the trial's file")]
    for job, (rw, bs, depth) in JOBS.items():
        if job.startswith("seq"):
            out.append(Metric(f"{job}_mbps", "MB/s", f"sequential {rw}, {bs} blocks"))
            continue
        out.append(Metric(f"{job}_iops", "ops/s", f"random {rw.removeprefix('rand')} of {bs}, queue depth {depth}"))
        out += [Metric(f"{job}_{p}_us", "us", f"{p} completion latency, {job}") for p in PERCENTILES]
    return tuple(out)


def job_file(params: dict[str, Any], direct: bool) -> str:
    ms = lambda seconds: f"{int(float(seconds) * 1000)}ms"  # noqa: E731
    lines = ["[global]", "ioengine=libaio", f"direct={int(direct)}", "filename=data",
             f"size={int(params['size_mib'])}M", f"ramp_time={ms(params['ramp_s'])}",
             f"runtime={ms(params['runtime_s'])}", "time_based", "end_fsync=1", "invalidate=1",
             "refill_buffers=1", "fallocate=none", "group_reporting", "stonewall"]
    if int(params["compress_pct"]) > 0:
        lines.append(f"buffer_compress_percentage={int(params['compress_pct'])}")
    for job in params["jobs"]:
        rw, bs, depth = JOBS[job]
        lines += [f"[{job}]", f"rw={rw}", f"bs={bs}", f"iodepth={depth}"]
    return "\n".join(lines) + "\n"


def parse_json(stdout: str) -> dict[str, Any]:
    """fio's JSON document (fio may print notes before it)."""
    start = stdout.find("{")
    try:
        doc, _ = json.JSONDecoder().raw_decode(stdout[start:]) if start >= 0 else (None, 0)
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or "jobs" not in doc:
        raise WorkloadError("fio: no JSON report in its output", "run the job by hand with --output-format=json")
    return doc


def job_values(doc: dict[str, Any]) -> dict[str, float]:
    values: dict[str, float] = {}
    for job in doc["jobs"]:
        name = job["jobname"]
        if name not in JOBS:
            continue
        side = job["write" if "write" in JOBS[name][0] else "read"]
        if job.get("error") or not side.get("io_bytes"):
            raise WorkloadError(f"fio: job {name} did no I/O (error {job.get('error', 0)})", "run the job by hand")
        if name.startswith("seq"):
            values[f"{name}_mbps"] = side["bw_bytes"] / 1e6
            continue
        values[f"{name}_iops"] = float(side["iops"])
        percentiles = side.get("clat_ns", {}).get("percentile", {})
        for label, key in PERCENTILES.items():
            if key in percentiles:
                values[f"{name}_{label}_us"] = percentiles[key] / 1000
    return values


def check_engine(target: Target) -> None:
    """One line, before anything is made, when fio's libaio engine cannot start in the target."""
    probe = target.run(list(ENGINE_PROBE), timeout=60)
    if probe.exit_status != 0:  # fio writes its error line to stdout when that is not a terminal
        said = next((line for line in (probe.stderr + probe.stdout).splitlines() if line.startswith("fio:")),
                    f"exit {probe.exit_status}")
        raise WorkloadError(f"fio: its libaio engine cannot start in {target.config.display}: {said[:200]}",
                            "it needs io_setup(2), which qemu-user lacks: measure storage on the real machine, "
                            "not an emulated one")


class Fio(ScratchWorkload):
    spec = WorkloadSpec(
        name="fio",
        category="storage",
        description="fio in the scratch: sequential 1 MiB and random 4 KiB (QD1, QD32) read and write",
        metrics=_metrics(),
        headline="geomean",
        reproduces="D, E: disk I/O of an SD card, a USB SSD, a compressing btrfs",
    )
    tools = (Tool("fio", "fio"), Tool("mktemp", "coreutils"))
    quick = {"size_mib": 64, "runtime_s": 2, "ramp_s": 0.5}
    slow = "six jobs of 10 s after a 2 s ramp each"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        # With direct I/O no page cache holds the file; 1 GiB is beyond any disk's own cache
        # that would flatter a 4 KiB random read.
        return {"size_mib": 1024, "runtime_s": 10, "ramp_s": 2, "compress_pct": 0, "jobs": list(JOBS)}

    def prepare(self, ctx: Context) -> Prepared:
        params = ctx.params
        if unknown := [j for j in params["jobs"] if j not in JOBS]:
            raise WorkloadError(f"fio: unknown job {unknown[0]!r}", "use: " + ", ".join(JOBS))
        if not 0 <= int(params["compress_pct"]) <= 100:
            raise WorkloadError(f"fio: compress_pct {params['compress_pct']} is not a percentage", "use 0 to 100")
        check_engine(ctx.target)
        scratch = open_disk(ctx, int(params["size_mib"]) << 20)
        direct = not scratch.compresses
        jobs = ctx.put("jobs.fio", job_file(params, direct))
        lines = [fresh_dir_setup(scratch), f'fio --output-format=json --directory="$d" {jobs}']
        if scratch.btrfs:
            lines.append(compsize_command('"$d"', "data"))
        script = "\n".join(lines) + "\n"
        return Prepared(files={"script": ctx.put("trial.sh", script)},
                        facts={**scratch.facts(), "direct": direct,
                               "io": "direct" if direct else "buffered + end_fsync: O_DIRECT on a compressing "
                                                             "btrfs would bypass the compressor"},
                        versions={"fio": tool_version(ctx.target, ["fio", "--version"])})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return ["sh", "-e", prepared.files["script"]]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        values = job_values(parse_json(result.stdout))
        missing = [j for j in params["jobs"] if not any(k.startswith(j + "_") for k in values)]
        if missing:
            raise WorkloadError(f"fio: no result for {missing[0]}", "run the job by hand")
        values["geomean"] = geometric_mean(v for k, v in values.items() if k.endswith(("_mbps", "_iops")))
        values.update(compsize_values(result.stdout, "data", ""))
        return values


WORKLOADS = (Fio,)
