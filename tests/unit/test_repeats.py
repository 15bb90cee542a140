"""The rule that measures a trial again when other programs interrupted it (conditions/repeats.py).
Its error rates under load are simulated in test_stats_simulation.py."""

from __future__ import annotations

from shootout.base.model import RunSettings, Trial, TrialSpec
from shootout.conditions.repeats import (
    QUIET_WAIT_S,
    STEADY_AFTER,
    STEADY_WAITS,
    Repeats,
    interrupted,
    others_share,
)

REPEATS = RunSettings.repeats


def trial(others_s: float, wall_s: float = 0.2, round_: int = 1, error: str | None = None) -> Trial:
    return Trial(TrialSpec(round_, 0, "w", "A"), {"wall": wall_s}, wall_s, wall_s, 0.0, 1, 1, 0, "", 0.0,
                 {"others_cpu_s": others_s, "others_cpus": others_s / wall_s}, error=error)


def test_interrupted_means_a_quarter_cpu_and_more_than_three_ticks() -> None:
    assert interrupted(trial(0.06))  # 0.3 CPUs over 0.2 s
    assert not interrupted(trial(0.04))  # 0.2 CPUs
    assert not interrupted(trial(0.02, wall_s=0.01))  # 2 CPUs, but two ticks: /proc/stat cannot tell
    assert others_share({}) is None and not interrupted(Trial(TrialSpec(1, 0, "w", "A"), {}, 1, 1, 0, 1, 1, 0, "", 0))


def test_an_interrupted_trial_is_measured_again_up_to_the_allowed_times() -> None:
    repeats = Repeats(REPEATS)
    assert [repeats.again(trial(0.1), attempt) for attempt in range(REPEATS + 1)] == [True] * REPEATS + [False]
    assert not repeats.again(trial(0.0), 0)
    assert not Repeats(0).again(trial(0.1), 0)


def test_the_warm_up_and_failed_trials_are_never_measured_again() -> None:
    repeats = Repeats(REPEATS)
    assert not repeats.again(trial(0.1, round_=0), 0)
    assert not repeats.again(trial(0.1, error="exit status 1"), 0)
    assert repeats.attempts == 0


def test_steady_load_stops_the_repeats_until_it_lets_up() -> None:
    repeats = Repeats(REPEATS)
    for _ in range(STEADY_AFTER):
        repeats.again(trial(0.1), REPEATS)  # the last attempt of each: counted, kept
    assert repeats.steady and not repeats.again(trial(0.1), 0)
    for _ in range(10):
        repeats.again(trial(0.0), 0)
    assert not repeats.steady and repeats.again(trial(0.1), 0)


def test_waits_that_find_no_quiet_moment_mean_steady_load_until_an_attempt_is_quiet() -> None:
    repeats = Repeats(REPEATS)
    for _ in range(STEADY_WAITS - 1):
        repeats.again(trial(0.1), 0)
        repeats.waited(QUIET_WAIT_S)
    repeats.waited(0.3)  # this one found quiet: the count starts again
    for _ in range(STEADY_WAITS):
        repeats.waited(QUIET_WAIT_S)
    assert repeats.steady and not repeats.again(trial(0.1), 0)
    assert not repeats.again(trial(0.0), 0) and not repeats.steady
