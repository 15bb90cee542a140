"""Settings switched per trial by the runner, on a fake /proc/sys tree read by a fake workload."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from shootout import parts
from shootout.base.model import Config, RunSettings
from shootout.judge.analysis import analyze
from shootout.measure.runner import Runner, RunRequest
from shootout.parts.settings import SettingsPart
from shootout.places.fake import SCRIPTS
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "root"
    (root / "proc/sys/vm").mkdir(parents=True)
    (root / "proc/sys/vm/dirty_ratio").write_text("20\n")
    monkeypatch.setitem(parts.PARTS, "settings", SettingsPart(root))
    return root


def start(tmp_path: Path, tree: Path, interrupt: bool = False) -> tuple[Store, Journal]:
    def script(argv: Sequence[str], config: str, n: int) -> str:
        value = (tree / "proc/sys/vm/dirty_ratio").read_text().strip()
        if interrupt and value == "50":
            raise KeyboardInterrupt  # Ctrl-C during a trial of the configuration that changed it
        return f"ratio: {value}\n"

    SCRIPTS["parts"] = script
    options = (("script", "parts"),)
    configs = [Config(name="plain", target="fake", options=options),
               Config(name="dirty", target="fake", options=options,
                      parts={"settings": {"sysctl": {"vm.dirty_ratio": "50"}}})]
    work = CommandWorkload({"name": "ratio", "command": "x", "regex": r"ratio: (\d+)", "unit": "score"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    journal = Journal(tmp_path)
    Runner(store, journal).start(RunRequest(configs, [work], RunSettings(seed=3, max_rounds=6)))
    return store, journal


def test_every_trial_is_measured_with_its_configurations_value(tmp_path, tree):
    store, journal = start(tmp_path, tree)
    run = store.get_run("last")
    trials = store.trials(run.id, include_warmup=True)
    assert len(trials) == 14  # warm-up and six rounds, interleaved
    for t in trials:
        expected = "50" if t.spec.config == "dirty" else "20"
        assert t.values == {"value": float(expected)}
        assert t.in_force == {"settings": {"vm.dirty_ratio": expected}}
    assert (tree / "proc/sys/vm/dirty_ratio").read_text().strip() == "20"  # undone after the run
    assert journal.pending == []
    assert "what is compared: vm.dirty_ratio = 20 (plain), 50 (dirty)" in analyze(run, trials).notes


def test_ctrl_c_puts_the_original_back(tmp_path, tree):
    with pytest.raises(KeyboardInterrupt):
        start(tmp_path, tree, interrupt=True)
    assert (tree / "proc/sys/vm/dirty_ratio").read_text().strip() == "20"
    assert Store(f"sqlite:///{tmp_path / 'r.db'}").get_run("last").status == "interrupted"


class _Counting(parts.PartSession):
    """A part that wraps each trial in `env TRIAL=n` and reports n after it."""

    def __init__(self) -> None:
        self.n = 0

    def apply(self, config: Config) -> None:
        self.n += 1

    def wrap(self, config: Config) -> list[str]:
        return ["env", f"TRIAL={self.n}"] if config.name == "wrapped" else []

    def after_trial(self, config: Config) -> dict[str, int]:
        return {"trial": self.n}

    def close(self) -> list[str]:
        return []


class _CountingPart(parts.Part):
    name = "counting"
    keys = ("counting",)

    def parse(self, table, where):
        return table["counting"]

    def open(self, configs, journal, scratches):
        return _Counting()


def test_parts_wrap_the_trial_command_and_record_what_they_saw(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setitem(parts.PARTS, "counting", _CountingPart())
    configs = [Config(name="plain", parts={"counting": True}), Config(name="wrapped", parts={"counting": True})]
    work = CommandWorkload({"name": "seen", "command": "echo value: ${TRIAL:-1000}", "regex": r"value: (\d+)",
                            "unit": "score"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    Runner(store, Journal(tmp_path)).start(RunRequest(configs, [work], RunSettings(seed=1, max_rounds=6)))
    trials = store.trials(store.get_run("last").id, include_warmup=True)
    for t in trials:
        # the wrapper ran around the command of its configuration's trials only
        assert t.values["value"] == (t.observed["counting"]["trial"] if t.spec.config == "wrapped" else 1000)
    assert sorted(t.observed["counting"]["trial"] for t in trials) == list(range(1, len(trials) + 1))
