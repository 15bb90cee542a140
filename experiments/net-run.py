"""STOPGAP, delete when [[config]] tables pass their network keys to NetworkPart (issue 10).

Runs an experiment file whose configurations carry veth / drop / vpn / net keys, the way
`shootout run --file` will:

    python experiments/net-run.py experiments/drop-ladder.toml --db sqlite:///ladder.db [--seed N]
    shootout show last --db sqlite:///ladder.db
"""

from __future__ import annotations

import argparse
import dataclasses
import tomllib
from pathlib import Path

from shootout.configs import _config_from_table
from shootout.model import RunSettings
from shootout.net.part import NetOptions, NetworkPart
from shootout.runner import Runner, RunRequest
from shootout.store import Store
from shootout.system.journal import journal, recover
from shootout.workloads.registry import workload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("--db")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=float, default=1200.0, help="seconds")
    parser.add_argument("--max-rounds", type=int, default=12)
    args = parser.parse_args()
    data = tomllib.loads(args.file.read_text())
    configs = {}
    for i, table in enumerate(data["config"], 1):
        where = f"{args.file}: [[config]] #{i}"
        options = NetworkPart.parse(table, where) or NetOptions()
        problem = NetworkPart.problem(options)
        if problem:
            print(f"skipping {table['name']}: {problem}")
            continue
        base = _config_from_table({k: v for k, v in table.items() if k not in NetworkPart.KEYS}, where)
        configs[base.name] = dataclasses.replace(base, options=options.flat())
    recover()
    settings = RunSettings(seed=args.seed, budget_s=args.budget, max_rounds=args.max_rounds)
    request = RunRequest([configs[n] for n in data["run"]["configs"] if n in configs],
                         [workload(n) for n in data["run"]["workloads"]], settings)
    with journal() as j:
        run_id = Runner(Store(args.db), j).start(request)
    print(f"run {run_id} done: shootout show {run_id}" + (f" --db {args.db}" if args.db else ""))


if __name__ == "__main__":
    main()
