"""Comparisons across stored runs: which interval for which design, and its labels."""

from __future__ import annotations

import numpy as np
import pytest

from shootout.base.errors import UsageError
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
from shootout.judge.analysis import WITHIN_RUN
from shootout.judge.crossrun import (
    compare_members,
    members_by_label,
    members_by_run,
    members_by_side,
)
from shootout.stats import Verdict

SPEC = WorkloadSpec("bench", "user", "a benchmark", (Metric("rate", "ops/s"), Metric("extra", "ops/s")), "rate")
OTHER = WorkloadSpec("other", "user", "another", (Metric("rate", "ops/s"),), "rate")


def make_run(run_id: int, level: dict[str, float], rng: np.random.Generator, rounds: int = 12,
             spec: WorkloadSpec = SPEC) -> tuple[Run, list[Trial]]:
    """A run of `spec` with one configuration per key of `level` (its true ops/s), 2% noise."""
    configs = [Config(name=name, label=name) for name in level]
    offset = rng.normal(0, 0.01)  # this run's own offset, shared by its configurations
    trials = [Trial(TrialSpec(r, 0, spec.name, c), {m.name: level[c] * np.exp(offset + rng.normal(0, 0.02))
                                                     for m in spec.metrics},
                    1.0, 1.0, 0.0, 1000, 1, 0, "", 0.0)
              for r in range(1, rounds + 1) for c in level]
    run = Run(run_id, 0.0, "complete", RunSettings(seed=run_id), configs, [spec], {spec.name: {}}, RunFacts())
    return run, trials


def test_one_run_per_side_is_labelled_within_run_only_everywhere():
    rng = np.random.default_rng(1)
    (a, ta), (b, tb) = make_run(3, {"host": 100.0}, rng), make_run(7, {"host": 110.0}, rng)
    analysis = compare_members(members_by_run([a, b], [ta, tb]))
    head = next(c for c in analysis.comparisons if c.headline)
    assert head.estimate.method.startswith("mann-whitney") and WITHIN_RUN in head.flags
    assert any(WITHIN_RUN in note for note in analysis.notes)
    assert analysis.summaries[0].note == WITHIN_RUN
    extra = next(c for c in analysis.comparisons if c.metric == "extra")
    assert extra.verdict is Verdict.ESTIMATE and head.verdict is not Verdict.ESTIMATE


def test_two_or_more_runs_per_side_compare_run_means():
    rng = np.random.default_rng(2)
    side_a = [make_run(i, {"host": 100.0}, rng) for i in (1, 2, 3)]
    side_b = [make_run(i, {"host": 105.0}, rng) for i in (4, 5, 6)]
    analysis = compare_members(members_by_side([side_a, side_b]))
    head = next(c for c in analysis.comparisons if c.headline)
    assert head.estimate.method == "welch on run means" and head.estimate.n == 6
    assert WITHIN_RUN not in head.flags and not any(WITHIN_RUN in n for n in analysis.notes)
    assert [c.display for c in analysis.configs] == ["host (runs 1+2+3)", "host (runs 4+5+6)"]
    assert analysis.summaries[0].geomean.method == "welch on run means" and not analysis.summaries[0].note


def test_replicated_runs_of_both_configurations_compare_per_run_paired_means():
    rng = np.random.default_rng(3)
    runs = [make_run(i, {"amd64": 100.0, "i386": 90.0}, rng) for i in (1, 2, 3)]
    analysis = compare_members(members_by_label([r for r, _ in runs], [t for _, t in runs]))
    head = next(c for c in analysis.comparisons if c.headline)
    assert head.estimate.method == "t on per-run paired means" and head.estimate.n == 3
    assert head.estimate.low < 0.9 < head.estimate.high


def test_two_configurations_of_one_run_stay_paired():
    rng = np.random.default_rng(4)
    run, trials = make_run(9, {"A": 100.0, "B": 120.0}, rng)
    analysis = compare_members(members_by_run([run], [trials]))
    head = next(c for c in analysis.comparisons if c.headline)
    assert head.paired and head.estimate.method == "wilcoxon-exact" and head.verdict is Verdict.FASTER


def test_runs_sharing_no_workload_are_refused():
    rng = np.random.default_rng(5)
    (a, ta), (b, tb) = make_run(1, {"host": 1.0}, rng), make_run(2, {"host": 1.0}, rng, spec=OTHER)
    with pytest.raises(UsageError, match="share no workload") as err:
        compare_members(members_by_run([a, b], [ta, tb]))
    assert err.value.hint


def test_two_configurations_of_one_sequential_import_are_unpaired():
    rng = np.random.default_rng(6)
    run, trials = make_run(9, {"A": 100.0, "B": 120.0}, rng)
    run.settings = RunSettings(interleaved=False)  # e.g. hyperfine: all of A, then all of B
    analysis = compare_members(members_by_run([run], [trials]))
    head = next(c for c in analysis.comparisons if c.headline)
    assert not head.paired and head.estimate.method.startswith("mann-whitney") and WITHIN_RUN in head.flags
    assert analysis.summaries[0].geomean is not None and analysis.summaries[0].note == WITHIN_RUN


def test_runs_that_judged_different_headlines_are_compared_on_the_base_ones_and_say_so():
    # a newer definition of the workload judges "extra" (as flac moved to its CPU time): the older
    # run's headline is the one both recorded, and the note names what each run judged
    rng = np.random.default_rng(7)
    newer = WorkloadSpec(SPEC.name, SPEC.category, SPEC.description, SPEC.metrics, "extra", timing="its CPU time")
    (a, ta), (b, tb) = make_run(3, {"host": 100.0}, rng), make_run(7, {"host": 110.0}, rng, spec=newer)
    analysis = compare_members(members_by_run([a, b], [ta, tb]))
    assert [c.metric for c in analysis.comparisons if c.headline] == ["rate"]
    assert any("judged different headlines (rate in run 3; extra in run 7): compared on rate" in n
               for n in analysis.notes)
    # the other way round, the base run's headline is missing from the older run: not compared
    lacking = WorkloadSpec(SPEC.name, SPEC.category, SPEC.description, (Metric("rate", "ops/s"),), "rate")
    (c, tc) = make_run(8, {"host": 100.0}, rng, spec=lacking)
    analysis = compare_members(members_by_run([b, c], [tb, tc]))
    assert not [x for x in analysis.comparisons if x.workload == SPEC.name]
    assert any("(extra in run 7; rate in run 8); run 8 has no extra: not compared" in n for n in analysis.notes)
