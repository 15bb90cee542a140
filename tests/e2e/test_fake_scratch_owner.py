"""A run makes one owner of each configuration's scratch area and hands that same object to the
target that puts the workload's files there and to the parts that describe it; it closes the
area once, when the run ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import shootout.measure.runner
from shootout.base.model import Config, RunSettings, aa_copy
from shootout.measure.runner import Runner, RunRequest
from shootout.parts import RunParts
from shootout.places.fake import SCRIPTS, FakeTarget
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

attached: list[tuple[Any, Path]] = []  # (the target's scratch owner, the area's host path)
handed: list[Any] = []  # the scratches the runner handed the parts


class Disky(FakeTarget):
    def attach_scratch(self, host_path: Path) -> str:
        attached.append((self._scratch_owner, host_path))
        assert host_path.is_dir()
        return str(host_path)


class SpyParts(RunParts):
    def __init__(self, configs, journal, scratches=None) -> None:  # type: ignore[no-untyped-def]
        handed.append(scratches)
        super().__init__(configs, journal, scratches)


def test_the_run_hands_one_owner_to_the_target_and_the_parts(tmp_path, monkeypatch) -> None:
    attached.clear()
    handed.clear()
    monkeypatch.setattr(shootout.measure.runner, "RunParts", SpyParts)
    SCRIPTS["disk"] = lambda argv, config, n: "value: 1\n"
    original = Config(name="A", target="fake", options=(("script", "disk"),))
    configs = [original, aa_copy(original)]
    work = CommandWorkload({"name": "w", "command": ["w"], "regex": r"value: ([0-9.]+)", "unit": "ops/s",
                            "scratch": "disk"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    (tmp_path / "journal").mkdir()
    journal = Journal(tmp_path / "journal")
    run_id = Runner(store, journal, target_factory=lambda c, j: Disky(c, j)).start(
        RunRequest(configs, [work], RunSettings(seed=1, max_rounds=2, min_rounds=2)))
    run = store.get_run(run_id)
    assert run.status == "complete"
    [(owner, host_path)] = attached  # one area, attached once: the copy shares its original's target
    [scratches] = handed
    assert scratches.of(original) is owner and scratches.of(configs[1]) is owner
    # The scratch part recorded the facts of the very area the target attached.
    assert run.facts.side("A")["scratch"]["path"] == str(host_path) == run.facts.side("A~again")["scratch"]["path"]
    assert owner.area is None and not host_path.exists() and journal.pending == []  # closed by the run
