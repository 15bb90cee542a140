"""A Summary carries its geomean's and its categories' verdicts, judged when it is made with the
run's threshold by the same rule as every verdict (stats.verdict); renderers only read them."""

from __future__ import annotations

import dataclasses

import numpy as np
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


def _one_workload_run(seed: int, slower: float, rounds: int, sigma: float) -> tuple[Run, list[Trial]]:
    """One C-like program timed under a and b, b `slower` longer, each trial's own noise sigma."""
    rng = np.random.default_rng(seed)
    spec = WorkloadSpec(name="loop", category="cpu", description="", metrics=(Metric("time", "s"),),
                        headline="time")
    trials = [Trial(TrialSpec(r, 0, "loop", cfg), {"time": 0.16 * (1 + (slower if cfg == "b" else 0.0))
                                                  * float(np.exp(rng.normal(0, sigma)))}, 1.0, 0.5, 0.1, 1, 1, 0,
                    "", 0.0)
              for r in range(1, rounds + 1) for cfg in ("a", "b")]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=rounds), [Config("a"), Config("b")], [spec], {},
              RunFacts(machine={}))
    return run, trials


def test_with_one_workload_the_geomean_is_that_workload_and_the_sentence_agrees() -> None:
    """200 seeded one-workload runs (b 0% or 2% longer, 0.5-2% noise, 12-30 rounds): the suite's
    estimate and verdict are the workload's, and the sentence says the row's verdict. Before:
    the geomean was a plain 95% t-interval beside the row's adjusted Wilcoxon interval, and
    the sentence disagreed with the row in some runs."""
    from shootout.report.text import summary_sentence

    words = {Verdict.FASTER: "faster than", Verdict.SLOWER: "slower than", Verdict.SAME: "perform the same",
             Verdict.INCONCLUSIVE: "No clear winner"}
    disagree = []
    for seed in range(200):
        run, trials = _one_workload_run(seed, (0.0, 0.02)[seed % 2], 12 + seed % 19, (0.005, 0.01, 0.02)[seed % 3])
        analysis = analyze(run, trials)
        row, summary = analysis.comparisons[0], analysis.summaries[0]
        sentence = summary_sentence(analysis, summary)
        if (summary.geomean != row.estimate or summary.verdict is not row.verdict
                or summary.category_verdicts.get("cpu") is not row.verdict or words[row.verdict] not in sentence):
            disagree.append((seed, str(row.verdict), str(summary.verdict), sentence))
    assert not disagree, disagree[:3]


def test_category_geomeans_carry_the_rule_of_the_rows() -> None:
    """Three headline workloads: 'memory' holds one (its geomean is its row), 'cpu' two (their
    geomean's interval follows the rows' rule: sequential and Bonferroni over the run's three
    headline comparisons, not a plain 95%). Before: membw-like rows inconclusive beside a
    'slower' category geomean."""
    rng = np.random.default_rng(7)
    specs = [_spec("int1", "cpu"), _spec("int2", "cpu"), _spec("membw", "memory")]
    trials = [Trial(TrialSpec(r, 0, spec.name, cfg),
                    {"ops": 100.0 * (0.86 if cfg == "b" else 1.0) * float(np.exp(rng.normal(0, 0.07)))},
                    1.0, 0.5, 0.1, 1, 1, 0, "", 0.0)
              for r in range(1, 15) for spec in specs for cfg in ("a", "b")]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=14), [Config("a"), Config("b")], specs, {},
              RunFacts(machine={}))
    analysis = analyze(run, trials)
    rows = {c.workload: c for c in analysis.comparisons}
    summary = analysis.summaries[0]
    assert summary.by_category["memory"] == rows["membw"].estimate
    assert summary.category_verdicts["memory"] is rows["membw"].verdict
    rule = rows["int1"].estimate.rule
    assert "Bonferroni over 3" in rule
    for est in (summary.by_category["cpu"], summary.geomean):
        assert est.rule == rule and est.confidence == 0.95


def test_a_suite_whose_rows_are_decided_both_ways_is_not_said_to_need_more_rounds() -> None:
    """w1 5% faster, w2 3% slower, both decided: the geomean (about +1%) straddles the threshold,
    and the sentence says the workloads go both ways, not that more rounds are needed."""
    from shootout.report.text import summary_sentence

    rng = np.random.default_rng(9)
    specs = [_spec("w1", "cpu"), _spec("w2", "cpu")]
    gain = {"w1": 1.05, "w2": 1 / 1.03}
    trials = [Trial(TrialSpec(r, 0, spec.name, cfg), {"ops": 100.0 * (gain[spec.name] if cfg == "b" else 1.0)
                                                      * float(np.exp(rng.normal(0, 0.004)))},
                    1.0, 0.5, 0.1, 1, 1, 0, "", 0.0)
              for r in range(1, 21) for spec in specs for cfg in ("a", "b")]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=20), [Config("a"), Config("b")], specs, {},
              RunFacts(machine={}))
    analysis = analyze(run, trials)
    summary = analysis.summaries[0]
    assert (summary.faster, summary.slower, summary.verdict) == (1, 1, Verdict.INCONCLUSIVE)
    sentence = summary_sentence(analysis, summary)
    assert "needs more rounds" not in sentence and "the workloads go both ways" in sentence
