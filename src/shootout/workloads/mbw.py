"""`mbw`: Debian's mbw, the memory bandwidth program write-up D ran, in each side's userspace.

mbw copies one array into another of `size_mib` MiB, `runs` times with each of its three
methods, and prints each method's average in MiB/s: MEMCPY (the C library's memcpy of the
whole array), DUMB (a compiled `b[i] = a[i]` loop over longs: 8 bytes a step in 64-bit code,
4 in 32-bit) and MCBLOCK (memcpy in 256 KiB blocks). The headline is the geometric mean of the
three, as D charted them side by side; each method is a sub-metric. The membw workload is
shootout's own, compiled from its source on each side (the write-up A's mlock()ed buffer);
this one is the program D named, as Debian builds it for each architecture.
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

METHODS = {"MEMCPY": "memcpy", "DUMB": "dumb", "MCBLOCK": "mcblock"}
_AVG = re.compile(r"^AVG\s+Method:\s+(\w+)\s.*Copy:\s+([\d.]+)\s+MiB/s\s*$")


def parse_mbw(stdout: str) -> dict[str, float]:
    """{'memcpy_mibs': …, 'dumb_mibs': …, 'mcblock_mibs': …} from mbw's AVG lines."""
    out = {}
    for line in stdout.splitlines():
        if (m := _AVG.match(line.strip())) and m.group(1) in METHODS:
            out[f"{METHODS[m.group(1)]}_mibs"] = float(m.group(2))
    return out


class Mbw(Workload):
    spec = WorkloadSpec(
        name="mbw",
        category="memory",
        description="Debian's mbw: an array of size_mib MiB copied by memcpy, by a b[i]=a[i] loop and by "
                    "memcpy in blocks; geometric mean of the three averages",
        metrics=(Metric("geomean_mibs", "MiB/s", "geometric mean of mbw's three methods"),
                 *(Metric(f"{name}_mibs", "MiB/s", f"mbw's {method} average") for method, name in METHODS.items())),
        headline="geomean_mibs",
        reproduces="D: mbw (memory bandwidth), 32-bit vs 64-bit",
    )
    tools = (Tool("mbw", "mbw"),)

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        # two arrays of 256 MiB: far past every cache, and well inside a 32-bit process
        return {"size_mib": 256, "runs": 10}

    def prepare(self, ctx: Context) -> Prepared:
        # mbw prints no version: the Debian package's says which build each side runs
        version = tool_version(ctx.target, ["dpkg-query", "-W", "-f=mbw ${Version}\\n", "mbw"], r"^mbw ")
        return Prepared(versions={"mbw": version})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return ["mbw", "-q", "-n", str(int(params["runs"])), str(int(params["size_mib"]))]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        values = parse_mbw(result.stdout)
        if len(values) != len(METHODS) or not all(v > 0 for v in values.values()):
            raise WorkloadError(f"mbw: not every method's average in its output (last line: {result.last_line()!r})",
                                "run mbw -q -n 3 64 by hand")
        return {"geomean_mibs": geometric_mean(values.values()), **values}


WORKLOADS = (Mbw,)
