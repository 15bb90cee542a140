"""perf stat's counters where the machine has a PMU: whether it has one, and its CSV read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.counters.perfstat import EVENTS, NO_PMU, parse, pmu_here, prefix, source

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "counters"


def devices(root: Path, *names: str) -> Path:
    for name in names:
        (root / "bus" / "event_source" / "devices" / name).mkdir(parents=True)
    return root


@pytest.mark.parametrize("names, pmu", [(("cpu/events", "software"), True), (("cpu_core", "cpu_atom"), True),
                                        (("armv8_cortex_a72",), True), (("armv7_cortex_a7",), True),
                                        (("software", "tracepoint", "msr"), False), (("cpu",), False), ((), False)])
def test_a_cpu_pmu_is_found_by_its_device(tmp_path: Path, names: tuple[str, ...], pmu: bool) -> None:
    root = devices(tmp_path, *names) if names else tmp_path
    assert pmu_here(root) == (None if pmu else NO_PMU)
    assert source(root) == ("perf" if pmu else "cachegrind")


def test_this_vm_has_none_and_says_why() -> None:
    # the VM the branch was written on: no cpu device under /sys/bus/event_source/devices
    if (Path("/sys/bus/event_source/devices/cpu")).exists():
        pytest.skip("this machine has a CPU PMU")
    assert pmu_here() == "no CPU PMU (a VM without one, or qemu): the counters come from cachegrind's model"


def test_the_prefix_counts_the_events_as_csv() -> None:
    assert prefix("/w/perf.csv") == ["perf", "stat", "-x,", "--no-big-num", "-e", ",".join(EVENTS),
                                     "-o", "/w/perf.csv", "--"]


def test_a_vm_counts_nothing() -> None:
    assert parse((FIXTURES / "perfstat-vm-true.csv").read_text()) == {}


def test_a_pmus_counts_with_ipc_and_the_least_time_running() -> None:
    counts = parse((FIXTURES / "perfstat-pmu-handwritten.csv").read_text())
    assert counts == {"instructions": 2.4e9, "cycles": 1.5e9, "L1-dcache-load-misses": 3e7,
                      "LLC-load-misses": 1.2e6, "dTLB-load-misses": 4.5e5, "ipc": 1.6, "multiplexed": 62.5}


def test_modifiers_and_a_hybrids_two_cores_are_one_event() -> None:
    text = "100,,cpu_core/instructions/,10,100.00,,\n50,,cpu_atom/instructions/,10,100.00,,\n" \
           "75,,cycles:u,10,100.00,,\n"
    assert parse(text) == {"instructions": 150.0, "cycles": 75.0, "ipc": 2.0}
