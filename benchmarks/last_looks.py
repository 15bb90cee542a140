"""How often sha1-sparse ends undecided at its last look, and when it decides, for last looks of
50 to 219 rounds: the main job's design (4 headline comparisons), rounds resampled from the
paired log ratios of stored main-job runs (each run's own, centred and shifted to 9% slower, the
difference i386 shows), 400 simulated runs per last look.

    python3 benchmarks/last_looks.py --db /var/tmp/shootout-bench-home/results.db --from-run 40 --to-run 103

The rounds are drawn independently, so a slow spell that outlasts a round is not kept together:
the figures are a guide to the choice of the last look, not a run's own.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from shootout.stats import decided  # noqa: E402
from shootout.stats.design import Design  # noqa: E402


def stored_noise(db: Path, from_run: int, to_run: int) -> list[np.ndarray]:
    """Per stored main-job run (no experiment) from run `from_run` to `to_run`: sha1-sparse's per-round
    log ratios i386/amd64, centred on their median; runs of fewer than 13 rounds left out."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    runs = [rid for rid, s in con.execute("select id, settings from runs where id between ? and ? order by id",
                                              (from_run, to_run))
            if not json.loads(s).get("experiment")]
    pools = []
    for rid in runs:
        by: dict[int, dict[str, float]] = {}
        for rnd, cfg, values in con.execute("select round, config, \"values\" from trials where run_id=? and "
                                            "workload='sha1-sparse' and warmup=0", (rid,)):
            by.setdefault(rnd, {})[cfg.split(":")[-1]] = json.loads(values).get("sha1sum_mbps")
        ratios = np.array([math.log(r["i386"] / r["amd64"]) for r in by.values() if r.get("i386") and r.get("amd64")])
        if len(ratios) >= 13:
            pools.append(ratios - np.median(ratios))
    return pools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, default=Path("/var/tmp/shootout-bench-home/results.db"))
    parser.add_argument("--from-run", type=int, default=1)
    parser.add_argument("--to-run", type=int, default=10**9)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    pools = stored_noise(args.db, args.from_run, args.to_run)
    print(f"{len(pools)} stored runs; their sd of the paired log ratio: median "
          f"{np.median([p.std() for p in pools]):.2f}, {min(p.std() for p in pools):.2f}-{max(p.std() for p in pools):.2f}")
    rng = np.random.default_rng(args.seed)
    effect = math.log(1 / 1.09)
    for last in (50, 90, 145, 219):
        design = Design(0.95, 4, (6, last))
        first = design.first_look()
        assert first is not None
        stops = []
        for sim in range(400):
            d = effect + rng.choice(pools[sim % len(pools)], size=last)
            stops.append(next((n for n in range(first, last + 1) if decided(design.estimate(d[:n]), 0.01, 0.005)),
                              None))
        done = np.array([n if n is not None else last + 1 for n in stops])
        print(f"last look {last}: first look {first}; undecided {np.mean(done > last):.1%}; decided by round 50 "
              f"{np.mean(done <= min(50, last)):.1%}, by 90 {np.mean(done <= min(90, last)):.1%}; median stop "
              f"{np.median(done):.0f}")


if __name__ == "__main__":
    main()
