"""The 7-Zip built-in benchmark (`7z b`): LZMA compression and decompression ratings in MIPS.

Debian ships 7-Zip as `7zz` (package 7zip) and the older p7zip 16.02 as `7z`/`7za`
(p7zip-full, p7zip); whichever a userspace has is used and its banner recorded, so a version
difference between configurations shows up in the facts. The dictionary size is fixed
(-md22, 4 MiB) so the work does not scale with the machine's memory.
"""

from __future__ import annotations

import re
from typing import Any

from shootout.base.errors import ToolMissing, WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.places.target import Target
from shootout.workloads.contract import Context, Prepared, Workload
from shootout.workloads.shell import q

COMMANDS = (("7zz", "7zip"), ("7z", "p7zip-full"), ("7za", "p7zip"))
MODES = {"1t": "one thread (-mmt1)", "mt": "all threads"}
_NUM = re.compile(r"^\d+$")


def parse_bench(text: str) -> dict[str, float]:
    """{'compress', 'decompress', 'total'} ratings (MIPS) from one `7z b` output.

    The Avr line is `Avr: [speed] usage r/u rating | [speed] usage r/u rating`: the speed
    column appeared in later 7-Zip versions, so the rating is taken as the last number on
    each side of the bar. The Tot line is `Tot: usage r/u rating`."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Avr:") and "|" in line:
            left, right = line[4:].split("|", 1)
            numbers = [[t for t in side.split() if _NUM.match(t)] for side in (left, right)]
            if all(numbers):
                out["compress"] = float(numbers[0][-1])
                out["decompress"] = float(numbers[1][-1])
        elif line.startswith("Tot:"):
            numbers = [t for t in line[4:].split() if _NUM.match(t)]
            if numbers:
                out["total"] = float(numbers[-1])
    return out


class SevenZip(Workload):
    spec = WorkloadSpec(
        name="7zip",
        category="compress",
        description="7-Zip benchmark (7z b -md22): LZMA compression/decompression ratings, one and all threads",
        metrics=tuple(Metric(f"{part}_{mode}", "MIPS", f"{part} rating, {label}")
                      for mode, label in MODES.items() for part in ("compress", "decompress", "total")),
        headline="total_mt",
        reproduces="D: 7-zip benchmark, Pi 3B+/Pi 4, 32-bit vs 64-bit",
    )

    packages = ("7zip",)  # what a userspace without any of the commands gets
    quick = {"passes": 1, "modes": ["mt"]}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"passes": 2, "dict_log2": 22, "threads": facts.cores or 1, "modes": list(MODES)}

    def cpus(self, params: dict[str, Any]) -> int:
        return int(params["threads"]) if "mt" in params.get("modes", []) else 1  # -mmtN

    def required_packages(self, target: Target) -> list[str]:
        return [] if any(target.which(cmd) for cmd, _ in COMMANDS) else list(self.packages)

    def check_tools(self, target: Target) -> None:
        if not any(target.which(cmd) for cmd, _ in COMMANDS):
            raise ToolMissing("7zz", "7zip", where=target.config.display)

    def prepare(self, ctx: Context) -> Prepared:
        command, package = next((c, p) for c, p in COMMANDS if ctx.target.which(c))
        banner = tool_version(ctx.target, [command], r"7-Zip")
        # The banner names the build's architecture ("(x64)", "(x86)"): that is the ABI being
        # compared, not a version difference, so it is kept apart from the version.
        arch = re.search(r"\((x64|x86|arm64|arm)\)", banner)
        version = re.sub(r"\s*\((x64|x86|arm64|arm)\)", "", banner)
        return Prepared(files={"7z": command}, facts={"7z": command, "package": package,
                                                        "build_arch": arch.group(1) if arch else None},
                        versions={"7z": version})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        exe = q(prepared.files["7z"])
        base = f"{exe} b {int(params['passes'])} -md{int(params['dict_log2'])}"
        threads = {"1t": 1, "mt": int(params["threads"])}
        lines = ["set -e"]
        for mode in params["modes"]:
            lines.append(f"echo 'section {mode}'; {base} -mmt{threads[mode]}")
        return ["sh", "-c", "\n".join(lines)]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        runs = result.sections()
        values = {}
        for mode in params["modes"]:
            ratings = parse_bench(runs.get(mode, ""))
            for part in ("compress", "decompress", "total"):
                if part not in ratings or ratings[part] <= 0:
                    raise WorkloadError(f"7z b ({mode}) printed no {part} rating",
                                        "run 7zz b -md22 by hand to see its output")
                values[f"{part}_{mode}"] = ratings[part]
        return values


WORKLOADS = (SevenZip,)
