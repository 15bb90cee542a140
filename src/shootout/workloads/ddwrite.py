"""The Pi3Desk test: `dd ... bs=1M count=N conv=fsync` into the scratch, of zeros *and* of the
realistic corpus the compress workload uses; MB/s of each (MB = 10^6).

Zeros alone measure the compressor, not the link: on btrfs with compress=zlib the write-up's
1 GiB of zeros reached 123 MB/s over a 30 MB/s USB 2 link. The corpus (text, source, binary
records, incompressible data) is what a desktop writes, so it is the headline. Each file is
new in a fresh directory (btrfs marks a file NOCOMPRESS for good once a range did not
compress); on btrfs compsize reports what each file takes on disk before it is deleted.
"""

from __future__ import annotations

from typing import Any

from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.workloads import inputs
from shootout.workloads.contract import Context, Prepared, Tool
from shootout.workloads.diskscratch import (
    ScratchWorkload,
    compsize_command,
    compsize_metrics,
    compsize_values,
    fresh_dir_setup,
    open_disk,
)
from shootout.workloads.shell import SHELL, Step, q, step_seconds, timed_argv

SOURCES = ("zeros", "corpus")


class DdWrite(ScratchWorkload):
    spec = WorkloadSpec(
        name="dd-write",
        category="storage",
        description="dd conv=fsync of N MiB into the scratch: zeros and a realistic corpus",
        metrics=(
            Metric("corpus_mbps", "MB/s", "realistic data (the compress workload's corpus), written and fsynced"),
            Metric("zeros_mbps", "MB/s", "zeros, written and fsynced: on a compressing filesystem the compressor's speed"),
            *compsize_metrics("corpus_", "the corpus file"),
            *compsize_metrics("zeros_", "the zeros file"),
        ),
        headline="corpus_mbps",
        reproduces="E: Pi3Desk, 1 GiB of zeros at 123 MB/s over a 30 MB/s link on btrfs+zlib",
    )
    tools = (Tool("dd", "coreutils"), Tool("mktemp", "coreutils"), Tool("date", "coreutils"), Tool("bash", "bash"))
    quick = {"size_mib": 32}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"size_mib": 512}

    def prepare(self, ctx: Context) -> Prepared:
        size = int(ctx.params["size_mib"])
        scratch = open_disk(ctx, 2 * size << 20)  # both files exist until the trial ends
        corpus = inputs.corpus(size)
        files = {"zeros": "/dev/zero", "corpus": inputs.place(ctx.target, corpus)}
        steps = [Step(src, f'dd if={q(files[src])} of="$d/{src}" bs=1M count={size} conv=fsync 2>/dev/null')
                 for src in SOURCES]
        after = "\n".join(compsize_command(f'"$d/{src}"', src) for src in SOURCES) if scratch.btrfs else ""
        argv = timed_argv(steps, setup=fresh_dir_setup(scratch), after=after)
        return Prepared(files={**files, "script": ctx.put("trial.sh", argv[2])},
                        facts={**scratch.facts(), "input_sha256": corpus.sha256},
                        versions={"dd": tool_version(ctx.target, ["dd", "--version"])})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return [SHELL, prepared.files["script"]]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        seconds = step_seconds(result, SOURCES)
        size = int(params["size_mib"]) << 20
        values = {f"{src}_mbps": size / 1e6 / seconds[src] for src in SOURCES}
        for src in SOURCES:
            values.update(compsize_values(result.stdout, src, f"{src}_"))
        return values


WORKLOADS = (DdWrite,)
