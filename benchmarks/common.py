"""What the benchmark scripts here share: the fixed C program, the background load, shootout itself."""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build_work(directory: Path) -> Path:
    """Compile work.c into `directory`; needs a C compiler (Debian: gcc)."""
    binary = directory / "work"
    subprocess.run(["cc", "-O2", "-o", str(binary), str(HERE / "work.c")], check=True)
    return binary


def calibrate(binary: Path, seconds: float = 0.2) -> int:
    """Iterations for which one run of `binary` takes about `seconds` of wall time (median of 5)."""
    iterations = 10_000_000
    for _ in range(6):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([str(binary), str(iterations)], check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        iterations = int(iterations * seconds / statistics.median(times))
    return iterations


def _busy(on_s: float, period_s: float, stop: multiprocessing.synchronize.Event) -> None:
    while not stop.is_set():
        phase = time.time() % period_s
        if phase < on_s:
            end = time.time() + on_s - phase
            while time.time() < end:
                pass
        else:
            stop.wait(period_s - phase)


@contextmanager
def on_off_load(cpus: int = 2, on_s: float = 1.3, off_s: float = 1.7) -> Iterator[None]:
    """Every CPU busy for on_s, idle for off_s, repeating, for as long as the block runs."""
    stop = multiprocessing.Event()
    workers = [multiprocessing.Process(target=_busy, args=(on_s, on_s + off_s, stop), daemon=True)
               for _ in range(cpus)]
    for w in workers:
        w.start()
    try:
        yield
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=5)
            if w.is_alive():
                w.kill()


def shootout(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHOOTOUT_HOME": str(home), "SHOOTOUT_LOAD_WAIT": "0s"}
    return subprocess.run([sys.executable, "-m", "shootout", *args], capture_output=True, text=True, env=env)


def shootout_toml(directory: Path, binary: Path, iterations: int, extra_pct: float, table_kib: int = 0) -> Path:
    """Two configurations of the host that differ only in BENCH_EXTRA_PCT, one workload: `work`
    (with table_kib, the program that reads and writes a table of that many KiB at random)."""
    path = directory / f"bench-{extra_pct:g}-{table_kib}.toml"
    table = f', "{table_kib}"' if table_kib else ""
    path.write_text(
        '[run]\nconfigs = ["A", "B"]\n\n'
        '[[config]]\nname = "A"\nspec = "host"\nenv = { BENCH_EXTRA_PCT = "0" }\n\n'
        f'[[config]]\nname = "B"\nspec = "host"\nenv = {{ BENCH_EXTRA_PCT = "{extra_pct:g}" }}\n\n'
        f'[[workload]]\nname = "work"\ncommand = ["{binary}", "{iterations}"{table}]\n'
    )
    return path


def hyperfine(binary: Path, iterations: int, extra_pct: float, out: Path, runs: int | None = None) -> dict:
    """hyperfine on the two commands (as a user would run it: one warm-up, its default run count)."""
    commands = [f"env BENCH_EXTRA_PCT={pct:g} {binary} {iterations}" for pct in (0, extra_pct)]
    count = ["--runs", str(runs)] if runs else []
    subprocess.run(["hyperfine", "-N", "--warmup", "1", *count, "--style", "none", "--export-json", str(out),
                    *commands], check=True, capture_output=True)
    return json.loads(out.read_text())


def scratch() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="shootout-bench-")


class Series:
    """A resumable series of results, one JSON object a line: what its file holds already, and
    each new result appended (at once, so a series cut short keeps it) and printed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: list[dict] = [json.loads(x) for x in path.read_text().splitlines() if x.strip()] \
            if path.exists() else []

    def add(self, line: dict) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(line) + "\n")
        self.done.append(line)
        print(json.dumps(line), flush=True)
