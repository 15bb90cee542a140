"""A drop-ladder rate at the generator's own ceiling is flagged on the rate's row: the generator's
figure, not the drop point's; the headline (receive-side cost per packet) is judged as before."""

from __future__ import annotations

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec

from shootout.base.runfacts import RunFacts
from shootout.judge.analysis import analyze
from shootout.judge.bound import GEN_BOUND, generator_flags
from shootout.workloads.net import DropRate


def trial(r: int, config: str, kpps: float, cost: float, ceiling: float | None = 1000.0) -> Trial:
    values = {"kpps": kpps, "rx_ns_per_packet": cost} | ({"gen_ceiling_kpps": ceiling} if ceiling else {})
    return Trial(TrialSpec(r, 0, "drop-rate", config), values, 5.0, 0.5, 0.1, 1, 1, 0, "", 0.0)


def test_only_a_rate_near_the_generators_ceiling_is_flagged() -> None:
    near = [trial(r, "xdp", 1000 * GEN_BOUND + 5, 300.0) for r in range(1, 7)]
    (flag,) = generator_flags(near, "kpps")
    assert flag.startswith("generator-bound: xdp 6/6 trials at ≥80% of the generator's own ceiling")
    assert generator_flags(near, "rx_ns_per_packet") == []  # the cost is the drop point's
    assert generator_flags([trial(r, "socket", 150.0, 4000.0) for r in range(1, 7)], "kpps") == []
    assert generator_flags([trial(r, "old", 990.0, 1.0, ceiling=None) for r in range(1, 7)], "kpps") == []


def test_the_analysis_puts_the_flag_on_the_rate_and_judges_the_cost() -> None:
    trials = [t for r in range(1, 9) for t in (trial(r, "socket", 150.0 + r, 4000.0 + r),
                                                 trial(r, "tc", 900.0 + r, 700.0 + r))]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("socket"), Config("tc")], [DropRate.spec],
              {}, RunFacts())
    comps = {c.metric: c for c in analyze(run, trials).comparisons}
    assert any(f.startswith("generator-bound: tc 8/8") for f in comps["kpps"].flags)
    assert not any(f.startswith("generator-bound") for f in comps["rx_ns_per_packet"].flags)
    assert comps["rx_ns_per_packet"].headline and comps["rx_ns_per_packet"].verdict.value == "faster"
