"""The counters pass's plan: the size a cachegrind pass runs at, the program whose code is
measured, and the PMU's counts read from perf's output under the names the why line uses."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.measure import counterpass
from shootout.measure.runstate import Live
from shootout.workloads.cpu import IntMix, PtrTree
from shootout.workloads.crypto import Sha1Sparse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "counters"


def live(wall_s: float, elapsed_s: float = 100.0) -> Live:
    trials = [Trial(TrialSpec(r, 0, "intmix", c), {"iterations": 1.0}, wall_s, wall_s, 0, 1000, 1, 0, "", 0.0)
              for r in range(1, 7) for c in ("a", "b")]
    run = Run(1, 0.0, "complete", RunSettings(), [Config("a"), Config("b")], [IntMix.spec, PtrTree.spec],
              {"intmix": {"iterations": 10_000_000}, "ptrtree": {"nodes": 2_000_000, "lookups": 500_000}},
              RunFacts())
    found = Live(run, {"intmix": IntMix(), "ptrtree": PtrTree()}, {}, {}, set(), trials)
    found.session_start = time.monotonic() - elapsed_s
    return found


def test_all_passes_together_get_a_tenth_of_the_rounds_time_and_at_least_two_seconds_each() -> None:
    assert counterpass.cap_s(live(0.3, elapsed_s=200.0), 4) == pytest.approx(5.0, rel=0.01)
    assert counterpass.cap_s(live(0.3, elapsed_s=20.0), 4) == counterpass.MIN_CAP_S


def test_a_pass_runs_the_work_parameter_scaled_to_end_within_its_cap_the_same_on_every_side() -> None:
    found = live(0.5)
    params, said = counterpass.scaled_params(found, found.workloads["intmix"], 5.0)
    expected = int(10_000_000 * (5.0 - counterpass.STARTUP_S) / (counterpass.SLOWDOWN * 0.5))
    assert params == {"iterations": expected} and said == f"iterations {expected:,} of 10,000,000"
    assert found.run.params["intmix"] == {"iterations": 10_000_000}  # the run's own are kept
    # a quick workload runs at the run's size; one without a work parameter too (then capped)
    assert counterpass.scaled_params(live(0.0001), found.workloads["intmix"], 5.0)[1] == ""
    found.run.params["sha1-sparse"] = {"size": 2_000_000_000}
    assert counterpass.scaled_params(found, Sha1Sparse(), 5.0) == ({"size": 2_000_000_000}, "")


class Files:
    """A place whose `perf stat` wrote the recorded PMU machine's output."""

    def __init__(self) -> None:
        self.ran: list[list[str]] = []

    def mkdir(self, path: str) -> str:
        return path

    def remove(self, path: str) -> None:
        pass

    def run(self, argv, **_kw):  # type: ignore[no-untyped-def]
        self.ran.append(list(argv))
        from shootout.execution.process import ProcResult
        return ProcResult(tuple(argv), 0, "", "", 0.1, 0.1, 0, 1, 1, 0.0)

    def read(self, path: str, limit: int | None = None) -> bytes:
        return (FIXTURES / "perfstat-pmu-handwritten.csv").read_bytes()


def test_on_a_pmu_machine_the_pass_reads_perf_under_the_why_lines_names() -> None:
    place = Files()
    record = counterpass._perf(place, ["/w/intmix", "100"], [], 5.0, "/w/counters-intmix")  # type: ignore[arg-type]
    assert place.ran[0][:3] == ["perf", "stat", "-x,"] and place.ran[0][-2:] == ["/w/intmix", "100"]
    assert record["source"] == "perf" and not record["partial"]
    assert set(record["counts"]) == {"instructions", "cycles", "ipc", "l1d_misses", "llc_misses", "dtlb_misses"}
    assert record["multiplexed"] == 62.5  # perf scaled a counter it ran part of the time: said with it
    assert record["counts"]["ipc"] == pytest.approx(record["counts"]["instructions"] / record["counts"]["cycles"])
