"""membw's far buffer: one pass a trial against the best of two, amd64 against i386.

What the trials of a comparison see: each round runs `membw SIZE 1` and `membw SIZE 2` in the
amd64 and in the i386 userspace (in random order, on CPU 1) and keeps writeread's paired log
ratio (i386 / amd64) for each pass count; prints its mean, its spread and a trial's wall time.

    flock -o /tmp/shootout-bench.lock ../.venv/bin/python membw_passes.py --rounds 40 --seed 11 \\
        --home /var/tmp/shootout-bench-home          # results/membw-passes.txt

Needs both userspaces made by a main-job run in --home (their membw binary is compiled there).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import time
from pathlib import Path

ARCHES = ("amd64", "i386")


def binary(root: Path) -> str:
    """membw as a run compiled it inside this userspace (the newest build)."""
    found = sorted(root.glob("var/cache/shootout/native/membw-*/membw"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no membw compiled in {root}: run the main job with this home first")
    return "/" + str(found[-1].relative_to(root))


def writeread(root: Path, size_mib: int, passes: int) -> tuple[float, float]:
    """writeread_mbps of one membw run in the userspace, and its wall time."""
    t0 = time.monotonic()
    out = subprocess.run(["taskset", "-c", "1", "chroot", str(root), binary(root), str(size_mib), str(passes)],
                         capture_output=True, text=True, check=True).stdout
    values = dict(line.split()[:2] for line in out.splitlines() if len(line.split()) >= 2)
    return float(values["writeread_mbps"]), time.monotonic() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    roots = {a: args.home / "userspaces" / f"debian-bookworm-{a}" / "root" for a in ARCHES}
    rng = random.Random(args.seed)
    ratios: dict[int, list[float]] = {1: [], 2: []}
    walls: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        cells = [(passes, arch) for passes in ratios for arch in ARCHES]
        rng.shuffle(cells)  # no side or pass count always first
        got = {}
        for passes, arch in cells:
            got[passes, arch], wall = writeread(roots[arch], args.size_mib, passes)
            walls[passes].append(wall)
        for passes in ratios:
            ratios[passes].append(math.log(got[passes, "i386"] / got[passes, "amd64"]))
    print(f"membw {args.size_mib} MiB, {args.rounds} rounds, {open('/proc/loadavg').read().split()[0]} load at the end")
    for passes, d in ratios.items():
        print(f"{passes} pass(es): i386/amd64 {math.exp(statistics.mean(d)):.3f}, paired log sd {statistics.stdev(d):.4f}, "
              f"wall a trial {statistics.median(walls[passes]):.2f} s")


if __name__ == "__main__":
    main()
