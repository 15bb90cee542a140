"""The settings of `shootout run`, decided once: the shootout.toml file (--file) or the named
experiment is loaded here, and the precedence applied for each setting:

    the command-line option > the file's or the experiment's own > the built-in default

for the threshold (δ), the budget, the rounds (min, max) and the prices. Everything after this
(the request, the runner, the analysis, the reports, the experiments' paragraphs) uses the one
Settings record; none of them reads an option or a [run] table for these again.

Where each comes from:
- threshold: --threshold, else the [run] threshold of --file or of the experiment, else 1%;
- budget and max rounds: --budget and --max-rounds, else a named experiment's own (its sizing,
  experiments/limits.py), else 4 minutes and 50 rounds; a --budget below what the experiment's
  first verdict needs here is refused (not with --partial);
- min rounds: --min-rounds (6, the least for a 95% interval, by default);
- prices: --price CONFIG=PRICE, read here and checked against the configurations once they are
  known (request.priced), in --price-unit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shootout.base.errors import UsageError
from shootout.configs.specs import FileSettings, load_file
from shootout.experiments.limits import LastRun, run_limits
from shootout.request import values
from shootout.request.prices import read_prices

DEFAULT_THRESHOLD = 0.01  # δ of `shootout run` when neither --threshold nor a [run] table gives one


@dataclass(frozen=True)
class Asked:
    """What the command line gave for the settings, as typed (None: not given)."""

    experiment: str | None = None
    file: Path | None = None
    threshold: str | None = None
    budget: str | None = None
    min_rounds: int = 6
    max_rounds: int | None = None
    partial: bool = False
    confidence: str = "95%"
    precision: str | None = None
    prices: Sequence[str] = ()
    price_unit: str = "$/h"


@dataclass(frozen=True)
class Settings:
    """The run's settings, each decided once (see the module's docstring)."""

    threshold: float
    precision: float
    confidence: float
    budget_s: float
    min_rounds: int
    max_rounds: int
    prices: dict[str, float] = field(default_factory=dict)  # config name -> price, as given
    price_unit: str = "$/h"
    tables: FileSettings = field(default_factory=FileSettings)  # of --file or the experiment, loaded once
    where: str = "shootout.toml"  # where the tables come from, for messages


def load_tables(experiment: str | None, file: Path | None) -> FileSettings:
    """The tables of --file, or of the named experiment (which is one such file)."""
    if experiment:
        from shootout.experiments import experiment as named_experiment

        named = named_experiment(experiment)
        settings = named.settings()
        if file and named.machines:  # the file names the machines (and groups of them)
            loaded = load_file(file)
            if extra := [k for k, v in (("[run]", loaded.run), ("[[workload]]", loaded.workloads),
                                        ("[params]", loaded.params)) if v]:
                raise UsageError(f"{file}: {', '.join(extra)} with --experiment {named.name}: the experiment "
                                 "chooses what runs", "keep only [[config]] tables (the machines) in the file")
            settings.configs = loaded.configs
        elif file:
            raise UsageError("--file and --experiment both name what to run", "give one of them")
        return settings
    return load_file(file) if file else FileSettings()


def where_of(experiment: str | None, file: Path | None) -> str:
    """Where the tables come from, as messages name it."""
    return f"experiment {experiment}" if experiment else str(file or "shootout.toml")


def _threshold(asked: Asked, tables: FileSettings, where: str) -> float:
    """δ: the user's --threshold, else the [run] threshold of the experiment or --file, else 1%."""
    if asked.threshold is not None:
        return values.threshold(asked.threshold)
    own = tables.run.get("threshold") if (asked.experiment or asked.file) else None
    return values.threshold(str(own), f"{where}: [run] threshold") if own is not None else DEFAULT_THRESHOLD


def resolve_settings(asked: Asked, last_run: Callable[[str], LastRun | None] = lambda name: None,
                     tables: FileSettings | None = None) -> Settings:
    """Load the file or the experiment once and decide every setting from it and the options.

    last_run: the named experiment's newest run on this machine (its measured round checks a
    --budget against what the first verdict needs here); asked only when a --budget is given.
    tables: already loaded ones (else loaded here)."""
    if tables is None:
        tables = load_tables(asked.experiment, asked.file)
    where = where_of(asked.experiment, asked.file)
    delta = _threshold(asked, tables, where)
    level = values.confidence(asked.confidence)
    given = values.budget(asked.budget) if asked.budget is not None else None
    last = last_run(asked.experiment) if asked.experiment and given is not None else None
    budget_s, rounds = run_limits(asked.experiment, given, asked.max_rounds, partial=asked.partial,
                                  confidence=level, min_rounds=asked.min_rounds, last=last)
    return Settings(
        threshold=delta, precision=values.precision(asked.precision, delta), confidence=level,
        budget_s=budget_s, min_rounds=asked.min_rounds, max_rounds=max(rounds, asked.min_rounds),
        prices=read_prices(asked.prices), price_unit=asked.price_unit, tables=tables, where=where,
    )
