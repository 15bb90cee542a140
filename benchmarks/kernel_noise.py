"""Is a native kernel's own metric noisier than the process that runs it?

For each native kernel workload (intmix, ptrtree, membw, memlat by default) this prepares and
calibrates it on the host exactly as `shootout run` does, then runs N trials one after the
other (each a fresh process with the layout padding of a real trial) and prints, per workload,
the coefficient of variation of its headline metric (the kernel's own timing) and of the trial's
wall time (the process as a whole).

    python benchmarks/kernel_noise.py                 # 20 trials of each of the four kernels
    python benchmarks/kernel_noise.py -n 30 -w ptrtree --json

Run it on an otherwise idle machine: interference from other processes is exactly what it
measures. SHOOTOUT_HOME picks the cache where the kernels are compiled.
"""

from __future__ import annotations

import argparse
import json
import statistics

from shootout.model import Config
from shootout.stats import cv
from shootout.targets.base import layout_padding
from shootout.targets.host import HostTarget
from shootout.workloads.registry import workload

KERNELS = ("intmix", "ptrtree", "membw", "memlat")


def measure(name: str, trials: int) -> dict[str, object]:
    work = workload(name)
    target = HostTarget(Config(name="host"))
    target.open()
    try:
        params = work.default_params()
        prepared = work.prepare(target, params)
        params = work.calibrate(target, prepared, params)
        argv = work.argv(prepared, params)
        target.run(argv, env=layout_padding(), timeout=1800)  # warm-up, like a run's round 0
        own, wall = [], []
        for _ in range(trials):
            result = target.run(argv, env=layout_padding(), timeout=1800)
            if result.exit_status != 0:
                raise SystemExit(f"{name} failed: {result.stderr_tail(1)}")
            own.append(work.parse(result, params)[work.spec.headline])
            wall.append(result.wall_s)
    finally:
        target.close()
    return {"workload": name, "metric": work.spec.headline, "trials": trials,
            "cv_metric": cv(own), "cv_wall": cv(wall), "median_wall_s": statistics.median(wall)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--trials", type=int, default=20)
    parser.add_argument("-w", "--workload", action="append", choices=KERNELS)
    parser.add_argument("--json", action="store_true", help="print one JSON object per workload")
    args = parser.parse_args()
    for name in args.workload or KERNELS:
        row = measure(name, args.trials)
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{name:8} {row['metric']:15} cv(metric) {row['cv_metric']:6.2%}   cv(wall) {row['cv_wall']:6.2%}"
                  f"   median wall {row['median_wall_s']:.2f} s   ({args.trials} trials)")


if __name__ == "__main__":
    main()
