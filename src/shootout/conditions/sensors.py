"""Readings of the moment: CPU times and steal, load, run queue, clock, temperatures, swap.

Hand-written rather than psutil because every reader takes a root: psutil reads only the
real /proc and /sys, and the tests run these readers against fake trees.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from shootout.execution.fsread import read_int, read_key_values, read_text, under

# Temperatures outside this range are sensor faults (disconnected probes read -273 or 255).
_TEMP_RANGE_C = (-40.0, 200.0)


@dataclass(frozen=True)
class CpuTimes:
    """The aggregate `cpu` line of /proc/stat (or the sum of some CPUs' own lines), in clock ticks."""

    busy: int  # user + nice + system + irq + softirq
    idle: int  # idle + iowait
    steal: int
    user: int  # user + nice: programs' own work, not kernel threads'

    @property
    def total(self) -> int:
        return self.busy + self.idle + self.steal


def stat_snapshot(root: Path = Path("/"), cpus: frozenset[int] | None = None) -> tuple[CpuTimes | None, int | None]:
    """CPU times and procs_running (the run queue) from one read of /proc/stat."""
    return parse_stat(read_text(root, "/proc/stat") or "", cpus)


def _times(fields: list[str]) -> CpuTimes:
    # user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is
    # already counted in user, so it is left out.
    v = [int(x) for x in fields[1:9]] + [0] * max(0, 9 - len(fields))
    return CpuTimes(busy=v[0] + v[1] + v[2] + v[5] + v[6], idle=v[3] + v[4], steal=v[7], user=v[0] + v[1])


def parse_stat(text: str, cpus: frozenset[int] | None = None) -> tuple[CpuTimes | None, int | None]:
    """stat_snapshot() of /proc/stat's text (e.g. a remote machine's); with cpus, the sum of those
    CPUs' own lines (the reserved CPUs of a run: what runs on the others does not touch a trial)."""
    times, running = None, None
    own: list[CpuTimes] = []
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            times = _times(fields)
        elif cpus is not None and fields and fields[0][3:].isdigit() and int(fields[0][3:]) in cpus:
            own.append(_times(fields))
        elif len(fields) == 2 and fields[0] == "procs_running" and fields[1].isdigit():
            running = int(fields[1])
    if cpus is not None:
        times = None if len(own) != len(cpus) else CpuTimes(
            busy=sum(t.busy for t in own), idle=sum(t.idle for t in own),
            steal=sum(t.steal for t in own), user=sum(t.user for t in own))
    return times, running


def cpu_times(root: Path = Path("/"), cpus: frozenset[int] | None = None) -> CpuTimes | None:
    return stat_snapshot(root, cpus)[0]


def steal_pct(before: CpuTimes | None, after: CpuTimes | None) -> float | None:
    """Share of CPU time the hypervisor gave to others between two snapshots, in %."""
    if before is None or after is None or after.total <= before.total:
        return None
    return 100.0 * (after.steal - before.steal) / (after.total - before.total)


def busy_pct(before: CpuTimes | None, after: CpuTimes | None, own_ticks: float = 0.0) -> float | None:
    """Share of CPU time spent running something (all CPUs together) between snapshots, in %,
    leaving out own_ticks (this process's share, when the window overlaps its own work)."""
    if before is None or after is None or after.total <= before.total:
        return None
    return max(0.0, 100.0 * (after.busy - before.busy - own_ticks) / (after.total - before.total))


def own_cpu_ticks() -> float:
    """CPU time this process (every thread) has used, in /proc/stat's clock ticks."""
    times = os.times()
    return (times.user + times.system) * os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    """Every live process below pid (children of all its threads, their children, ...)."""
    found, queue = [], [pid]
    while queue:
        for children in Path(f"/proc/{queue.pop()}/task").glob("*/children"):
            try:
                kids = [int(k) for k in children.read_text().split()]
            except (OSError, ValueError):
                continue  # the thread or process ended while we looked
            found += kids
            queue += kids
    return found


def tree_user_s() -> float:
    """User CPU seconds of this process's tree: itself, the children it reaped (trials) and its
    live descendants (a VM, a namespace holder) with the children they reaped."""
    times = os.times()
    ticks = 0
    for pid in _descendants(os.getpid()):
        try:  # utime and cutime: the 14th and 16th fields, counted after "(comm)"
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            ticks += int(fields[11]) + int(fields[13])
        except (OSError, IndexError, ValueError):
            continue
    return times.user + times.children_user + ticks / os.sysconf("SC_CLK_TCK")


def own_running() -> int:
    """This process's threads that are running or runnable now, the caller among them."""
    running = 0
    for task in Path("/proc/self/task").glob("*/stat"):
        try:  # "tid (comm) S ...": the state follows the last ")", as comm may hold spaces
            running += task.read_text().rpartition(")")[2].split()[0] == "R"
        except (OSError, IndexError):
            continue  # the thread ended while we looked
    return max(1, running)


def procs_running(root: Path = Path("/")) -> int | None:
    """Runnable tasks right now (the run queue), from /proc/stat."""
    return stat_snapshot(root)[1]


def loadavg(root: Path = Path("/")) -> tuple[float, float, float] | None:
    fields = (read_text(root, "/proc/loadavg") or "").split()
    try:
        return float(fields[0]), float(fields[1]), float(fields[2])
    except (IndexError, ValueError):
        return None


def cpu_dirs(root: Path = Path("/")) -> list[Path]:
    """/sys/devices/system/cpu/cpuN, sorted by N."""
    base = under(root, "/sys/devices/system/cpu")
    found = [p for p in base.glob("cpu[0-9]*") if re.fullmatch(r"cpu\d+", p.name)]
    return sorted(found, key=lambda p: int(p.name[3:]))


def cpu_mhz(root: Path = Path("/"), dirs: list[Path] | None = None) -> list[float]:
    """Current clock of every CPU in MHz: cpufreq when present, else /proc/cpuinfo; [] if neither.

    `dirs` is cpu_dirs(root) when the caller has it already (the monitor, every second)."""
    khz = [read_int(root, d / "cpufreq" / "scaling_cur_freq") for d in (cpu_dirs(root) if dirs is None else dirs)]
    if any(k is not None for k in khz):
        return [k / 1000.0 for k in khz if k is not None]
    mhz = []
    for line in (read_text(root, "/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "cpu MHz":
            try:
                mhz.append(float(value))
            except ValueError:
                pass
    return mhz


def temperatures(root: Path = Path("/")) -> dict[str, float]:
    """Every readable temperature sensor in °C, named `thermal:<zone type>` or `hwmon:<chip>/<label>`."""
    found: dict[str, float] = {}

    def put(name: str, millideg: int | None) -> None:
        if millideg is None:
            return
        celsius = millideg / 1000.0
        if _TEMP_RANGE_C[0] <= celsius <= _TEMP_RANGE_C[1]:
            key, n = name, 2
            while key in found:  # several zones of the same type
                key, n = f"{name}#{n}", n + 1
            found[key] = celsius

    zones = under(root, "/sys/class/thermal").glob("thermal_zone*")
    for zone in sorted(zones, key=lambda p: p.name):
        put(f"thermal:{read_text(root, zone / 'type') or zone.name}", read_int(root, zone / "temp"))
    for hwmon in sorted(under(root, "/sys/class/hwmon").glob("hwmon*"), key=lambda p: p.name):
        chip = read_text(root, hwmon / "name") or hwmon.name
        for sensor in sorted(hwmon.glob("temp*_input")):
            label = read_text(root, sensor.with_name(sensor.name.replace("_input", "_label")))
            put(f"hwmon:{chip}/{label or sensor.name.removesuffix('_input')}", read_int(root, sensor))
    return found


def max_temp_c(root: Path = Path("/")) -> float | None:
    temps = temperatures(root)
    return max(temps.values()) if temps else None


def swap_used_bytes(root: Path = Path("/")) -> int | None:
    info = read_key_values(root, "/proc/meminfo")
    try:
        total = int(info["SwapTotal"].split()[0])
        free = int(info["SwapFree"].split()[0])
    except (KeyError, ValueError, IndexError):
        return None
    return (total - free) * 1024


def swap_activity(root: Path = Path("/")) -> tuple[int, int] | None:
    """Pages swapped in and out since boot (/proc/vmstat pswpin, pswpout)."""
    info = read_key_values(root, "/proc/vmstat", sep=" ")
    try:
        return int(info["pswpin"]), int(info["pswpout"])
    except (KeyError, ValueError):
        return None


def thermal_throttle_count(root: Path = Path("/"), dirs: list[Path] | None = None) -> int | None:
    """Sum of the x86 thermal_throttle event counters over all CPUs; None where absent."""
    counts = []
    for d in cpu_dirs(root) if dirs is None else dirs:
        for name in ("core_throttle_count", "package_throttle_count"):
            if (value := read_int(root, d / "thermal_throttle" / name)) is not None:
                counts.append(value)
    return sum(counts) if counts else None
