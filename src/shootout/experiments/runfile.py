"""A named experiment as a run file (`shootout experiments show NAME --toml`).

The file holds what `shootout run --experiment NAME` decides: its [[config]] and [[workload]]
tables with this machine's sides in place of $native and $companion, its [params] at the size
asked for, and in [run] its workloads, sides, threshold, budget and rounds, so that
`shootout run --file FILE` runs the same comparison; the report's paragraph beside the write-up
is the experiment's alone (a file run has none).
"""

from __future__ import annotations

from typing import Any

from shootout.configs.tomltext import dumps
from shootout.experiments.sizing import DEFAULT_SIZE, WRITEUP_SIZE, minutes
from shootout.experiments.writeup import Experiment

DEFAULT_THRESHOLD = "1%"  # `shootout run`'s, written out so the file says it
MIN_ROUNDS = 6


def _comments(named: Experiment, size: str) -> list[str]:
    at = " at the write-up's sizes" if size == WRITEUP_SIZE else ""
    lines = [f"shootout experiment {named.name}{at}, as a run file: shootout run --file THIS_FILE",
             f"reproduces {named.reproduces}",
             f"the write-up's figures: {named.cited}",
             f"what: {named.description}"]
    if size == WRITEUP_SIZE:
        lines.append(f"sizes: the write-up's: {named.writeup_note}" if named.cuts else
                     "sizes: the write-up's (this experiment cuts none)")
    elif named.sizing.note:
        lines.append(f"sizes: cut to fit its time here: {named.sizing.note}")
    if "$native" in named.toml or "$companion" in named.toml:
        lines.append("sides: this machine's 64-bit Debian architecture and its 32-bit companion")
    elif not named.machines and not named.tables(size).get("run", {}).get("configs"):
        lines.append("sides: none named, so shootout run's own: this machine's native Debian userspace and its "
                     "32-bit companion (or -c A -c B)")
    if named.machines:
        lines.append("name your machines: -c ssh:HOST for each (or [[config]] tables), and --price NAME=PRICE")
    lines.append("budget and max_rounds: the experiment's own, sized from its round time on 2 cores")
    lines.append(f"the paragraph beside the write-up comes with: shootout run --experiment {named.name}"
                 + (" --size writeup" if size == WRITEUP_SIZE else ""))
    return lines


def run_tables(named: Experiment, size: str = DEFAULT_SIZE) -> dict[str, Any]:
    """The experiment's tables at that size, with its decided settings in [run]."""
    data = named.tables(size)
    own = named.plan(size=size)
    run = data.setdefault("run", {})
    run.setdefault("threshold", DEFAULT_THRESHOLD)
    run.setdefault("min_rounds", MIN_ROUNDS)
    run["budget"] = minutes(own.budget_s)
    run["max_rounds"] = own.max_rounds
    return data


def run_file(named: Experiment, size: str = DEFAULT_SIZE) -> str:
    """`shootout experiments show NAME --toml`: the run file's text, with comments."""
    return dumps(run_tables(named, size), _comments(named, size))
