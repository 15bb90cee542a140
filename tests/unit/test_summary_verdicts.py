"""A Summary carries its geomean's and its categories' verdicts, judged when it is made with the
run's threshold by the same rule as every verdict (stats.verdict); renderers only read them."""

from __future__ import annotations

import dataclasses

import pytest

from shootout.base.model import (
    Config,
    Metric,
    Run,
    RunSettings,
    Trial,
    TrialSpec,
    WorkloadSpec,
)
from shootout.base.runfacts import RunFacts
from shootout.judge.analysis import Summary, analyze
from shootout.stats import Estimate, Verdict, verdict

ESTIMATES = [None, Estimate(1.002, 0.998, 1.006, 12, 0.95, "t"), Estimate(1.2, 1.1, 1.3, 12, 0.95, "t"),
             Estimate(0.8, 0.7, 0.9, 12, 0.95, "t"), Estimate(1.0, 0.9, 1.1, 12, 0.95, "t")]


@pytest.mark.parametrize("threshold", [0.001, 0.01, 0.05, 0.2])
@pytest.mark.parametrize("est", ESTIMATES)
def test_the_summary_s_verdicts_are_stats_verdicts_on_its_estimates(est: Estimate | None, threshold: float) -> None:
    by_category = {"cpu": est, "memory": ESTIMATES[2], "io": None}
    summary = Summary("b", est, by_category, 0, 0, 0, 0, threshold=threshold)
    assert summary.verdict is verdict(est, threshold)
    assert summary.category_verdicts == {cat: verdict(e, threshold) for cat, e in by_category.items()}
    other = dataclasses.replace(summary, geomean=ESTIMATES[3])  # a changed estimate is judged again
    assert other.verdict is verdict(ESTIMATES[3], threshold)


def _spec(name: str, category: str) -> WorkloadSpec:
    return WorkloadSpec(name=name, category=category, description="", metrics=(Metric("ops", "ops/s"),),
                        headline="ops")


@pytest.mark.parametrize("threshold", [0.01, 0.3])
def test_an_analysis_summary_judges_with_the_run_s_threshold(threshold: float) -> None:
    specs = [_spec("w1", "cpu"), _spec("w2", "memory")]
    trials = [Trial(TrialSpec(r, 0, spec.name, cfg), {"ops": (100.0 if cfg == "a" else 120.0 + i) + r % 3},
                    1.0, 0.5, 0.1, 1, 1, 0, "", 0.0)
              for r in range(1, 13) for i, spec in enumerate(specs) for cfg in ("a", "b")]
    run = Run(1, 0.0, "complete", RunSettings(threshold=threshold, max_rounds=12), [Config("a"), Config("b")],
              specs, {}, RunFacts(machine={}))
    summary = analyze(run, trials).summaries[0]
    assert summary.geomean is not None and summary.threshold == threshold
    assert summary.verdict is verdict(summary.geomean, threshold)
    assert summary.category_verdicts == {cat: verdict(est, threshold) for cat, est in summary.by_category.items()}
    assert set(summary.category_verdicts) == {"cpu", "memory"}
    assert summary.verdict is (Verdict.FASTER if threshold == 0.01 else Verdict.SAME)
