"""Wall time of one workload on 1, 2 and 4 local "machines" (an sshd each, see
tests/integration/sshd.py), every trial one after another (--sequential) against the machines
in parallel (the default). Needs root. Run under the shared lock:

    flock /tmp/shootout-bench.lock env PYTHONPATH=src python benchmarks/parallel_machines.py

The local machines share this machine's CPUs, so the parallel speed-up is bounded by its cores
(2 here); remote machines each bring their own. Prints one line per (machines, mode): the
command's wall time, the time before its first trial (starting, opening and preparing the
machines: in parallel too, unless --sequential), and the measuring span (first trial's start to
last trial's end).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from sshd import start_machines, toml_table  # noqa: E402

# about 0.3 s of one CPU per trial here
SPIN = ('[[workload]]\nname = "spin"\ncommand = "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done"\n'
        'metric = "wall"\nunit = "s"\n')


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="shootout-bench-machines-"))
    servers = start_machines(base, 4)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "SHOOTOUT_HOME": str(base / "home"),
           "SHOOTOUT_LOAD_WAIT": "0s"}
    try:
        toml = base / "machines.toml"
        toml.write_text(SPIN + "".join(toml_table(s, s.alias) for s in servers))
        print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
        for n in (1, 2, 4):
            for mode in ("--sequential", "--parallel"):
                db = base / f"{n}{mode}.db"
                args = [sys.executable, "-m", "shootout", "run", "--file", str(toml), "-w", "spin", "--seed", "1",
                        "--min-rounds", "12", "--max-rounds", "12", "--repeats", "0", "--no-monitor", mode,
                        "--db", f"sqlite:///{db}"]
                for i in range(1, n + 1):
                    args += ["-c", f"machine{i}"]
                t0, began = time.monotonic(), time.time()
                done = subprocess.run(args, env=env, capture_output=True, text=True)
                wall = time.monotonic() - t0
                if done.returncode != 0:
                    raise SystemExit(done.stderr)
                with sqlite3.connect(db) as conn:
                    first, last, work = conn.execute(
                        "select min(started_at), max(started_at + wall_s), sum(wall_s) from trials").fetchone()
                print(f"{n} machine(s) {mode:13s} command {wall:6.1f} s   before the first trial {first - began:5.1f} s   "
                      f"measuring span {last - first:6.1f} s   trials' own wall time {work:6.1f} s", flush=True)
        print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    finally:
        for server in servers:
            server.stop()


if __name__ == "__main__":
    main()
