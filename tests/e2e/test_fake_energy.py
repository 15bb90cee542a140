"""Energy through a --meter command: every trial of this machine records its joules, each side
gets a median with an interval, the why section says the work per joule; a meter that gives
no watts is the run's one-line error before anything is measured."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.base.model import Config, RunSettings
from shootout.judge.analysis import analyze
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.report.why import why_lines
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

WATTS = {"A": 4.0, "B": 2.0}  # B draws half the power for the same work in the same time


def start(tmp_path: Path, meter: str) -> tuple[Store, int]:
    power = tmp_path / "watts"
    power.write_text("0\n")

    def script(argv, config, n):  # the meter reads what "the machine" draws while the trial runs
        power.write_text(f"{WATTS[config]}\n")
        time.sleep(0.2)  # long beside the meter's sampling: a busy machine's late sample stays inside the trial
        return "throughput: 1000\n"

    SCRIPTS["energy"] = script
    configs = [Config(name=n, target="fake", options=(("script", "energy"),)) for n in ("A", "B")]
    work = CommandWorkload({"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    settings = RunSettings(seed=3, budget_s=600, min_rounds=8, max_rounds=8, meter=meter.replace("FILE", str(power)))
    return store, Runner(store, Journal(tmp_path)).start(RunRequest(configs, [work], settings))


def test_a_meter_gives_each_trial_its_joules_and_the_work_per_joule(tmp_path: Path) -> None:
    store, run_id = start(tmp_path, "cat FILE")
    run = store.get_run(run_id)
    trials = store.trials(run_id)
    assert all("joules" in t.observed.get("energy", {}) for t in trials if t.spec.round > 0)
    assert run.facts.machine["energy"]["label"].startswith("meter: cat ")
    analysis = analyze(run, trials)
    joules = {a.config: a.interval for a in analysis.amounts if a.name == "energy.joules"}
    assert joules["B"].median < joules["A"].median  # the same work on half the power
    per_watt = next(line for line in why_lines(analysis) if "performance per watt" in line)
    ratio = float(per_watt.split("work per joule ")[1].split("\u00d7")[0])
    assert 1.3 < ratio < 3.0, per_watt


def test_a_meter_that_gives_no_watts_is_one_line_and_keeps_no_run(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--meter gives no reading") as err:
        start(tmp_path, "echo not-a-number")
    assert "\n" not in err.value.message
    assert Store(f"sqlite:///{tmp_path / 'r.db'}").list_runs() == []
