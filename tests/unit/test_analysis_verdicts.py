"""analyze(): verdicts for headline metrics only, the rule named, short workloads left out of the geomean."""

from __future__ import annotations

import numpy as np

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
from shootout.judge.analysis import analyze
from shootout.stats import Verdict

TWO = WorkloadSpec("two", "cpu", "two metrics", (Metric("rate", "ops/s"), Metric("sub", "ops/s")), "rate")
NOISY = WorkloadSpec("noisy", "cpu", "noisy", (Metric("rate", "ops/s"),), "rate")
SHORT = WorkloadSpec("short", "cpu", "stopped early", (Metric("rate", "ops/s"),), "rate")


def trial(r: int, workload: str, config: str, values: dict[str, float]) -> Trial:
    return Trial(TrialSpec(r, 0, workload, config), values, 0.5, 0.5, 0.0, 1, 1, 0, "", 0.0)


def test_headline_verdicts_sub_metric_estimates_and_a_short_workload_left_out():
    rng = np.random.default_rng(3)
    trials = []
    for r in range(1, 21):
        for config, factor in (("A", 1.0), ("B", 1.10)):
            trials.append(trial(r, "two", config, {"rate": 100 * factor * np.exp(rng.normal(0, 0.005)),
                                                   "sub": 50 * factor * np.exp(rng.normal(0, 0.005))}))
            trials.append(trial(r, "noisy", config, {"rate": 100 * np.exp(rng.normal(0, 0.2))}))
            if r <= 3:  # a workload the budget cut short
                trials.append(trial(r, "short", config, {"rate": 100 * np.exp(rng.normal(0, 0.01))}))
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=20), [Config("A"), Config("B")], [TWO, NOISY, SHORT],
              {w.name: {} for w in (TWO, NOISY, SHORT)}, RunFacts())
    analysis = analyze(run, trials)
    by = {(c.workload, c.metric): c for c in analysis.comparisons}
    head, sub, noisy = by[("two", "rate")], by[("two", "sub")], by[("noisy", "rate")]
    assert head.verdict is Verdict.FASTER and sub.verdict is Verdict.ESTIMATE
    assert "Bonferroni over 3 headline comparisons" in head.estimate.rule and "sequential" in head.estimate.rule
    assert sub.estimate.rule.startswith("sequential") and "Bonferroni" not in sub.estimate.rule
    assert noisy.verdict is Verdict.INCONCLUSIVE and noisy.resolution is not None
    assert noisy.resolution.resolves > 0.01 and noisy.resolution.seconds is not None  # 1 s a round here
    assert by[("short", "rate")].estimate is None
    summary = analysis.summaries[0]
    assert summary.left_out == ("short (3 rounds)",) and summary.geomean is not None
    assert any("leaves out short" in note for note in analysis.notes)
    assert summary.faster == 1 and summary.inconclusive == 2  # verdicts count headline metrics only
    assert any("Sequential rule" in rule for rule in analysis.rules)


def _three_workloads(rounds: int, facts: RunFacts) -> tuple[Run, list[Trial]]:
    rng = np.random.default_rng(11)
    specs = [WorkloadSpec(name, "cpu", name, (Metric("rate", "ops/s"), Metric("sub", "ops/s")), "rate")
             for name in ("w1", "w2", "w3")]
    trials = [trial(r, spec.name, config, {"rate": 100 * factor * np.exp(rng.normal(0, 0.01)),
                                           "sub": 50 * factor * np.exp(rng.normal(0, 0.01))})
              for r in range(1, rounds + 1) for spec in specs for config, factor in (("A", 1.0), ("B", 1.05))]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=20), [Config("A"), Config("B")], specs,
              {s.name: {} for s in specs}, facts)
    return run, trials


def test_a_headline_before_the_rule_s_first_look_shows_its_estimate_and_says_why_it_has_no_verdict():
    """Nine rounds of three headline workloads (Bonferroni over 3, looks 6-20: the first look is round 11):
    the sub-metric has an interval from the same rounds, so the headline shows one too, as an
    estimate without a verdict, and says the first look is the reason, not 'too few rounds'."""
    from shootout.report.text import fmt_comparison

    run, trials = _three_workloads(9, RunFacts())
    analysis = analyze(run, trials)
    by = {(c.workload, c.metric): c for c in analysis.comparisons}
    head, sub = by[("w1", "rate")], by[("w1", "sub")]
    assert sub.estimate is not None
    assert head.estimate is not None and head.estimate.low > 1.0
    assert head.verdict is Verdict.NOT_JUDGED and head.resolution is None
    assert "round 11" in head.why and "first look" in head.why
    assert "too few rounds" not in fmt_comparison(head)
    assert analysis.summaries[0].verdict is Verdict.NOT_JUDGED and "round 11" in analysis.summaries[0].why


def test_emulated_rows_say_that_emulated_results_never_get_verdicts():
    """An emulated side: neither 'inconclusive' with rounds it would need, nor 'too few
    rounds', at any number of rounds; the suite says the same."""
    from shootout.report.text import fmt_comparison, summary_sentence

    facts = RunFacts(sides={"B": {"target": {"emulated": True}}})
    for rounds in (3, 9, 20):
        run, trials = _three_workloads(rounds, facts)
        analysis = analyze(run, trials)
        for head in (c for c in analysis.comparisons if c.headline):
            assert head.verdict is Verdict.NOT_JUDGED and head.resolution is None
            assert "emulated results never get verdicts" in head.why
            assert "too few rounds" not in fmt_comparison(head)
        summary = analysis.summaries[0]
        assert summary.verdict is Verdict.NOT_JUDGED and "emulated" in summary.why
        sentence = summary_sentence(analysis, summary)
        assert "emulated results never get verdicts" in sentence and "needs more rounds" not in sentence
