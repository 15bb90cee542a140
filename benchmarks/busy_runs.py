"""The README's main job and `--experiment rpi64` on their defaults, quiet and on a busy machine.

For each job (--jobs: main = `shootout run`, rpi64 = `shootout run --experiment rpi64`), condition
(quiet; load = every CPU busy 1.3 s, idle 1.7 s, repeating: common.on_off_load) and reservation
(on = shootout's default as root, CPUs reserved for the trials; off = --no-isolate), RUNS times:
the wall time of the whole command and how many headline workloads got a verdict (faster, slower or
same; not inconclusive, n/a or left out), from `shootout show --json`. The userspaces live in --home
and are made by the first run (its time is reported apart: --prime makes them before the series).

    .venv/bin/python benchmarks/busy_runs.py --runs 2 --home /var/tmp/shootout-bench-home \\
        --out busy_runs.jsonl --lock /tmp/shootout-bench.lock
    .venv/bin/python benchmarks/busy_runs.py --table busy_runs.jsonl

Needs root (the userspaces, the reservation) and shootout importable from the running Python.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from common import Series, on_off_load, shootout

JOBS = {"main": (), "rpi64": ("--experiment", "rpi64")}
HEADLINES = {"main": 4, "rpi64": 6}  # the workloads each job judges (left out or lost ones count as undecided)
TARGET_S = {"main": 180, "rpi64": 480}  # the targets: main within 3 min, rpi64 within 8, every headline decided
VERDICTS = ("faster", "slower", "same", "better", "worse")  # better/worse: a guard decided (maxalloc)


def decided(verdicts: dict[str, str]) -> int:
    return sum(v in VERDICTS for v in verdicts.values())


def one(job: str, isolate: bool, home: Path) -> dict:
    t0 = time.perf_counter()
    done = shootout("run", *JOBS[job], *([] if isolate else ["--no-isolate"]), home=home)
    seconds = time.perf_counter() - t0
    shown = shootout("show", "last", "--json", home=home)
    rows = json.loads(shown.stdout) if shown.returncode == 0 else []
    heads = [r for r in rows if r.get("headline", True) and not r["workload"].startswith("geomean")]
    return {"exit": done.returncode, "seconds": round(seconds, 1),
            "verdicts": {r["workload"]: r["verdict"] for r in heads},
            "decided": decided({r["workload"]: r["verdict"] for r in heads}), "headlines": HEADLINES[job],
            "tail": done.stderr.strip().splitlines()[-1:] if done.returncode else []}


@contextmanager
def held(lock: Path | None) -> Iterator[None]:
    """The lock of the machine's heavy jobs, for one run: a test or another series may go between runs."""
    if lock is None:
        yield
        return
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def table(lines: list[dict]) -> str:
    out = ["| job | condition | reserved CPUs | runs | met the target | median (range) wall s | verdicts (each run) | exits |",
           "|---|---|---|---|---|---|---|---|"]
    for key in sorted({(r["job"], r["condition"], r["isolation"]) for r in lines}):
        cell = [r for r in lines if (r["job"], r["condition"], r["isolation"]) == key]
        said = ", ".join(f"{decided(r['verdicts'])}/{r['headlines']}" for r in cell)
        met = sum(r["seconds"] <= TARGET_S[r["job"]] and decided(r["verdicts"]) == r["headlines"] for r in cell)
        walls = [r["seconds"] for r in cell]
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(cell)} | {met}/{len(cell)} | "
                   f"{statistics.median(walls):.0f} ({min(walls):.0f}–{max(walls):.0f}) | {said} | "
                   f"{','.join(str(r['exit']) for r in cell)} |")
    loads = sorted({r["uptime"] for r in lines})
    return "\n".join(out + ["", "load averages at the starts: " + "; ".join(loads)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--jobs", default="main,rpi64")
    parser.add_argument("--conditions", default="quiet,load")
    parser.add_argument("--isolation", default="on,off")
    parser.add_argument("--home", type=Path, default=Path("/var/tmp/shootout-bench-home"))
    parser.add_argument("--out", type=Path, default=Path("busy_runs.jsonl"))
    parser.add_argument("--lock", type=Path, help="flock this file for each run (other heavy jobs go between runs)")
    parser.add_argument("--prime", action="store_true", help="make the userspaces first (one untimed run)")
    parser.add_argument("--table", type=Path, help="only print the table of this results file")
    args = parser.parse_args()
    if args.table:
        print(table(Series(args.table).done))
        return
    args.home.mkdir(parents=True, exist_ok=True)
    if args.prime:
        with held(args.lock):
            print(json.dumps({"prime": one("main", True, args.home)}), flush=True)
    series = Series(args.out)
    done = series.done
    for i in range(args.runs):
        for job in args.jobs.split(","):
            for condition in args.conditions.split(","):
                for isolation in args.isolation.split(","):
                    key = (job, condition, isolation, i)
                    if any((r["job"], r["condition"], r["isolation"], r["i"]) == key for r in done):
                        continue
                    with held(args.lock):
                        uptime = os.popen("uptime").read().strip()
                        with on_off_load() if condition == "load" else nullcontext():
                            r = one(job, isolation == "on", args.home)
                    line = {"job": job, "condition": condition, "isolation": isolation, "i": i, "uptime": uptime, **r}
                    series.add(line)
                    time.sleep(2)  # flock is not first-come: a pause lets a waiting job have its turn
    print(table(done))


if __name__ == "__main__":
    main()
