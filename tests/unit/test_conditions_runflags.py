"""Condition flags against the run's typical trial: said once when everywhere, flagged where more."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from shootout.base.model import Trial, TrialSpec
from shootout.conditions.runflags import RunConditions

WORKLOADS = ("a", "b", "c", "d")
BEST_MHZ = 1500.0


def window(**kw: Any) -> dict[str, Any]:
    base = {"max_temp_c": 50.0, "min_mhz": BEST_MHZ, "max_steal_pct": 0.0, "max_load": 1.0, "max_runq": 1,
            "others_cpu_s": 0.0, "others_cpus": 0.0, "throttled": False, "cpus": 2, "samples": 2}
    return base | kw


def trials(changed: dict[tuple[int, str], dict[str, Any]] | None = None, everywhere: dict[str, Any] | None = None,
           rounds: int = 6) -> list[Trial]:
    """Every workload on configurations A and B for `rounds` rounds; `changed` by (round, workload)."""
    out = []
    for r in range(1, rounds + 1):
        for w in WORKLOADS:
            for c in "AB":
                monitor = window(**(everywhere or {}) | ((changed or {}).get((r, w), {}) if c == "B" else {}))
                out.append(Trial(TrialSpec(r, 0, w, c), {"v": 1.0}, 1.0, 1.0, 0.0, 1, 1, 0, "", 0.0, monitor))
    return out


MACHINE = {"monitor_samples": [{"mhz_max": BEST_MHZ}]}


def flags(all_trials: list[Trial], machine: dict[str, Any] = MACHINE,
          set_aside: Sequence[dict[str, Any]] = ()) -> dict[str, list[str]]:
    rc = RunConditions(all_trials, machine, set_aside)
    return {w: rc.flags([t for t in all_trials if t.spec.workload == w]) for w in WORKLOADS}


@pytest.mark.parametrize(("changed", "flag"), [
    ({"throttled": True}, "throttled in 1 of 12 trials"),
    ({"min_mhz": 1200.0}, "clock-drop \u221220% in 1 of 12 trials"),
    ({"max_steal_pct": 7.5}, "steal up to 7.5% in 1 of 12 trials"),
    ({"max_temp_c": 86.0}, "hot up to 86 \u00b0C in 1 of 12 trials"),
    ({"others_cpus": 1.2, "others_cpu_s": 1.2}, "busy up to 1.20 CPUs in 1 of 12 trials"),
])
def test_a_rare_event_flags_the_metric_it_hit_and_says_how_much(changed: dict[str, Any], flag: str) -> None:
    found = flags(trials({(3, "b"): changed}))
    assert found == {"a": [], "b": [flag], "c": [], "d": []}


def test_limits_are_exclusive() -> None:
    at_limit = {(2, "a"): {"min_mhz": BEST_MHZ * 0.97}, (3, "b"): {"max_steal_pct": 1.0},
                (4, "c"): {"max_temp_c": 80.0}, (5, "d"): {"others_cpus": 0.25, "others_cpu_s": 0.25}}
    assert flags(trials(at_limit)) == {w: [] for w in WORKLOADS}


def test_conditions_in_the_typical_trial_are_machine_wide_not_flags() -> None:
    everywhere = trials(everywhere={"max_steal_pct": 4.0, "min_mhz": 1350.0})
    rc = RunConditions(everywhere, MACHINE)
    assert rc.lines == ["steal: the hypervisor took 4.0% of the CPU in the typical trial",
                        "clock: 10.0% below its best in the typical trial"]
    assert flags(everywhere) == {w: [] for w in WORKLOADS}


def test_a_metric_worse_off_than_the_typical_trial_is_flagged_by_the_excess() -> None:
    more = {(r, "c"): {"max_steal_pct": 9.0} for r in range(1, 7)}
    found = flags(trials(more, everywhere={"max_steal_pct": 4.0}))
    # half of c's trials (those on B) saw 9%: its median trial 6.5%, the typical one 4%
    assert found == {"a": [], "b": [], "c": ["steal +2.5 pts"], "d": []}


def test_set_aside_attempts_are_said_once_for_the_run() -> None:
    aside = [{"round": 2, "workload": "a", "config": "B"}] * 3
    assert RunConditions(trials(), MACHINE, aside).lines == [
        "repeated: other programs interrupted 3 trial attempt(s); they were set aside and measured again "
        "(kept with the run)"]
    assert flags(trials(), MACHINE, aside) == {w: [] for w in WORKLOADS}  # 3 to 0 is a fair coin's split


def test_attempts_set_aside_mostly_on_one_configuration_flag_the_workload() -> None:
    attempts = [{"round": 2, "workload": "c", "config": "B"}] * 12 + [{"round": 3, "workload": "c", "config": "A"}]
    assert RunConditions(trials(), MACHINE, attempts).lines[1] == (
        "repeated unevenly: c (B 12, A 1 attempts set aside): a configuration's own work may have counted as other "
        "programs'; compare with --repeats 0")
    assert flags(trials(), MACHINE, attempts) == {"a": [], "b": [], "c": ["repeated unevenly"], "d": []}
    fewer = attempts[:9] + attempts[-1:] * 2  # 9 to 2: p = 0.065
    assert flags(trials(), MACHINE, fewer) == {w: [] for w in WORKLOADS}


def test_common_events_are_said_once_for_the_run() -> None:
    common = {(r, w): {"max_steal_pct": 6.0} for r in (1, 2, 3) for w in WORKLOADS}  # 12 of 48 trials
    rc = RunConditions(trials(common), MACHINE)
    assert rc.lines == ["steal: 25% of trials saw more than the typical one, spread over every workload by the "
                        "interleaved order"]
    assert flags(trials(common)) == {w: [] for w in WORKLOADS}


def test_a_round_whose_clock_loop_dropped_counts_for_its_trials() -> None:
    machine = MACHINE | {"clock_mhz": [[r, 3000.0 if r != 2 else 2700.0] for r in range(0, 7)]}
    rc = RunConditions(trials(), machine)
    # a whole round is a sixth of the trials: common, so said once for the run, not a flag
    assert rc.lines == ["clock-drop: 17% of trials saw more than the typical one, spread over every workload "
                        "by the interleaved order"]
    assert flags(trials(), machine) == {w: [] for w in WORKLOADS}


def test_no_reference_clock_no_clock_claim() -> None:
    assert flags(trials({(3, "b"): {"min_mhz": 100.0}}), {}) == {w: [] for w in WORKLOADS}
