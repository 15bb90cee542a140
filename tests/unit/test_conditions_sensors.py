"""Sensor readers against fake /proc and /sys trees."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from shootout.conditions import sensors


def write(root: Path, path: str, text: str) -> Path:
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


STAT = "cpu  {user} 0 {system} {idle} 0 0 0 {steal} 0 0\ncpu0 1 2 3 4\nprocs_running {running}\nprocs_blocked 0\n"


def stat(root: Path, user: int, system: int, idle: int, steal: int, running: int = 1) -> None:
    write(root, "/proc/stat", STAT.format(user=user, system=system, idle=idle, steal=steal, running=running))


def test_steal_and_busy_from_two_snapshots(tmp_path: Path) -> None:
    stat(tmp_path, user=1000, system=200, idle=5000, steal=100)
    a = sensors.cpu_times(tmp_path)
    # +150 user, +50 system, +700 idle, +100 steal = 1000 ticks
    stat(tmp_path, user=1150, system=250, idle=5700, steal=200, running=3)
    b = sensors.cpu_times(tmp_path)
    assert a is not None and b is not None
    assert b.total - a.total == 1000
    assert sensors.steal_pct(a, b) == pytest.approx(10.0)
    assert sensors.busy_pct(a, b) == pytest.approx(20.0)
    # this process's own 100 ticks are left out; more than was used in all is no use at all
    assert sensors.busy_pct(a, b, own_ticks=100) == pytest.approx(10.0)
    assert sensors.busy_pct(a, b, own_ticks=500) == 0.0
    assert sensors.procs_running(tmp_path) == 3
    # No time passed, or a missing snapshot: unknown, not zero.
    assert sensors.steal_pct(b, b) is None
    assert sensors.steal_pct(None, b) is None


def test_short_stat_line_from_old_kernel(tmp_path: Path) -> None:
    write(tmp_path, "/proc/stat", "cpu 10 0 5 100\n")  # no iowait..steal columns
    times = sensors.cpu_times(tmp_path)
    assert times == sensors.CpuTimes(busy=15, idle=100, steal=0, user=10)


def test_missing_files_give_none(tmp_path: Path) -> None:
    assert sensors.cpu_times(tmp_path) is None
    assert sensors.loadavg(tmp_path) is None
    assert sensors.procs_running(tmp_path) is None
    assert sensors.swap_used_bytes(tmp_path) is None
    assert sensors.cpu_mhz(tmp_path) == []
    assert sensors.temperatures(tmp_path) == {}
    assert sensors.max_temp_c(tmp_path) is None
    assert sensors.thermal_throttle_count(tmp_path) is None


def test_loadavg(tmp_path: Path) -> None:
    write(tmp_path, "/proc/loadavg", "0.52 0.40 0.31 2/180 12345\n")
    assert sensors.loadavg(tmp_path) == (0.52, 0.40, 0.31)


def test_thermal_zones_and_hwmon(tmp_path: Path) -> None:
    write(tmp_path, "/sys/class/thermal/thermal_zone0/type", "cpu-thermal\n")
    write(tmp_path, "/sys/class/thermal/thermal_zone0/temp", "48312\n")
    write(tmp_path, "/sys/class/thermal/thermal_zone1/type", "cpu-thermal\n")
    write(tmp_path, "/sys/class/thermal/thermal_zone1/temp", "51000\n")
    write(tmp_path, "/sys/class/thermal/thermal_zone2/type", "broken\n")
    write(tmp_path, "/sys/class/thermal/thermal_zone2/temp", "-273000\n")  # sensor fault: ignored
    (tmp_path / "sys/class/thermal/cooling_device0").mkdir()  # not a zone
    write(tmp_path, "/sys/class/hwmon/hwmon0/name", "k10temp\n")
    write(tmp_path, "/sys/class/hwmon/hwmon0/temp1_input", "67250\n")
    write(tmp_path, "/sys/class/hwmon/hwmon0/temp1_label", "Tctl\n")
    write(tmp_path, "/sys/class/hwmon/hwmon0/temp3_input", "40000\n")
    temps = sensors.temperatures(tmp_path)
    assert temps == {
        "thermal:cpu-thermal": pytest.approx(48.312),
        "thermal:cpu-thermal#2": pytest.approx(51.0),
        "hwmon:k10temp/Tctl": pytest.approx(67.25),
        "hwmon:k10temp/temp3": pytest.approx(40.0),
    }
    assert sensors.max_temp_c(tmp_path) == pytest.approx(67.25)


def test_mhz_prefers_cpufreq(tmp_path: Path) -> None:
    write(tmp_path, "/proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2445.406\nprocessor\t: 1\ncpu MHz\t\t: 2400.000\n")
    assert sensors.cpu_mhz(tmp_path) == [2445.406, 2400.0]
    for n, khz in enumerate([1500000, 600000]):
        write(tmp_path, f"/sys/devices/system/cpu/cpu{n}/cpufreq/scaling_cur_freq", f"{khz}\n")
    (tmp_path / "sys/devices/system/cpu/cpufreq").mkdir()  # the policy directory: not a CPU
    assert sensors.cpu_mhz(tmp_path) == [1500.0, 600.0]


def test_cpu_dirs_sorted_numerically(tmp_path: Path) -> None:
    for n in (10, 2, 1):
        (tmp_path / f"sys/devices/system/cpu/cpu{n}").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/cpuidle").mkdir()
    assert [d.name for d in sensors.cpu_dirs(tmp_path)] == ["cpu1", "cpu2", "cpu10"]


def test_swap(tmp_path: Path) -> None:
    write(tmp_path, "/proc/meminfo", "MemTotal: 1000 kB\nSwapTotal:  2048 kB\nSwapFree:   1024 kB\n")
    assert sensors.swap_used_bytes(tmp_path) == 1024 * 1024
    write(tmp_path, "/proc/vmstat", "nr_free_pages 5\npswpin 7\npswpout 9\n")
    assert sensors.swap_activity(tmp_path) == (7, 9)


def test_thermal_throttle_count(tmp_path: Path) -> None:
    for n, (core, pkg) in enumerate([(3, 1), (4, 1)]):
        write(tmp_path, f"/sys/devices/system/cpu/cpu{n}/thermal_throttle/core_throttle_count", f"{core}\n")
        write(tmp_path, f"/sys/devices/system/cpu/cpu{n}/thermal_throttle/package_throttle_count", f"{pkg}\n")
    assert sensors.thermal_throttle_count(tmp_path) == 9


def test_the_process_tree_counts_live_descendants_and_reaped_children() -> None:
    start = sensors.tree_user_s()
    spin = subprocess.Popen([sys.executable, "-c", "import time\nt = time.monotonic()\n"
                             "while time.monotonic() - t < 0.4: sum(range(1000))\ntime.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while sensors.tree_user_s() - start < 0.25 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sensors.tree_user_s() - start >= 0.25  # alive, a descendant: counted from /proc
    finally:
        spin.kill()
        spin.wait()
    assert sensors.tree_user_s() - start >= 0.25  # reaped: counted by os.times()
