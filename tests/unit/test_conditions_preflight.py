"""Preflight against fake machines: load gate, tune, steal, swap, sensors."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from shootout.conditions import preflight as pre
from shootout.conditions.sensors import CpuTimes
from shootout.system.journal import Journal


def write(root: Path, path: str, text: str) -> None:
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    # atomically, as the kernel's files change: a reader never sees a half-written file
    tmp = p.with_name(p.name + ".new")
    tmp.write_text(text)
    tmp.replace(p)


def machine(root: Path, load1: float = 0.1, running: int = 1) -> Path:
    write(root, "/sys/devices/system/cpu/online", "0-1\n")
    write(root, "/proc/cpuinfo", "processor : 0\nmodel name : Fake CPU\nflags : fpu aes avx2 hypervisor\n"
                                 "processor : 1\nmodel name : Fake CPU\nflags : fpu aes avx2 hypervisor\n")
    write(root, "/proc/loadavg", f"{load1} 0.1 0.1 1/100 1\n")
    write(root, "/proc/stat", f"cpu 100 0 100 10000 0 0 0 0 0 0\nprocs_running {running}\n")
    write(root, "/proc/meminfo", "MemTotal: 2048 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n")
    write(root, "/etc/machine-id", "0123456789abcdef0123456789abcdef\n")
    return root


@pytest.fixture(autouse=True)
def fast_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pre, "SAMPLE_S", 0.05)


def test_idle_machine_no_flags(tmp_path: Path) -> None:
    pf = pre.preflight(tune=False, journal=None, load_wait_s=10, root=machine(tmp_path))
    assert pf.flags == []
    assert pf.lines[0].endswith(": idle") and "on 2 CPUs (load average 0.10)" in pf.lines[0]
    assert any(line.startswith("governor: no cpufreq") for line in pf.lines)
    assert "virtualization: unknown hypervisor VM; steal ? over 0.05 s" in pf.lines
    assert "swap: none in use" in pf.lines
    assert "sensors: no thermal zones or hwmon sensors found" in pf.lines
    assert not any("measured clock" in line for line in pf.lines)  # a fake root is not this machine
    assert pf.facts["cpu_model"] == "Fake CPU" and pf.facts["conditions"]["load1"] == 0.1


def test_a_load_average_left_by_earlier_work_is_not_busy(tmp_path: Path) -> None:
    """Right after shootout built its userspaces the 1-minute average is high; nothing runs now."""
    t0 = time.monotonic()
    pf = pre.preflight(tune=False, journal=None, load_wait_s=10, root=machine(tmp_path, load1=3.0))
    assert pf.flags == [] and pf.lines[0].endswith(": idle")
    assert time.monotonic() - t0 < 2


def test_a_run_queue_waits_then_goes_on_with_a_flag(tmp_path: Path) -> None:
    t0 = time.monotonic()
    pf = pre.preflight(tune=False, journal=None, load_wait_s=0.5, root=machine(tmp_path, running=4))
    assert 0.4 <= time.monotonic() - t0 < 3
    assert pf.flags == ["busy-start"]
    assert "3.0 tasks waiting" in pf.lines[0] and "not idle after" in pf.lines[0]


def test_gate_waits_until_the_run_queue_empties(tmp_path: Path) -> None:
    root = machine(tmp_path, running=3)
    threading.Timer(0.3, lambda: write(root, "/proc/stat", "cpu 100 0 100 10000 0 0 0 0 0 0\nprocs_running 1\n")).start()
    pf = pre.preflight(tune=False, journal=None, load_wait_s=10, root=root)
    assert pf.flags == []
    # it waited for the queue to empty, and no longer than that (the timer may fire late under load)
    assert 0.25 <= pf.facts["conditions"]["waited_s"] < 10


def test_cpu_use_alone_makes_it_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshots = iter([CpuTimes(busy=0, idle=0, steal=0, user=0), CpuTimes(busy=50, idle=50, steal=0, user=50)] * 50)
    monkeypatch.setattr(pre.sensors, "cpu_times", lambda root: next(snapshots))
    pf = pre.preflight(tune=False, journal=None, load_wait_s=0.2, root=machine(tmp_path))
    assert pf.flags == ["busy-start"] and "50% busy" in pf.lines[0]


def test_steal_swap_and_heat_are_flagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = machine(tmp_path)
    write(root, "/proc/meminfo", "MemTotal: 2048 kB\nSwapTotal: 4096 kB\nSwapFree: 1024 kB\n")
    write(root, "/sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n")
    write(root, "/sys/class/thermal/thermal_zone0/temp", "91000\n")
    snapshots = iter([CpuTimes(busy=0, idle=0, steal=0, user=0), CpuTimes(busy=5, idle=90, steal=5, user=5)])
    monkeypatch.setattr(pre.sensors, "cpu_times", lambda root: next(snapshots))
    pf = pre.preflight(tune=False, journal=None, load_wait_s=0, root=root)
    assert pf.flags == ["steal", "swap-in-use", "hot"]
    assert "swap: 3.0 MiB in use" in pf.lines
    assert "sensors: thermal:x86_pkg_temp 91.0 °C" in pf.lines
    assert any("steal 5.0%" in line for line in pf.lines)


def test_tune_through_the_journal(tmp_path: Path) -> None:
    root = machine(tmp_path / "root")
    policy = root / "sys/devices/system/cpu/cpu0/cpufreq"
    write(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n")
    without = pre.preflight(tune=False, journal=None, load_wait_s=0, root=root)
    assert "governor: powersave (--tune sets performance)" in without.lines
    assert (policy / "scaling_governor").read_text() == "powersave\n"  # reporting changes nothing
    (tmp_path / "j").mkdir()
    j = Journal(tmp_path / "j")
    pf = pre.preflight(tune=True, journal=j, load_wait_s=0, root=root)
    assert "tune: cpu0: governor powersave -> performance" in pf.lines
    assert "governor: performance" in pf.lines
    assert pf.facts["governor"] == "performance"
    j.undo()
    assert (policy / "scaling_governor").read_text().strip() == "powersave"


def test_tune_needs_a_journal(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        pre.preflight(tune=True, journal=None, load_wait_s=0, root=machine(tmp_path))


def test_a_window_measured_early_stands_for_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EarlyWindow's result is the gate's first window: idle, the gate measures nothing more."""
    def no_window(root: Path) -> pre.Window:
        raise AssertionError("measured again")

    monkeypatch.setattr(pre, "_window", no_window)
    gate = pre.wait_for_idle(10, 2, machine(tmp_path, running=4), first=(1.0, 0.0, 0.0))
    assert gate.idle and gate.busy_pct == 1.0 and gate.runq == 0.0


def test_a_busy_early_window_is_measured_again(tmp_path: Path) -> None:
    gate = pre.wait_for_idle(10, 2, machine(tmp_path), first=(90.0, 3.0, 0.0))
    assert gate.idle and gate.runq == 0.0  # the fake machine's own window: nothing waiting


def test_an_early_window_from_before_a_long_preparation_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    early = pre.EarlyWindow()
    assert early.take() is not None
    monkeypatch.setattr(pre, "EARLY_FRESH_S", 0.0)
    assert early.take() is None
