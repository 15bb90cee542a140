"""The settings of `shootout run`, decided once: the shootout.toml file (--file) or the named
experiment is loaded here, and the precedence applied for each setting:

    the command-line option > the [run] table of the file or the experiment > the default

for the threshold (δ), the budget, the rounds (min, max) and the prices. Everything after this
(the request, the runner, the analysis, the reports, the experiments' paragraphs) uses the one
Settings record; none of them reads an option or a [run] table for these again.

Where each comes from:
- threshold: --threshold, else threshold = "5%" in [run], else 1%;
- budget and max rounds: --budget and --max-rounds, else budget = "10m" and max_rounds = 30 in
  [run], else a named experiment's own (its sizing, experiments/limits.py), else 4 minutes and
  at least 50 rounds: without a max_rounds given, the last look is planned after the warm-up
  from what the budget pays for (measure/roundplan.py); a budget below what the experiment's first verdict needs here is refused (not with
  --partial);
- the size of a named experiment's workloads: --size writeup, its write-up's own (each experiment's
  writeup_params, with its own round time and limit: experiments/writeup.py), else the experiment's
  cut size; --size writeup without --experiment is refused;
- min rounds: --min-rounds, else min_rounds = 8 in [run], else 6 (the least for a 95% interval);
- prices: --price CONFIG=PRICE, else prices = ["CONFIG=PRICE", ...] in [run], else none; read
  here, checked against the configurations once they are known (request.priced); their unit
  --price-unit, else price_unit = "$" in [run], else $/h.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shootout.base.errors import UsageError
from shootout.configs.specs import FileSettings, load_file
from shootout.experiments.limits import LastRun, run_limits
from shootout.experiments.sizing import DEFAULT_SIZE, SIZES, WRITEUP_SIZE, planned_at_run
from shootout.request import values
from shootout.request.prices import read_prices

DEFAULT_THRESHOLD = 0.01  # δ of `shootout run` when neither --threshold nor a [run] table gives one
DEFAULT_MIN_ROUNDS = 6  # the least for a 95% interval
DEFAULT_PRICE_UNIT = "$/h"


@dataclass(frozen=True)
class Asked:
    """What the command line gave for the settings, as typed (None: not given)."""

    experiment: str | None = None
    file: Path | None = None
    threshold: str | None = None
    budget: str | None = None
    min_rounds: int | None = None
    max_rounds: int | None = None
    partial: bool = False
    confidence: str = "95%"
    precision: str | None = None
    prices: Sequence[str] = ()
    price_unit: str | None = None
    size: str = DEFAULT_SIZE  # --size: the experiment's own, or "writeup"


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
    size: str = DEFAULT_SIZE  # the named experiment's: its own, or the write-up's
    # no max_rounds given and the budget pays for the default's: the last look is planned after
    # the warm-up from what the budget pays for (measure/roundplan.py), max_rounds the floor
    rounds_by_budget: bool = False


def check_size(size: str, experiment: str | None) -> None:
    """--size names one of the sizes, and writeup only with an experiment (a file's sizes are its own)."""
    if size not in SIZES:
        raise UsageError(f"--size {size!r} is not a size", f"use one of: {', '.join(SIZES)}")
    if size == WRITEUP_SIZE and not experiment:
        raise UsageError("--size writeup needs --experiment: only a named experiment knows its write-up's sizes",
                         "add --experiment NAME (see: shootout experiments), or set sizes with --set WORKLOAD.PARAM=VALUE")


def load_tables(experiment: str | None, file: Path | None, size: str = DEFAULT_SIZE) -> FileSettings:
    """The tables of --file, or of the named experiment (which is one such file) at that size."""
    check_size(size, experiment)
    if experiment:
        from shootout.experiments import experiment as named_experiment

        named = named_experiment(experiment)
        settings = named.settings(size)
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


def _own(tables: FileSettings, where: str, key: str) -> tuple[object | None, str]:
    """A [run] setting of the file or the experiment, and how a message names it."""
    return tables.run.get(key), f"{where}: [run] {key}"


def _threshold(asked: Asked, tables: FileSettings, where: str) -> float:
    """δ: the user's --threshold, else the [run] threshold of the experiment or --file, else 1%."""
    if asked.threshold is not None:
        return values.threshold(asked.threshold)
    own, said = _own(tables, where, "threshold")
    return values.threshold(str(own), said) if own is not None else DEFAULT_THRESHOLD


def _rounds(own: object, said: str) -> int:
    if isinstance(own, bool) or not isinstance(own, int) or own < 1:
        raise UsageError(f"{said} = {own!r} is not a number of rounds", "write a whole number, e.g. 20")
    return own


def _min_rounds(asked: Asked, tables: FileSettings, where: str) -> int:
    """--min-rounds, else the [run] min_rounds, else 6 (the option itself is checked with the others)."""
    if asked.min_rounds is not None:
        return asked.min_rounds
    own, said = _own(tables, where, "min_rounds")
    if own is None:
        return DEFAULT_MIN_ROUNDS
    if _rounds(own, said) < DEFAULT_MIN_ROUNDS:
        raise UsageError(f"{said} {own} is too few", "a 95% interval needs at least 6 rounds")
    return own  # type: ignore[return-value]


def _prices(asked: Asked, tables: FileSettings, where: str) -> tuple[dict[str, float], str]:
    """--price, else the [run] prices; --price-unit, else the [run] price_unit, else $/h."""
    items: object = list(asked.prices)
    if not items and (own := _own(tables, where, "prices")[0]) is not None:
        if not isinstance(own, list) or not all(isinstance(item, str) for item in own):
            raise UsageError(f"{where}: [run] prices must be a list of CONFIG=PRICE texts",
                             'e.g. prices = ["ssh:host-a=0.408", "ssh:host-b=0.768"]')
        items = own
    unit = asked.price_unit if asked.price_unit is not None else str(tables.run.get("price_unit", DEFAULT_PRICE_UNIT))
    return read_prices(items), unit  # type: ignore[arg-type]


def resolve_settings(asked: Asked, last_run: Callable[[str], LastRun | None] = lambda name: None,
                     tables: FileSettings | None = None) -> Settings:
    """Load the file or the experiment once and decide every setting from it and the options.

    last_run: the named experiment's newest run on this machine (its measured round checks a
    --budget against what the first verdict needs here); asked only when a --budget is given.
    tables: already loaded ones (else loaded here)."""
    if tables is None:
        tables = load_tables(asked.experiment, asked.file, asked.size)
    where = where_of(asked.experiment, asked.file)
    delta = _threshold(asked, tables, where)
    level = values.confidence(asked.confidence)
    min_rounds = _min_rounds(asked, tables, where)
    given = values.budget(asked.budget) if asked.budget is not None else None
    if given is None and (own := _own(tables, where, "budget"))[0] is not None:
        given = values.budget(str(own[0]), own[1])
    max_rounds = asked.max_rounds
    if max_rounds is None and (own := _own(tables, where, "max_rounds"))[0] is not None:
        max_rounds = _rounds(*own)
    if max_rounds is not None and max_rounds < min_rounds:  # raised to the minimum, the run would outlast what was asked
        said = "--max-rounds" if asked.max_rounds is not None else f"{where}: [run] max_rounds ="
        raise UsageError(f"{said} {max_rounds} is below the minimum of {min_rounds} rounds",
                         f"give --max-rounds {min_rounds} or more, or a lower --min-rounds (at least {DEFAULT_MIN_ROUNDS})")
    last = last_run(asked.experiment) if asked.experiment and given is not None else None
    budget_s, rounds = run_limits(asked.experiment, given, max_rounds, partial=asked.partial,
                                  confidence=level, min_rounds=min_rounds, last=last, size=asked.size)
    prices, price_unit = _prices(asked, tables, where)
    return Settings(
        threshold=delta, precision=values.precision(asked.precision, delta), confidence=level,
        budget_s=budget_s, min_rounds=min_rounds, max_rounds=max(rounds, min_rounds),
        prices=prices, price_unit=price_unit, tables=tables, where=where, size=asked.size,
        rounds_by_budget=max_rounds is None and planned_at_run(rounds),
    )
