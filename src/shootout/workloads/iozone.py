"""iozone's matrix as the 32-vs-64-bit and Pi3Desk write-ups ran it, in the configuration's scratch:

    iozone -e -I -a -s 100M -r 4k -r 512k -r 16M -i 0 -i 1 -i 2

six columns (write, rewrite, read, reread, random read, random write) x three record sizes,
in iozone's own unit (KiB/s; it prints "kB"), so a user can set their figures beside the
articles' tables. -e counts the fsync in the write time; -I asks for O_DIRECT, except on a
compressing btrfs where O_DIRECT would bypass the compressor: there the buffered variant runs
(still -e) and the facts say so. Debian ships iozone in iozone3, in the non-free component.
"""

from __future__ import annotations

import re
from statistics import geometric_mean
from typing import Any

from shootout.base.errors import WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.workloads.contract import Context, Prepared, Tool, Workload
from shootout.workloads.diskscratch import fresh_dir_setup, open_disk

COLUMNS = ("write", "rewrite", "read", "reread", "randread", "randwrite")
RECORDS = {"4k": 4, "512k": 512, "16m": 16384}  # name -> iozone's reclen column (KiB)
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)((?:\s+\d+){6})\s*$")


def _metrics() -> tuple[Metric, ...]:
    out = [Metric("geomean", "KiB/s", "geometric mean of the six columns at the three record sizes")]
    out += [Metric(f"{col}_{rec}", "KiB/s", f"iozone {col}, {rec} records") for rec in RECORDS for col in COLUMNS]
    return tuple(out)


def parse_table(stdout: str) -> dict[str, float]:
    """The rows of iozone's -a table: {'write_4k': KiB/s, ...} for the record sizes it ran."""
    by_reclen = {v: k for k, v in RECORDS.items()}
    values: dict[str, float] = {}
    for line in stdout.splitlines():
        if (m := _ROW.match(line)) and int(m.group(2)) in by_reclen:
            rec = by_reclen[int(m.group(2))]
            for col, number in zip(COLUMNS, m.group(3).split(), strict=True):
                values[f"{col}_{rec}"] = float(number)
    return values


class Iozone(Workload):
    spec = WorkloadSpec(
        name="iozone",
        category="storage",
        description="iozone -e -I -a, 4k/512k/16M records: write, rewrite, read, reread, random read and write",
        metrics=_metrics(),
        headline="geomean",
        reproduces="D, E: iozone on an SD card and a USB SSD (Pi 3B+, Pi 4)",
    )
    tools = (Tool("iozone", "iozone3"), Tool("mktemp", "coreutils"))
    components = ("non-free",)
    preinstalled = False  # non-free: only a userspace that runs it gets it
    quick = {"size_mib": 16}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"size_mib": 100, "records": list(RECORDS)}

    def prepare(self, ctx: Context) -> Prepared:
        size, records = int(ctx.params["size_mib"]), list(ctx.params["records"])
        if unknown := [r for r in records if r not in RECORDS]:
            raise WorkloadError(f"iozone: unknown record size {unknown[0]!r}", "use: " + ", ".join(RECORDS))
        if size << 10 < max(RECORDS[r] for r in records):
            raise WorkloadError(f"iozone: size_mib {size} is smaller than the largest record", "use size_mib >= 16")
        scratch = open_disk(ctx, size << 20)
        direct = not scratch.compresses
        flags = ["-e", *(["-I"] if direct else []), "-a", "-s", f"{size}m", *(a for r in records for a in ("-r", r)),
                 "-i", "0", "-i", "1", "-i", "2"]
        script = f'{fresh_dir_setup(scratch)}\ncd "$d"\niozone {" ".join(flags)} -f "$d/iozone.tmp"\n'
        return Prepared(files={"script": ctx.put("trial.sh", script)},
                        facts={**scratch.facts(), "direct": direct, "flags": " ".join(flags)},
                        versions={"iozone": tool_version(ctx.target, ["iozone", "-v"], r"Version \$Revision")})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return ["sh", "-e", prepared.files["script"]]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        values = parse_table(result.stdout)
        wanted = [f"{col}_{rec}" for rec in params["records"] for col in COLUMNS]
        if missing := [w for w in wanted if w not in values]:
            raise WorkloadError(f"iozone: no {missing[0]} in its table (last line: {result.last_line()!r})",
                                "run iozone by hand with the same flags")
        values["geomean"] = geometric_mean(values[w] for w in wanted)
        return {k: v for k, v in values.items() if k in wanted or k == "geomean"}


WORKLOADS = (Iozone,)
