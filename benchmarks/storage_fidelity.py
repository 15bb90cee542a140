"""Does shootout's fio (and iozone) measure what the tool measures when a user runs it by hand?

The fidelity check: the same job file (fio.job_file, direct I/O) on the same scratch,
through `shootout run` (a warm-up and ROUNDS measured trials) and by hand (`fio
--output-format=json` in a fresh directory, a warm-up and ROUNDS runs), in alternating blocks
A B B A ... so that drift and other users' load fall on both sides alike; then per metric
the ratio shootout / by hand of all values (Hodges-Lehmann, with the Mann-Whitney 95% interval:
shootout's own unpaired estimate). shootout needs 6 rounds a run at least, so a block is a run.
Pass: the interval lies within ±5% (0.95-1.05).

The scratch is ext4 in a file, made the way shootout makes its scratches (a loop device
through the journal, undone at the end or by `shootout doctor` after a kill), in RAM
(/dev/shm) by default, because the disk under this machine varies by tens of percent from
minute to minute; --throttle 30MB/s puts a cgroup v1 blkio rule on the loop device, so that
throughput is set by the throttle as on the Pi3Desk link. shootout sees the scratch as a
directory (scratch = "..."): its own file scratches refuse RAM on purpose.

    .venv/bin/python benchmarks/storage_fidelity.py --tool fio --blocks 4
    .venv/bin/python benchmarks/storage_fidelity.py --tool fio --blocks 4 --throttle 30MB/s
    .venv/bin/python benchmarks/storage_fidelity.py --tool iozone --blocks 4 --throttle 30MB/s --iozone-mib 32 --iozone-bin DIR

Needs root, fio (Debian fio), iozone (iozone3, non-free: give its directory with --iozone-bin),
and shootout installed in the running Python (the repo's venv).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import shootout

from shootout.base.units import byte_size
from shootout.parts.throttle import _Session as ThrottleSession
from shootout.parts.throttle import parse_rate
from shootout.stats import unpaired_estimate
from shootout.storage.blockdev import mount_of
from shootout.storage.scratch import _file_fs
from shootout.system.journal import journal
from shootout.workloads import fio, iozone

ROUNDS = 6
FIO_PARAMS = {"size_mib": 256, "runtime_s": 2, "ramp_s": 0.5, "compress_pct": 0, "jobs": list(fio.JOBS)}
IOZONE_PARAMS = {"size_mib": 100, "records": list(iozone.RECORDS)}
TOLERANCE = 0.05


def fio_by_hand(point: Path, jobs: Path) -> dict[str, float]:
    """fio as a user runs it, its JSON read here: MB/s of the sequential jobs, IOPS of the random ones."""
    with tempfile.TemporaryDirectory(dir=point, prefix="by-hand-") as d:
        out = subprocess.run(["fio", "--output-format=json", f"--directory={d}", str(jobs)],
                             check=True, capture_output=True, text=True).stdout
    values = {}
    for job in json.loads(out[out.index("{"):])["jobs"]:
        side = job["write" if "write" in fio.JOBS[job["jobname"]][0] else "read"]
        name = job["jobname"]
        values[f"{name}_mbps" if name.startswith("seq") else f"{name}_iops"] = (
            side["bw_bytes"] / 1e6 if name.startswith("seq") else side["iops"])
    return values


def iozone_by_hand(point: Path, binary: Path) -> dict[str, float]:
    args = ["-e", "-I", "-a", "-s", f"{IOZONE_PARAMS['size_mib']}m",
            *(a for r in IOZONE_PARAMS["records"] for a in ("-r", r)), "-i", "0", "-i", "1", "-i", "2"]
    with tempfile.TemporaryDirectory(dir=point, prefix="by-hand-") as d:
        out = subprocess.run([str(binary), *args, "-f", f"{d}/iozone.tmp"], check=True, capture_output=True,
                             text=True, cwd=d).stdout
    return iozone.parse_table(out)


def via_shootout(toml: Path, tool: str, home: Path) -> list[dict[str, float]]:
    """One `shootout run` (a warm-up and ROUNDS measured trials), the measured trials' values."""
    done = shootout("run", "-f", str(toml), "-w", tool, "--min-rounds", str(ROUNDS), "--max-rounds", str(ROUNDS),
                    "--budget", "1h", "--no-monitor", home=home)
    if done.returncode != 0:
        sys.exit(f"shootout run failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    doc = json.loads(shootout("export", "last", home=home).stdout)
    measured = [t for t in doc["trials"] if t["spec"]["round"] > 0 and t["spec"]["workload"] == tool]
    return [t["values"] for t in measured]


def write_toml(directory: Path, point: Path, tool: str) -> Path:
    params = FIO_PARAMS if tool == "fio" else IOZONE_PARAMS
    lines = ['[run]', 'configs = ["fidelity"]', '', '[[config]]', 'name = "fidelity"', f'scratch = "{point}"',
             f'env = {{ PATH = "{os.environ["PATH"]}" }}', '',  # the host target's PATH is its own otherwise
             f'[params.{tool}]', *(f"{k} = {json.dumps(v)}" for k, v in params.items())]
    path = directory / "fidelity.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def summarize(sides: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    out = {}
    for metric in sorted(set(sides["shootout"][0]) & set(sides["hand"][0])):
        a = [v[metric] for v in sides["shootout"]]
        b = [v[metric] for v in sides["hand"]]
        est = unpaired_estimate([math.log(y) for y in b], [math.log(x) for x in a])  # > 1: shootout higher
        out[metric] = {"shootout_median": statistics.median(a), "by_hand_median": statistics.median(b),
                       "shootout_cv": statistics.stdev(a) / statistics.mean(a),
                       "by_hand_cv": statistics.stdev(b) / statistics.mean(b),
                       "ratio": est.ratio if est else float("nan"), "low": est.low if est else float("nan"),
                       "high": est.high if est else float("nan")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", choices=("fio", "iozone"), default="fio")
    ap.add_argument("--blocks", type=int, default=4, help="alternating blocks, half of them shootout's")
    ap.add_argument("--backing", default="/dev/shm", help="directory holding the scratch's image file")
    ap.add_argument("--size", default="1G", help="the image file's size")
    ap.add_argument("--throttle", help="e.g. 30MB/s: a blkio rule on the scratch's loop device")
    ap.add_argument("--iozone-bin", type=Path, help="directory holding iozone (iozone3 is non-free)")
    ap.add_argument("--iozone-mib", type=int, default=100, help="iozone's file size (-s), MiB")
    ap.add_argument("--json", type=Path, help="write the values and the summary here")
    args = ap.parse_args()
    IOZONE_PARAMS["size_mib"] = args.iozone_mib
    home = Path(os.environ.get("SHOOTOUT_HOME") or tempfile.mkdtemp(prefix="shootout-bench-home-"))
    os.environ["SHOOTOUT_HOME"] = str(home)
    if args.iozone_bin:
        os.environ["PATH"] = f"{args.iozone_bin}:{os.environ['PATH']}"
    with journal() as j, tempfile.TemporaryDirectory(prefix="shootout-fidelity-") as work:
        entries: list[int] = []
        size = byte_size(args.size, "--size")
        point = _file_fs({"fs": "ext4", "in": args.backing, "size": size}, j, entries)
        source = mount_of(point)["source"]
        rdev = os.stat(source).st_rdev
        device = f"{os.major(rdev)}:{os.minor(rdev)}"
        if args.throttle:
            ThrottleSession(j, [])._limit_v1(device, parse_rate(args.throttle, "--throttle"))
        toml = write_toml(Path(work), point, args.tool)
        jobs = Path(work) / "jobs.fio"
        jobs.write_text(fio.job_file(FIO_PARAMS, direct=True))
        binary = Path(subprocess.run(["sh", "-c", "command -v iozone"], capture_output=True, text=True).stdout.strip()
                      or "iozone")
        print(f"scratch: ext4 on {source} ({device}) in {args.backing}, throttle {args.throttle or 'none'}; "
              f"load {Path('/proc/loadavg').read_text().split()[:3]}", flush=True)
        sides: dict[str, list[dict[str, float]]] = {"shootout": [], "hand": []}
        for i in range(args.blocks):
            t0 = time.time()
            side = ("shootout", "hand")[(i + i // 2) % 2]  # A B B A A B ...
            if side == "shootout":
                sides[side] += via_shootout(toml, args.tool, home)
            else:
                by_hand = (lambda: fio_by_hand(point, jobs)) if args.tool == "fio" else (
                    lambda: iozone_by_hand(point, binary))
                by_hand()  # its warm-up, as shootout's
                sides[side] += [by_hand() for _ in range(ROUNDS)]
            print(f"block {i + 1}/{args.blocks}: {side} ({time.time() - t0:.0f} s, load "
                  f"{Path('/proc/loadavg').read_text().split()[0]})", flush=True)
        summary = summarize(sides)
    width = max(map(len, summary))
    print(f"{'metric':{width}}  {'shootout':>10} {'by hand':>10}  {'cv s/h':>11}  ratio [95% CI]   within 5%")
    for metric, s in summary.items():
        inside = 1 - TOLERANCE <= s["low"] and s["high"] <= 1 + TOLERANCE
        print(f"{metric:{width}}  {s['shootout_median']:10.1f} {s['by_hand_median']:10.1f}  "
              f"{s['shootout_cv']:5.1%}/{s['by_hand_cv']:5.1%}  {s['ratio']:.3f} [{s['low']:.3f}, {s['high']:.3f}]  "
              f"{'yes' if inside else 'NO'}")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "values": sides,
                                         "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
