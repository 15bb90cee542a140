"""Benchmark: what the monitor costs a CPU-bound workload.

    python -m shootout.measure.overhead [--runs 20] [--interval 1.0] [--seconds 3] [--parallel 1]

Runs the fixed-work clock loop `runs` times with the monitor sampling and `runs` times
without, in pairs whose order alternates (with/without, without/with, ...) so drift of the
machine falls on both sides. `--parallel N` runs N loops at once (N = CPU count leaves the
monitor no idle core). Reports both medians, their ratio and the paired estimate of
"speed with the monitor over speed without" with its 95% CI and verdict at 1%.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from shootout.conditions.monitor import Monitor
from shootout.measure.clock import busy_loop_seconds
from shootout.stats import paired_estimate, verdict


def _calibrate(seconds: float) -> int:
    """Loop iterations that take about `seconds` here."""
    probe = 2_000_000
    took = busy_loop_seconds(probe)
    if took is None:
        raise SystemExit("the clock loop could not be built (install gcc)")
    return max(1, int(probe * seconds / max(took, 1e-6)))


def _load(iterations: int, parallel: int) -> float:
    """Wall time of `parallel` concurrent loops: the slowest one's own timing."""
    with ThreadPoolExecutor(parallel) as pool:
        times = list(pool.map(lambda _: busy_loop_seconds(iterations), range(parallel)))
    if any(t is None for t in times):
        raise SystemExit("the clock loop failed")
    return max(t for t in times if t is not None)


def measure(runs: int = 20, interval_s: float = 1.0, seconds: float = 3.0, parallel: int = 1) -> dict[str, Any]:
    iterations = _calibrate(seconds)
    with_mon: list[float] = []
    without: list[float] = []
    samples = 0
    cpu_s = 0.0
    for i in range(runs):
        for monitored in ((True, False) if i % 2 == 0 else (False, True)):
            if monitored:
                mon = Monitor(interval_s)
                mon.start()
                with_mon.append(_load(iterations, parallel))
                mon.stop()
                samples += len(mon.samples())
                cpu_s += mon.cpu_s
            else:
                without.append(_load(iterations, parallel))
    # Speed with the monitor over speed without, per pair: below 1 means the monitor slows it.
    d = [math.log(b / a) for a, b in zip(with_mon, without, strict=True)]
    est = paired_estimate(d)
    return {
        "runs": runs,
        "interval_s": interval_s,
        "parallel": parallel,
        "iterations": iterations,
        "median_with_s": statistics.median(with_mon),
        "median_without_s": statistics.median(without),
        "median_ratio": statistics.median(with_mon) / statistics.median(without),
        "min_ratio": min(with_mon) / min(without),  # least-disturbed runs: robust to outside load
        "estimate": est,
        "verdict": str(verdict(est, 0.01)),
        "monitor_cpu_ms_per_sample": 1000 * cpu_s / max(1, samples - runs),  # stop() samples run in the caller
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--seconds", type=float, default=3.0, help="length of one loop run (several intervals)")
    ap.add_argument("--parallel", type=int, default=1, help=f"concurrent loops (CPUs here: {os.cpu_count()})")
    args = ap.parse_args(argv)
    r = measure(args.runs, args.interval, args.seconds, args.parallel)
    est = r["estimate"]
    print(f"{r['runs']} runs each, {r['parallel']} loop(s) of {r['iterations']} iterations, "
          f"monitor every {r['interval_s']} s")
    print(f"median without monitor {r['median_without_s']:.4f} s, with {r['median_with_s']:.4f} s, "
          f"ratio {r['median_ratio']:.4f} ({(r['median_ratio'] - 1) * 100:+.2f}% time)")
    print(f"fastest runs: ratio {r['min_ratio']:.4f} ({(r['min_ratio'] - 1) * 100:+.2f}% time)")
    if est is not None:
        print(f"speed with/without: {est.ratio:.4f} [{est.low:.4f}, {est.high:.4f}] 95% CI "
              f"-> {r['verdict']} (threshold 1%)")
    print(f"monitor thread CPU: {r['monitor_cpu_ms_per_sample']:.3f} ms per sample")
    return 0


if __name__ == "__main__":
    sys.exit(main())
