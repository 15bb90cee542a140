"""The pi3desk-swap experiment by hand, through shootout's swap modules (root; until the runner
applies configuration parts, see src/shootout/swap/parts.py).

    SHOOTOUT_HOME=/tmp/sh .venv/bin/python benchmarks/pi3desk_swap.py --rounds 6 --out results.json

Rounds in a seeded shuffled order (shootout.plan), round 0 a discarded warm-up; per setup:
p95 switch latency, tabs lost and PSI full with their median intervals, the paired speed-up
of each setup's p95 over the baseline (the first setup) with the tabs-lost guard, the zswap
and zram compression ratios, and the experiment's paragraph.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import statistics
import sys
import tomllib
from contextlib import ExitStack
from typing import Any

from shootout.model import Config
from shootout.plan import round_order
from shootout.stats import paired_estimate, verdict
from shootout.stats.recorded import guarded_verdict, median_interval
from shootout.swap import experiment
from shootout.swap.parts import PARTS
from shootout.system.journal import journal
from shootout.targets.host import HostTarget
from shootout.workloads.swap import Tabs


def measure(rounds: int, seed: int, params: dict[str, Any]) -> dict[str, list[dict[str, float]]]:
    tables = {t["name"]: t for t in tomllib.loads(experiment.CONFIGS)["config"]}
    specs = {c: {p.key: p.parse(t[p.key], c) if p.key in t else None for p in PARTS} for c, t in tables.items()}
    for config, parts in specs.items():
        for part in PARTS:
            if parts[part.key] is not None and (why := part.problem(parts[part.key], parts)):
                sys.exit(f"error: {config}: {why}")
    workload, target = Tabs(), HostTarget(Config("host"))
    prepared = workload.prepare(target, params)
    out: dict[str, list[dict[str, float]]] = {c: [] for c in tables}
    with journal() as j, ExitStack() as stack:
        runs = []
        for part in PARTS:
            run = part.open(j, specs)
            stack.callback(run.close)
            runs.append(run)
        for r in range(rounds + 1):
            for spec in round_order(seed, r, ["tabs"], list(tables)):
                config = spec.config
                state = [run.apply(config) for run in runs]
                with runs[0].trial(config) as h0, runs[1].trial(config) as h1:
                    result = target.run(h1.wrap(workload.argv(prepared, params)), timeout=900)
                if result.exit_status != 0:
                    sys.exit(f"error: {config}: {result.stderr_tail(2)}")
                row = {"round": r, **workload.parse(result, params), **workload.recorded(result),
                       **h0.recorded, **h1.recorded}
                zswap_state = state[0].get("zswap") or {}
                print(f"round {r} {config:6} p95 {row['p95_ms']:8.1f} ms  lost {row['tabs_killed']:4.0f}  "
                      f"psi full {row.get('psi_full_ms', 0):8.0f} ms  zswap {zswap_state.get('enabled')} "
                      f"swaps {[a['path'] for a in state[0]['swap_areas'] if a['shootout']]}", flush=True)
                if r > 0:
                    out[config].append(row)
    target.close()
    return out


def _interval(rows: list[dict[str, float]], key: str) -> str:
    values = [row[key] for row in rows if key in row]
    if not values:
        return "-"
    got = median_interval(values)
    return f"{statistics.median(values):.4g}" + (f" [{got.low:.4g}, {got.high:.4g}]" if got else " (too few rounds)")


def report(results: dict[str, list[dict[str, float]]]) -> str:
    lines = [f"{'setup':7} {'p95 ms':>24} {'tabs lost':>18} {'PSI full ms':>24} {'pool ratio':>16}"]
    for config, rows in results.items():
        ratio = "zswap_ratio" if config == "zswap" else "zram_ratio"
        lines.append(f"{config:7} {_interval(rows, 'p95_ms'):>24} {_interval(rows, 'tabs_killed'):>18} "
                     f"{_interval(rows, 'psi_full_ms'):>24} {_interval(rows, ratio):>16}")
    base = next(iter(results))
    lines.append(f"\np95 speed-up over {base} (paired by round; guard: tabs lost):")
    for config, rows in list(results.items())[1:]:
        a = {row["round"]: row for row in results[base]}
        b = {row["round"]: row for row in rows}
        common = sorted(a.keys() & b.keys())
        est = paired_estimate([math.log(a[r]["p95_ms"] / b[r]["p95_ms"]) for r in common])
        plain = verdict(est, 0.01)
        final, why = guarded_verdict(plain, {r: a[r]["tabs_killed"] for r in common},
                                     {r: b[r]["tabs_killed"] for r in common})
        shown = f"{est.ratio:.2f}x [{est.low:.2f}, {est.high:.2f}]" if est else "no interval"
        lines.append(f"  {config:6} {shown:24} speed-up {plain}, verdict {final}" + (f" ({why})" if why else ""))
    summary = {c: experiment.SetupResult(statistics.median(r["p95_ms"] for r in rows),
                                         sum(r["tabs_killed"] for r in rows),
                                         statistics.median(r.get("psi_full_ms", 0) for r in rows))
               for c, rows in results.items()}
    lines.append("\n" + experiment.paragraph(summary))
    return "\n".join(lines)


def main() -> None:
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # undo the journal on `kill` too
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--switches", type=int, default=300)
    ap.add_argument("--max-seconds", type=int, default=30)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    params = {**Tabs().default_params(), **experiment.PARAMS["tabs"], "switches": args.switches,
              "max_seconds": args.max_seconds}
    results = measure(args.rounds, args.seed, params)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"params": params, "configs": experiment.CONFIGS, "results": results}, fh, indent=1)
    print(report(results))


if __name__ == "__main__":
    main()
