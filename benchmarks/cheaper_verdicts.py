"""At delta 1%, how often is +2% found and A/A called "same", at what cost?

One fixed C program (work.c, calibrated to about 0.1 s of CPU time) runs as two configurations
of the host that differ only in an environment variable: B does 0% (A/A) or 2% more
iterations. Two programs of the same length (--programs): "register", a loop that never leaves
the registers, and "table", the same loop reading and rewriting a random word of a 384 KiB table
at every step (larger than L1 and L2 here: the cache traffic ptrtree, membw and sha1 meet, on which
other programs' work shows). shootout runs with its CPUs reserved for the trials (its default as
root) and without (--no-isolate), per --isolation. For each condition, injection, program and
isolation, RUNS times, alternating the tools so that all see the same hour:

- shootout (this checkout's src): `shootout run --file bench.toml` with its defaults (delta 1%,
  95%, from 6 rounds to what the budget pays for, 50-400), the headline verdict of B against A
  from `shootout show --json`;
- shootout-old (--old-src, e.g. an export of an older commit): the same command;
- hyperfine+welch: `hyperfine -N --warmup 1 A B` (its default run count), Welch's t-test on the
  two samples of times: p < 0.05 is a difference (its sign the verdict), else none.

Conditions: quiet, and load (both CPUs busy 1.3 s, idle 1.7 s, repeating: common.on_off_load).
The table: +2% found (shootout: "slower"; Welch: p < 0.05 and B slower), A/A "same" (Welch: no
significant difference), wrong verdicts (A/A: faster/slower; +2%: faster or "same"), median
seconds per run (wall time of the whole command), and for shootout the clock it judged by.

Runs append one JSON line each to --out, so a series can be split and resumed; --lock takes an
flock on that file for at most --hold seconds at a time (then lets others in) and notes the
load average at each start. Reproduce everything with one command:

    .venv/bin/python benchmarks/cheaper_verdicts.py --runs 20 --out verdicts.jsonl \\
        --old-src /path/to/old/src --lock /tmp/shootout-bench.lock
    .venv/bin/python benchmarks/cheaper_verdicts.py --table verdicts.jsonl

On a busy machine, with and without the reserved CPUs, for both programs (shootout alone):

    .venv/bin/python benchmarks/cheaper_verdicts.py --runs 20 --tools shootout --programs register,table \
        --isolation on,off --out busy.jsonl --lock /tmp/shootout-bench.lock

Needs: cc (gcc), hyperfine, scipy, and shootout importable from --src (default: ../src).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from common import HERE, Series, build_work, on_off_load, scratch, shootout_toml
from verdicts import welch_run as hyperfine_welch

TOOLS = ("shootout", "shootout-old", "hyperfine+welch")
PROGRAMS = {"register": 0, "table": 384}  # program -> its table's KiB (0: none)


def cpu_seconds(binary: Path, iterations: int, table_kib: int = 0) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(binary), str(iterations), *([str(table_kib)] if table_kib else [])], check=True,
                   capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def calibrate_cpu(binary: Path, seconds: float, table_kib: int = 0) -> int:
    """Iterations for about `seconds` of CPU time (the median of 5), whatever the machine's load."""
    iterations = 20_000_000
    for _ in range(4):
        iterations = int(iterations * seconds / statistics.median(cpu_seconds(binary, iterations, table_kib)
                                                                   for _ in range(5)))
    return iterations


def shootout_run(src: Path, home: Path, toml: Path, seed: int, isolate: bool = True) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "SHOOTOUT_HOME": str(home), "SHOOTOUT_LOAD_WAIT": "0s"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "shootout", "run", "--file", str(toml), "-w", "work",
                           "--seed", str(seed), *([] if isolate else ["--no-isolate"])],
                          capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"shootout run failed: {done.stderr.strip()[-2000:]}")
    shown = subprocess.run([sys.executable, "-m", "shootout", "show", "last", "--json"], capture_output=True,
                           text=True, env=env, check=True)
    rows = [r for r in json.loads(shown.stdout) if r["workload"] == "work" and r["config"] == "B"]
    row = next(r for r in rows if r.get("headline", True))
    return {"verdict": row["verdict"], "metric": row["metric"], "low": row["ci_low"], "high": row["ci_high"],
            "rounds": row["rounds"], "seconds": seconds}


def welch_run(binary: Path, iterations: int, extra: float, out: Path) -> dict:
    return {**hyperfine_welch(binary, iterations, extra, out), "metric": "wall"}


def found(r: dict) -> bool:
    return r["verdict"] == "slower" if r["extra"] else r["verdict"] in ("same", "none")


def wrong(r: dict) -> bool:
    return r["verdict"] in ("faster", "slower") if r["extra"] == 0 else r["verdict"] in ("faster", "same")


def _cell(r: dict) -> tuple[str, str, str, str]:
    """(program, condition, tool, reserved CPUs): lines from before the programs and the
    reservation were measured are the register loop without reserved CPUs."""
    return r.get("program", "register"), r["condition"], r["tool"], r.get("isolation", "off")


def table(lines: list[dict]) -> str:
    out = ["| program | condition | tool | reserved CPUs | +2% found | A/A same | wrong | median s/run (+2%, A/A) "
           "| median rounds (+2%, A/A) | CPU-time headline |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted({_cell(r) for r in lines}):
        cell = [r for r in lines if _cell(r) == key]
        plus, aa = ([r for r in cell if (r["extra"] > 0) == p] for p in (True, False))
        med = [f"{statistics.median(r['seconds'] for r in c):.1f}" if c else "-" for c in (plus, aa)]
        rounds = [f"{statistics.median(r['rounds'] for r in c):.0f}" if c and "rounds" in c[0] else "-"
                  for c in (plus, aa)]
        tool = key[2]
        cpu = "-" if tool == "hyperfine+welch" else f"{sum(r['metric'] == 'cpu' for r in cell)}/{len(cell)}"
        out.append(f"| {key[0]} | {key[1]} | {tool} | {key[3] if tool != 'hyperfine+welch' else '-'} "
                   f"| {sum(map(found, plus))}/{len(plus)} | {sum(map(found, aa))}/{len(aa)} "
                   f"| {sum(map(wrong, cell))}/{len(cell)} | {med[0]}, {med[1]} | {rounds[0]}, {rounds[1]} | {cpu} |")
    loads = sorted({r["uptime"] for r in lines if "uptime" in r})
    return "\n".join(out + ["", f"{len(lines)} runs; load averages at the starts of the holds: " + "; ".join(loads)])


class Lock:
    """Hold an flock for at most `hold` seconds at a time; `refresh()` lets others in when it is up."""

    def __init__(self, path: Path | None, hold: float) -> None:
        self.path, self.hold, self.fd, self.since = path, hold, None, 0.0
        self.uptime = ""

    def refresh(self) -> None:
        if self.path is None:
            self.uptime = self.uptime or os.popen("uptime").read().strip()
            return
        if self.fd is not None and time.monotonic() - self.since < self.hold:
            return
        if self.fd is not None:
            os.close(self.fd)
            time.sleep(5)  # let a waiting helper take it
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        self.since = time.monotonic()
        self.uptime = os.popen("uptime").read().strip()
        print(f"lock taken: {self.uptime}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per tool, injection and condition")
    parser.add_argument("--conditions", default="quiet,load")
    parser.add_argument("--injections", default="0,2", help="comma-separated percentages")
    parser.add_argument("--programs", default="register", help="register, table or both (comma-separated)")
    parser.add_argument("--isolation", default="on", help="shootout's reserved CPUs: on, off or both")
    parser.add_argument("--tools", default="shootout,hyperfine+welch,shootout-old")
    parser.add_argument("--src", type=Path, default=HERE.parent / "src", help="shootout's src directory")
    parser.add_argument("--old-src", type=Path, help="src of the shootout to compare with (tool shootout-old)")
    parser.add_argument("--seconds", type=float, default=0.1, help="CPU seconds of one run of the program")
    parser.add_argument("--out", type=Path, default=Path("cheaper_verdicts.jsonl"), help="JSON lines, appended")
    parser.add_argument("--lock", type=Path, help="flock this file while measuring (the shared benchmark lock)")
    parser.add_argument("--hold", type=float, default=540.0, help="seconds to hold the lock at a time")
    parser.add_argument("--table", type=Path, help="only print the table of this results file")
    args = parser.parse_args()
    if args.table:
        print(table(Series(args.table).done))
        return
    tools = [t for t in args.tools.split(",") if t != "shootout-old" or args.old_src]
    lock = Lock(args.lock, args.hold)
    with scratch() as tmp:
        work = Path(tmp)
        binary = build_work(work)
        lock.refresh()
        programs = args.programs.split(",")
        iterations = {p: calibrate_cpu(binary, args.seconds, PROGRAMS[p]) for p in programs}
        print(f"work {iterations} iterations (~{args.seconds} s of CPU); {args.runs} runs per cell", flush=True)
        series = Series(args.out)
        done = series.done
        cells = [(condition, float(extra), program, isolation) for condition in args.conditions.split(",")
                 for extra in args.injections.split(",") for program in programs
                 for isolation in args.isolation.split(",")]
        for i in range(args.runs):  # every cell in turn: a series cut short still has them all
            for condition, extra, program, isolation in cells:
                toml = shootout_toml(work, binary, iterations[program], extra, PROGRAMS[program])
                for tool in tools:
                    if tool == "hyperfine+welch" and (isolation != args.isolation.split(",")[0] or PROGRAMS[program]):
                        continue  # hyperfine reserves nothing (once per cell) and runs the register loop only
                    key = (program, condition, tool, isolation if tool != "hyperfine+welch" else "off", extra, i)
                    if any((*_cell(r), r["extra"], r["i"]) == key for r in done):
                        continue  # resumed series
                    lock.refresh()
                    with on_off_load() if condition == "load" else nullcontext():
                        if tool == "hyperfine+welch":
                            r = welch_run(binary, iterations[program], extra, work / "hf.json")
                        else:
                            src = args.src if tool == "shootout" else args.old_src
                            home = work / f"home-{tool}-{condition}-{extra:g}-{program}-{isolation}-{i}"
                            r = shootout_run(src, home, toml, i + 1, isolate=isolation == "on")
                    line = {"condition": condition, "extra": extra, "tool": tool, "i": i, "uptime": lock.uptime,
                            "program": program, "isolation": key[3], "iterations": iterations[program], **r}
                    series.add(line)
    print(table(done))


if __name__ == "__main__":
    main()
