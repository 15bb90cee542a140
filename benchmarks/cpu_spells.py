"""How this machine's CPU speed changes from one short pass to the next: sha1sum of a sparse file on
one CPU, back to back, each pass's CPU time. A host that gives a VM's vCPU a slower or shared
core for a while shows as stretches of slow passes; two neighbouring passes then pair badly.

    flock -o /tmp/shootout-bench.lock python3 benchmarks/cpu_spells.py --passes 900 --out spells.json
    python3 benchmarks/cpu_spells.py --summary spells.json

The summary: the rate's 5% and 95% quantiles, the share of passes below 80% of the median and
the lengths of those slow stretches, and the spread (sd of the log ratio) of neighbouring pairs:
single passes, and trials made of three passes (their total, as one longer trial is, or their
median, as a trial reporting the median of three passes would be), and trials of 1 to 15 passes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def passes(n: int, mb: int, cpu: int) -> list[tuple[float, float]]:
    """(start, CPU seconds) of each pass of `sha1sum` over an mb-MB hole on /dev/shm."""
    path = Path(f"/dev/shm/cpu-spells-{os.getpid()}")
    subprocess.run(["truncate", "-s", str(mb * 1_000_000), str(path)], check=True)
    rows = []
    try:
        for _ in range(n):
            start = time.monotonic()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(["taskset", "-c", str(cpu), "sha1sum", str(path)], check=True, capture_output=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            rows.append((start, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    finally:
        path.unlink()
    return rows


def pair_sd(rates: Sequence[float], per_trial: int, trial: Callable[[Sequence[float]], float]) -> float:
    """sd of log(B/A) over neighbouring trials A, B of per_trial passes each."""
    trials = [trial(rates[i:i + per_trial]) for i in range(0, len(rates) - per_trial + 1, per_trial)]
    return statistics.stdev(math.log(trials[i + 1] / trials[i]) for i in range(0, len(trials) - 1, 2))


def summary(rows: list[tuple[float, float]], mb: int) -> str:
    rates = [mb / cpu for _, cpu in rows]
    median = statistics.median(rates)
    quantiles = statistics.quantiles(rates, n=20)
    slow = [r < 0.8 * median for r in rates]
    stretches, length = [], 0
    for is_slow in [*slow, False]:
        if is_slow:
            length += 1
        elif length:
            stretches.append(length)
            length = 0
    total = lambda xs: len(xs) / sum(1 / x for x in xs)  # noqa: E731  (the rate of one trial as long as all)
    return "\n".join([
        f"{len(rows)} passes of {mb} MB in {rows[-1][0] - rows[0][0]:.1f} s",
        f"rate: median {median:.0f} MB/s, 5% {quantiles[0]:.0f}, 95% {quantiles[-1]:.0f}",
        f"below 80% of the median: {sum(slow) / len(slow):.0%} of passes, in {len(stretches)} stretches of "
        f"{min(stretches, default=0)}-{max(stretches, default=0)} passes",
        f"neighbouring pairs, sd of log ratio: single passes {pair_sd(rates, 1, lambda xs: xs[0]):.3f}; "
        f"trials of three passes, total {pair_sd(rates, 3, total):.3f}, median {pair_sd(rates, 3, statistics.median):.3f}",
        # the rounds a verdict needs grow with sd squared, the time with that and the trial's length
        "by the trial's length (its total): " + ", ".join(
            f"{k * mb} MB {pair_sd(rates, k, total):.3f}" for k in (1, 2, 3, 6, 15)),
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=900)
    parser.add_argument("--mb", type=int, default=33, help="the hole's size: 33 MB is a pass of about 75 ms here")
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--summary", type=Path, help="only summarise this results file")
    args = parser.parse_args()
    if args.summary:
        found = json.loads(args.summary.read_text())
        print(summary([tuple(r) for r in found["passes"]], found["mb"]))
        return
    rows = passes(args.passes, args.mb, args.cpu)
    if args.out:
        args.out.write_text(json.dumps({"mb": args.mb, "cpu": args.cpu, "passes": rows}))
    print(summary(rows, args.mb))


if __name__ == "__main__":
    main()
