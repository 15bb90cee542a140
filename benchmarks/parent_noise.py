"""Is shootout's runner as quiet as hyperfine? Trial-to-trial cv of one fixed command under both.

One fixed CPU-bound program (work.c, about 0.2 s) is timed in alternating blocks, side by side
in one session: hyperfine (`hyperfine -N --runs N`), then shootout (an A/A run of the same
command with exactly N rounds, so 2N trials). Per block the coefficient of variation of the
trials' wall times; the result is the median over blocks of each tool's cv and their ratio.
The target: shootout's cv within 1.2x of hyperfine's (its parent must not add noise:
no writes, monitor samples or progress redraws while a trial runs).

    .venv/bin/python benchmarks/parent_noise.py                  # 6 blocks of 30 runs
    .venv/bin/python benchmarks/parent_noise.py --blocks 3 --runs 20

Needs: cc (gcc), hyperfine, and shootout installed in the running Python (the repo's venv).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from common import build_work, calibrate, hyperfine, scratch, shootout, shootout_toml


def cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values)


def shootout_block(home: Path, toml: Path, runs: int, seed: int) -> float:
    done = shootout("run", "--file", str(toml), "-w", "work", "--seed", str(seed),
                    "--min-rounds", str(runs), "--max-rounds", str(runs), "--budget", "1h", home=home)
    if done.returncode != 0:
        raise SystemExit(f"shootout run failed: {done.stderr.strip()}")
    exported = json.loads(shootout("export", "last", "--format", "json", home=home).stdout)
    walls = [t["wall_s"] for t in exported["trials"] if t["spec"]["round"] > 0]
    return cv(walls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--runs", type=int, default=30, help="hyperfine runs and shootout rounds per block")
    args = parser.parse_args()
    with scratch() as tmp:
        work = Path(tmp)
        binary = build_work(work)
        iterations = calibrate(binary)
        toml = shootout_toml(work, binary, iterations, 0.0)
        hf, so = [], []
        for block in range(args.blocks):
            doc = hyperfine(binary, iterations, 0.0, work / "hf.json", runs=args.runs)
            hf.append(cv([t for r in doc["results"] for t in r["times"]]))
            so.append(shootout_block(work / f"home-{block}", toml, args.runs, seed=block + 1))
            print(f"block {block + 1}: cv hyperfine {hf[-1]:.2%}  shootout {so[-1]:.2%}", flush=True)
        ratio = statistics.median(so) / statistics.median(hf)
        print(f"median cv: hyperfine {statistics.median(hf):.2%}, shootout {statistics.median(so):.2%}; "
              f"ratio {ratio:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
