"""Recorded amounts in the analysis: per-configuration intervals from the trials' values and
what the parts observed, and the guard: a setup that lost tabs is never faster."""

from __future__ import annotations

import numpy as np

from shootout.analysis import analyze
from shootout.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.report.markdown import render_markdown
from shootout.stats import Verdict
from shootout.workloads.swap import Tabs


def trial(r: int, config: str, p95: float, killed: float, psi_full: float) -> Trial:
    values = {"p95_ms": p95, "p50_ms": p95 / 3, "p99_ms": p95 * 2, "switches_per_s": 10.0, "open_s": 1.0,
              "tabs_killed": killed, "major_faults": 0.0}
    return Trial(TrialSpec(r, 0, "tabs", config), values, 1.0, 0.5, 0.1, 1, 1, 0, "", 0.0,
                 observed={"memory": {"psi_full_ms": psi_full}})


def test_a_setup_that_loses_tabs_is_slower_however_fast_its_switches():
    rng = np.random.default_rng(5)
    trials = []
    for r in range(1, 9):  # "kills" switches 3x faster, but loses a tab every round
        trials += [trial(r, "keeps", 300 * np.exp(rng.normal(0, 0.05)), 0, 1000.0 + r),
                   trial(r, "kills", 100 * np.exp(rng.normal(0, 0.05)), 1, 50.0 + r)]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("keeps"), Config("kills")], [Tabs.spec],
              {"tabs": {}}, {})
    analysis = analyze(run, trials)
    head = next(c for c in analysis.comparisons if c.metric == "p95_ms")
    assert head.estimate is not None and head.estimate.low > 1  # by latency alone it would be faster...
    assert head.verdict is Verdict.SLOWER  # ...but it lost tabs
    assert "tabs_killed: lost 8 (baseline 0) over 8 rounds" in head.flags
    assert analysis.summaries[0].slower == 1
    amounts = {(a.name, a.config): a for a in analysis.amounts}
    killed, psi = amounts[("tabs_killed", "kills")], amounts[("memory.psi_full_ms", "keeps")]
    assert killed.values == (1.0,) * 8 and killed.interval.median == 1
    assert psi.interval.low <= psi.interval.median <= psi.interval.high and psi.unit == "ms"
    assert "## Recorded amounts" in render_markdown(analysis, {})


def test_equal_losses_leave_the_speed_up_verdict_alone():
    trials = [t for r in range(1, 9) for t in (trial(r, "a", 300.0 * (1 + r / 1000), 0, 1.0),
                                                 trial(r, "b", 100.0 * (1 + r / 900), 0, 1.0))]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("a"), Config("b")], [Tabs.spec], {"tabs": {}}, {})
    head = next(c for c in analyze(run, trials).comparisons if c.metric == "p95_ms")
    assert head.verdict is Verdict.FASTER and not any(f.startswith("tabs_killed") for f in head.flags)
