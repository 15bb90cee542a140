"""Noise floor keyed per machine, and the thresholds it refuses."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from shootout.base.errors import StoreError, UsageError
from shootout.judge.noisefloor import (
    aa_floor,
    load_noise_floor,
    noise_floor_key,
    resolvable_threshold,
    save_noise_floor,
)
from shootout.request.request import check_settings
from shootout.stats import Design, smallest_resolvable


class DictStore:
    def __init__(self) -> None:
        self.settings: dict[str, dict[str, Any]] = {}
        self.runs: dict[int, Any] = {}

    def put_setting(self, key: str, value: dict[str, Any]) -> None:
        self.settings[key] = value

    def get_setting(self, key: str) -> dict[str, Any] | None:
        return self.settings.get(key)

    def get_run(self, ref: str | int) -> Any:
        if ref not in self.runs:
            raise StoreError(f"no run {ref}")
        return self.runs[ref]


def test_key_is_per_machine() -> None:
    assert noise_floor_key({"machine_id": "mabc", "hostname": "pi"}) == "noise-floor/mabc"
    assert noise_floor_key({"machine_id": None, "hostname": "pi"}) == "noise-floor/pi"
    with pytest.raises(UsageError):
        noise_floor_key({})


def test_stored_floor_is_found_on_the_same_machine_only() -> None:
    store = DictStore()
    here, there = {"machine_id": "m1"}, {"machine_id": "m2"}
    save_noise_floor(store, here, {"run": 7, "halfwidth": 0.004})
    assert load_noise_floor(store, here) == {"run": 7, "halfwidth": 0.004}
    assert load_noise_floor(store, there) is None


def aa_run(sd: float, rounds: int = 30, max_rounds: int = 50):
    """An A/A run of one workload with per-round noise sd, analysed."""
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

    rng = np.random.default_rng(11)
    spec = WorkloadSpec("w", "user", "w", (Metric("rate", "ops/s"),), "rate")
    configs = [Config("host"), Config("host~aa")]
    trials = [Trial(TrialSpec(r, 0, "w", c.name), {"rate": 100.0 * math.exp(rng.normal(0, sd / math.sqrt(2)))},
                    1.0, 1.0, 0.0, 1, 1, 0, "", 0.0) for r in range(1, rounds + 1) for c in configs]
    run = Run(5, 0.0, "complete", RunSettings(aa=True, max_rounds=max_rounds), configs, [spec], {"w": {}}, RunFacts())
    return analyze(run, trials)


def test_aa_floor_is_the_noise_and_what_max_rounds_resolve() -> None:
    floor = aa_floor(aa_run(0.02))
    assert floor is not None and floor["rounds"] == 50
    assert floor["sd"] == pytest.approx(0.02, rel=0.35)  # robust spread of 30 rounds
    design = Design(0.95, 1, (6, 50))
    assert floor["halfwidth"] == pytest.approx(smallest_resolvable(floor["sd"], 50, design))
    # ~ 2.13 (the last look's z: 96.7% under the spending rule) * 1.023 * sd / sqrt(50)
    assert floor["halfwidth"] == pytest.approx(2.13 * 1.023 * floor["sd"] / math.sqrt(50), rel=0.05)


def request(threshold: float, max_rounds: int = 50, workloads: int = 1, aa: bool = False, by_budget: bool = False):
    from shootout.base.model import Config, RunSettings
    from shootout.measure.runner import RunRequest
    from shootout.workloads.user import CommandWorkload

    works = [CommandWorkload({"name": f"w{i}", "command": "true"}) for i in range(workloads)]
    return RunRequest([Config("a"), Config("b")], works, RunSettings(threshold=threshold, max_rounds=max_rounds, aa=aa,
                                                                            rounds_by_budget=by_budget))


def test_threshold_below_what_the_floor_resolves_is_refused_with_the_figures() -> None:
    floor = {"run": 12, "sd": 0.066, "rounds": 50, "halfwidth": 0.025}
    limit = resolvable_threshold(floor, 50, Design(0.95, 1, (6, 50)))
    assert 0.02 < limit < 0.03  # 6.6% per-round noise: about +-2.5% in 50 rounds
    check_settings(request(0.03), floor)  # above it: fine
    with pytest.raises(UsageError, match=r"--threshold 1.00% is below what this machine can resolve in 50 rounds") as err:
        check_settings(request(0.01), floor)
    assert "run 12" in str(err.value) and "--max-rounds to about" in err.value.hint
    check_settings(request(0.01, aa=True), floor)  # an A/A run measures the floor: never refused
    # without --max-rounds the budget may plan up to 400 rounds (measure/roundplan.py): held to those
    with pytest.raises(UsageError, match="can resolve in 50 rounds"):
        check_settings(request(0.015), floor)
    check_settings(request(0.015, by_budget=True), floor)
    with pytest.raises(UsageError, match="can resolve in 400 rounds"):
        check_settings(request(0.005, by_budget=True), floor)
    check_settings(request(0.01), None)  # no floor stored: nothing to hold it to
    # A floor stored before the noise was kept: its half-width as it is.
    with pytest.raises(UsageError, match="below what this machine can resolve"):
        check_settings(request(0.003), {"run": 3, "halfwidth": 0.004})


def test_max_rounds_that_allow_no_verdict_are_refused() -> None:
    with pytest.raises(UsageError, match="--max-rounds 6 is too few"):
        check_settings(request(0.01, max_rounds=6, workloads=2), None)
    check_settings(request(0.01, max_rounds=6, workloads=1), None)  # one comparison: round 6 allows one


def test_an_emulated_vm_run_is_not_held_to_the_floor() -> None:
    """VMs under TCG (--emulate, no hardware KVM here) give no verdicts: no threshold to refuse."""
    from dataclasses import replace

    from shootout.places.vm import emulated, vm_config
    from shootout.vm.kvm import kvm_problem

    if kvm_problem(guest="amd64") is None:
        pytest.fail("this machine has hardware KVM: --emulate runs the VMs under KVM here")
    floor = {"run": 12, "sd": 0.066, "rounds": 50, "halfwidth": 0.025}
    vms = [emulated(vm_config("vm:debian:bookworm:i386:686-pae")), emulated(vm_config("vm:debian:bookworm:amd64:amd64"))]
    check_settings(replace(request(0.01), configs=vms), floor)
    with pytest.raises(UsageError, match="below what this machine can resolve"):  # without --emulate: held to it
        check_settings(replace(request(0.01), configs=[vm_config(c.name) for c in vms]), floor)


def test_an_emulated_aa_run_gives_no_floor_for_native_runs() -> None:
    """Under qemu-user (or TCG) the A/A spread is the emulator's: no verdict is ever given on it,
    and a native run here must not be held to it."""
    import dataclasses

    analysis = aa_run(0.016)
    assert aa_floor(analysis) is not None
    (run,) = analysis.runs
    for side in ("host", "host~aa"):
        run.facts.side_for(side)["target"] = {"emulated": True, "emulator": "qemu-user"}
    assert aa_floor(dataclasses.replace(analysis, runs=(run,))) is None


def test_a_floor_an_emulated_aa_stored_before_is_not_loaded() -> None:
    """Earlier versions stored an emulated A/A's spread as the floor: it is not loaded, a native
    A/A's is, and a floor whose A/A run was deleted stands as stored."""
    analysis = aa_run(0.016)
    (run,) = analysis.runs
    store, here = DictStore(), {"machine_id": "m1"}
    store.runs[7] = run
    save_noise_floor(store, here, {"run": 7, "halfwidth": 0.004})
    assert load_noise_floor(store, here) == {"run": 7, "halfwidth": 0.004}
    for side in ("host", "host~aa"):
        run.facts.side_for(side)["target"] = {"emulated": True, "emulator": "qemu-user"}
    assert load_noise_floor(store, here) is None
    del store.runs[7]
    assert load_noise_floor(store, here) == {"run": 7, "halfwidth": 0.004}


def test_a_userspace_under_qemu_user_is_not_held_to_the_floor() -> None:
    """A chroot of a foreign arch (armhf on amd64, amd64 on arm64) runs under qemu-user: no
    verdicts, so no threshold to refuse; a native userspace is held to the floor."""
    from dataclasses import replace

    from shootout.places.chroot import userspace_config_of
    from shootout.system.emulator import here as emulator_here
    from shootout.userspace.arches import host_arch, is_foreign

    native = host_arch()
    foreign = next(a for a in ("armhf", "amd64", "arm64") if is_foreign(a))
    floor = {"run": 12, "sd": 0.066, "rounds": 50, "halfwidth": 0.025}
    sides = [userspace_config_of(f"debian-bookworm-{a}", "bookworm", a) for a in (native, foreign)]
    check_settings(replace(request(0.01), configs=sides), floor)
    if emulator_here() is None:  # on a machine that is itself emulated every side is
        natives = [userspace_config_of(f"debian-bookworm-{native}{n}", "bookworm", native) for n in ("", "-b")]
        with pytest.raises(UsageError, match="below what this machine can resolve"):
            check_settings(replace(request(0.01), configs=natives), floor)
