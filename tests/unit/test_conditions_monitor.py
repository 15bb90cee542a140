"""Monitor: windows over injected samples and the sampler thread on a fake tree."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from shootout.conditions.clockflags import reference_mhz
from shootout.conditions.monitor import Monitor, summarize


def write(root: Path, path: str, text: str) -> None:
    """Replace the file atomically, as procfs and sysfs reads are: the sampler thread reads
    these while the test rewrites them and must never see a half-written file."""
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(p)


def sample(t: float, **kw: Any) -> dict[str, Any]:
    base = {"t": t, "mhz_min": 600.0, "mhz_mean": 1000.0, "mhz_max": 1500.0, "temp_c": 50.0, "load1": 1.0,
            "steal_pct": 0.0, "runq": 1, "throttle_events": None, "throttled_bits": None}
    base.update(kw)
    return base


def fake_machine(root: Path, cpus: int = 2) -> None:
    for n in range(cpus):
        (root / f"sys/devices/system/cpu/cpu{n}").mkdir(parents=True, exist_ok=True)


def test_window_summarises_samples_during_the_trial(tmp_path: Path) -> None:
    fake_machine(tmp_path, cpus=4)
    mon = Monitor(root=tmp_path)
    for t in range(100, 111):
        mon.add(sample(float(t), temp_c=40.0 + t - 100, mhz_max=1500.0 - (t - 100) * 10,
                       steal_pct=float(t - 100), load1=0.5, runq=t % 3))
    w = mon.window(102.5, 105.2)
    # samples at 103, 104, 105 and the first after the trial (106), whose interval covers its end
    assert w == {"max_temp_c": 46.0, "min_mhz": 1440.0, "max_steal_pct": 6.0, "max_load": 0.5,
                 "max_runq": 2, "throttled": None, "cpus": 4, "samples": 4}


def test_short_trial_gets_the_next_sample(tmp_path: Path) -> None:
    fake_machine(tmp_path)
    mon = Monitor(root=tmp_path)
    mon.add(sample(10.0, steal_pct=0.0))
    mon.add(sample(11.0, steal_pct=7.5))
    w = mon.window(10.2, 10.5)
    assert w["samples"] == 1 and w["max_steal_pct"] == 7.5
    assert Monitor(root=tmp_path).window(0, 1)["samples"] == 0
    assert Monitor(root=tmp_path).window(0, 1)["max_temp_c"] is None


def test_missing_readings_are_none_not_zero() -> None:
    w = summarize([sample(1.0, temp_c=None, mhz_max=None, steal_pct=None)], cpus=2)
    assert w["max_temp_c"] is None and w["min_mhz"] is None and w["max_steal_pct"] is None
    assert w["max_load"] == 1.0


def test_throttled_from_firmware_bits_or_counters() -> None:
    assert summarize([sample(1.0, throttled_bits=0x50000)], 2)["throttled"] is False  # only "occurred" bits
    assert summarize([sample(1.0, throttled_bits=0x50005)], 2)["throttled"] is True
    assert summarize([sample(1.0, throttle_events=0), sample(2.0, throttle_events=3)], 2)["throttled"] is True
    assert summarize([sample(1.0, throttle_events=0)], 2)["throttled"] is False


STAT = "cpu  {busy} 0 0 {idle} 0 0 0 {steal} 0 0\nprocs_running {running}\n"


def test_sampler_thread_on_a_fake_tree(tmp_path: Path) -> None:
    fake_machine(tmp_path)
    write(tmp_path, "/proc/stat", STAT.format(busy=0, idle=0, steal=0, running=4))
    write(tmp_path, "/proc/loadavg", "0.75 0.5 0.25 1/100 1\n")
    write(tmp_path, "/proc/cpuinfo", "cpu MHz : 1800.0\ncpu MHz : 1200.0\n")
    write(tmp_path, "/sys/class/thermal/thermal_zone0/temp", "55000\n")
    write(tmp_path, "/sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count", "0\n")
    mon = Monitor(interval_s=0.02, root=tmp_path)
    mon.start()
    try:
        time.sleep(0.1)
        assert mon._thread is not None and mon._thread.native_id is not None
        assert os.getpriority(os.PRIO_PROCESS, mon._thread.native_id) == 19
        # 100 ticks pass: 80 busy, 10 idle, 10 stolen; it gets hot and throttles once.
        # /proc/stat last: a sample that sees the new ticks sees the heat and throttling too.
        write(tmp_path, "/sys/class/thermal/thermal_zone0/temp", "85000\n")
        write(tmp_path, "/sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count", "1\n")
        write(tmp_path, "/proc/stat", STAT.format(busy=80, idle=10, steal=10, running=4))
        deadline = time.monotonic() + 5  # a nice-19 thread on a busy machine may lag behind
        while time.monotonic() < deadline and not any(s["steal_pct"] is not None for s in mon.samples()):
            time.sleep(0.02)
        time.sleep(0.1)
    finally:
        mon.stop()
    got = mon.samples()
    assert len(got) >= 4
    assert all(s["mhz_min"] == 1200.0 and s["mhz_max"] == 1800.0 and s["mhz_mean"] == 1500.0 for s in got)
    assert all(s["runq"] == 3 and s["load1"] == 0.75 for s in got)
    assert [s["steal_pct"] for s in got if s["steal_pct"] is not None] == [10.0]
    w = mon.window(got[0]["t"], got[-1]["t"])
    assert w["max_temp_c"] == 85.0 and w["max_steal_pct"] == 10.0 and w["throttled"] is True
    assert w["max_runq"] == 3 and w["cpus"] == 2
    assert mon._thread is None  # stopped and joined


def test_quiet_trial_is_not_sampled_during_but_right_before_and_after(tmp_path: Path) -> None:
    fake_machine(tmp_path)
    write(tmp_path, "/proc/stat", STAT.format(busy=0, idle=0, steal=0, running=1))
    mon = Monitor(interval_s=0.01, root=tmp_path)
    mon.start()
    try:
        time.sleep(0.05)
        with mon.quiet():
            t0 = time.time()
            during = len(mon.samples())
            # the "trial": 100 ticks pass, 20 of them stolen by the hypervisor
            write(tmp_path, "/proc/stat", STAT.format(busy=80, idle=0, steal=20, running=1))
            time.sleep(0.2)  # twenty sampling intervals
            t1 = time.time()
            assert len(mon.samples()) == during  # the sampler kept still
        after = mon.samples()
    finally:
        mon.stop()
    assert not [s for s in after if t0 <= s["t"] <= t1]
    closing = next(s for s in after if s["t"] > t1)
    assert closing["steal_pct"] == 20.0  # counts exactly the trial's ticks
    assert mon.window(t0, t1)["max_steal_pct"] == 20.0 and mon.window(t0, t1)["samples"] == 1


def test_reference_is_the_best_clock_seen() -> None:
    assert reference_mhz([sample(1.0, mhz_max=1200.0), sample(2.0, mhz_max=1500.0), sample(3.0, mhz_max=None)]) == 1500.0
    assert reference_mhz([]) is None
