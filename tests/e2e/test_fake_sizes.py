"""The runner sizes the work once, from every side's facts: the tightest memory and pointer width
of any side, not the baseline's alone."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from shootout.base.model import Config, RunSettings
from shootout.execution.placefacts import TargetFacts
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import FACTS, SCRIPTS, FakeTarget
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

SIDES = {"A": replace(FACTS, available_bytes=16 << 30, address_bits=64),
         "B": replace(FACTS, available_bytes=1 << 30, address_bits=32)}


class Sided(FakeTarget):
    def probe(self) -> TargetFacts:
        return SIDES[self.config.name]


class Sized(CommandWorkload):
    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"available": facts.available_bytes, "bits": facts.address_bits}


def test_the_run_sizes_its_work_by_the_smallest_side(tmp_path) -> None:
    SCRIPTS["sizes"] = lambda argv, config, n: "value: 1\n"
    configs = [Config(name=n, target="fake", options=(("script", "sizes"),)) for n in ("A", "B")]
    work = Sized({"name": "w", "command": ["w"], "regex": r"value: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = Runner(store, Journal(tmp_path), target_factory=lambda c, j: Sided(c, j)).start(
        RunRequest(configs, [work], RunSettings(seed=1, max_rounds=6, min_rounds=6)))
    assert store.get_run(run_id).params["w"] == {"available": 1 << 30, "bits": 32}
