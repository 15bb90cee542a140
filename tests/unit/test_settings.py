"""The settings of `shootout run` are decided once (request/settings.py): the option beats the
[run] table of the file (or of the experiment), which beats an experiment's own sizing, which
beats the built-in default; for the threshold, the budget, the rounds and the prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.configs.specs import FileSettings
from shootout.experiments import experiment
from shootout.experiments import writeup as experiments_base
from shootout.experiments.sizing import DEFAULT_BUDGET_S, MAX_ROUNDS
from shootout.request.request import Wish, build_request
from shootout.request.settings import DEFAULT_THRESHOLD, Asked, resolve_settings


@pytest.fixture
def on_a_pc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(experiments_base, "host_arch", lambda: "amd64")
    monkeypatch.setattr(experiments_base, "kernel_arch", lambda: "amd64")


@pytest.fixture
def toml(tmp_path: Path) -> Path:
    path = tmp_path / "s.toml"
    path.write_text('[run]\nthreshold = "3%"\nbudget = "20m"\nmin_rounds = 8\nmax_rounds = 30\n'
                    'prices = ["a=0.4", "b=0.8"]\nprice_unit = "EUR"\n')
    return path


def test_the_built_in_defaults() -> None:
    decided = resolve_settings(Asked())
    assert decided.threshold == DEFAULT_THRESHOLD == 0.01 and decided.precision == 0.005
    assert (decided.budget_s, decided.min_rounds, decided.max_rounds) == (DEFAULT_BUDGET_S, 6, MAX_ROUNDS)
    assert decided.prices == {} and decided.price_unit == "$/h" and decided.confidence == 0.95


def test_the_file_beats_the_defaults(toml: Path) -> None:
    decided = resolve_settings(Asked(file=toml))
    assert decided.threshold == pytest.approx(0.03)
    assert (decided.budget_s, decided.min_rounds, decided.max_rounds) == (1200.0, 8, 30)
    assert decided.prices == {"a": 0.4, "b": 0.8} and decided.price_unit == "EUR"
    assert decided.tables.run["threshold"] == "3%" and decided.where == str(toml)


def test_the_option_beats_the_file(toml: Path) -> None:
    decided = resolve_settings(Asked(file=toml, threshold="2%", budget="5m", min_rounds=10, max_rounds=12,
                                     prices=["a=1", "b=3"], price_unit="$"))
    assert decided.threshold == pytest.approx(0.02)
    assert (decided.budget_s, decided.min_rounds, decided.max_rounds) == (300.0, 10, 12)
    assert decided.prices == {"a": 1.0, "b": 3.0} and decided.price_unit == "$"


def test_the_experiment_beats_the_defaults_and_the_option_beats_the_experiment(on_a_pc: None) -> None:
    own = experiment("rpi-network")
    decided = resolve_settings(Asked(experiment="rpi-network"))
    plan = own.plan()
    assert own.threshold is not None and own.threshold != DEFAULT_THRESHOLD
    assert decided.threshold == pytest.approx(own.threshold)
    assert (decided.budget_s, decided.max_rounds) == (plan.budget_s, plan.max_rounds)
    decided = resolve_settings(Asked(experiment="rpi-network", threshold="1%", budget="60m", max_rounds=40))
    assert decided.threshold == 0.01 and (decided.budget_s, decided.max_rounds) == (3600.0, 40)


def test_a_run_table_beats_the_experiment_s_own_sizing() -> None:
    """An experiment's [run] table (here: one already loaded) is a file: its budget and rounds
    win over what the experiment's sizing gives, and the options over both."""
    tables = FileSettings(run={"budget": "20m", "max_rounds": 30, "min_rounds": 8, "prices": ["a=1"]})
    decided = resolve_settings(Asked(experiment="rpi64"), tables=tables)
    assert (decided.budget_s, decided.min_rounds, decided.max_rounds) == (1200.0, 8, 30)
    assert decided.prices == {"a": 1.0}
    plan = experiment("rpi64").plan()
    assert (resolve_settings(Asked(experiment="rpi64")).budget_s,
            resolve_settings(Asked(experiment="rpi64")).max_rounds) == (plan.budget_s, plan.max_rounds)
    decided = resolve_settings(Asked(experiment="rpi64", budget="60m", max_rounds=40, min_rounds=6), tables=tables)
    assert (decided.budget_s, decided.min_rounds, decided.max_rounds) == (3600.0, 6, 40)


def test_the_file_s_values_are_checked_and_named(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    for table, said in (('min_rounds = 3', r"s.toml: \[run\] min_rounds 3 is too few"),
                        ('max_rounds = "many"', r"s.toml: \[run\] max_rounds = 'many' is not a number of rounds"),
                        ('budget = "0s"', r"s.toml: \[run\] budget 0s leaves no time to measure"),
                        ('threshold = "0%"', r"s.toml: \[run\] threshold 0%: a verdict needs a threshold"),
                        ('prices = "a=1"', r"s.toml: \[run\] prices must be a list of CONFIG=PRICE texts")):
        path.write_text(f"[run]\n{table}\n")
        with pytest.raises(UsageError, match=said):
            resolve_settings(Asked(file=path))


def test_the_file_is_loaded_once(toml: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shootout.request import settings

    loads: list[Path] = []
    real = settings.load_file
    monkeypatch.setattr(settings, "load_file", lambda path: loads.append(path) or real(path))
    decided = resolve_settings(Asked(file=toml))
    assert loads == [toml]
    build_request(Wish(configs=["host"], workloads=["intmix"], file=toml, tables=decided.tables), lambda _: None)
    assert loads == [toml]  # the request reads the tables the settings loaded
