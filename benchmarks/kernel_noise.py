"""Is a native kernel's own metric noisier than the process that runs it?

For each native kernel workload (intmix, ptrtree, membw, memlat by default) this prepares and
calibrates it on the host exactly as `shootout run` does, then runs N trials one after the
other (each a fresh process with the layout padding of a real trial) and prints, per workload,
the coefficient of variation of its headline metric (the kernel's own timing) and of the trial's
wall time (the process as a whole).

With --against DIR the kernels are also built from the C sources in DIR (e.g. another
checkout's src/shootout/workloads/native) and run with the same parameters, alternating trial
by trial with this tree's, so both see the same machine: a before/after of the kernels' timing.

    python benchmarks/kernel_noise.py                 # 20 trials of each of the four kernels
    python benchmarks/kernel_noise.py -n 30 -w ptrtree --json
    git worktree add /tmp/main main && python benchmarks/kernel_noise.py --against /tmp/main/src/shootout/workloads/native

Run it on an otherwise idle machine: interference from other processes is exactly what it
measures. SHOOTOUT_HOME picks the cache where the kernels are compiled.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from unittest import mock

from shootout.base.model import Config
from shootout.execution import build
from shootout.places.host import HostTarget
from shootout.places.target import layout_padding
from shootout.stats import cv
from shootout.workloads.catalogue import workload

KERNELS = ("intmix", "ptrtree", "membw", "memlat")


def _sources_from(directory: Path):
    def sources(kernel: str) -> dict[str, bytes]:
        return {name: (directory / name).read_bytes() for name in (f"{kernel}.c", build.KERNEL_HEADER)}
    return sources


def measure(name: str, trials: int, against: Path | None) -> list[dict[str, object]]:
    work = workload(name)
    target = HostTarget(Config(name="host"))
    target.open()
    try:
        params = work.default_params()
        variants = {"this tree": work.prepare(target, params)}
        if against is not None:
            with mock.patch.object(build, "kernel_sources", _sources_from(against)):
                variants[str(against)] = work.prepare(target, params)
        params = work.calibrate(target, variants["this tree"], params)
        argvs = {label: work.argv(prepared, params) for label, prepared in variants.items()}
        own: dict[str, list[float]] = {label: [] for label in argvs}
        wall: dict[str, list[float]] = {label: [] for label in argvs}
        for argv in argvs.values():
            target.run(argv, env=layout_padding(), timeout=1800)  # warm-up, like a run's round 0
        for i in range(trials):
            order = list(argvs.items()) if i % 2 == 0 else list(argvs.items())[::-1]
            for label, argv in order:
                result = target.run(argv, env=layout_padding(), timeout=1800)
                if result.exit_status != 0:
                    raise SystemExit(f"{name} failed: {result.stderr_tail(1)}")
                own[label].append(work.parse(result, params)[work.spec.headline])
                wall[label].append(result.wall_s)
    finally:
        target.close()
    return [{"workload": name, "kernels": label, "metric": work.spec.headline, "trials": trials,
             "cv_metric": cv(own[label]), "cv_wall": cv(wall[label]), "median_wall_s": statistics.median(wall[label])}
            for label in argvs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--trials", type=int, default=20)
    parser.add_argument("-w", "--workload", action="append", choices=KERNELS)
    parser.add_argument("--against", type=Path, help="directory with other kernel sources, run alternately")
    parser.add_argument("--json", action="store_true", help="print one JSON object per workload and kernels")
    args = parser.parse_args()
    for name in args.workload or KERNELS:
        for row in measure(name, args.trials, args.against):
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{name:8} {row['metric']:15} cv(metric) {row['cv_metric']:6.2%}   cv(wall) {row['cv_wall']:6.2%}"
                      f"   median wall {row['median_wall_s']:.2f} s   {row['kernels']} ({args.trials} trials)",
                      flush=True)


if __name__ == "__main__":
    main()
