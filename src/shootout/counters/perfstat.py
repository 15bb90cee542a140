"""The CPU's own counters through `perf stat`, where the machine has a PMU to count them.

A VM without a virtual PMU (and qemu's emulated CPUs) has none: perf then reports every hardware
event "<not supported>", and the counters come from cachegrind's model instead (cachegrind.py).
"""

from __future__ import annotations

from pathlib import Path

EVENTS = ("instructions", "cycles", "L1-dcache-load-misses", "LLC-load-misses", "dTLB-load-misses",
          "branch-misses")
NO_PMU = "no CPU PMU (a VM without one, or qemu): the counters come from cachegrind's model"


def pmu_here(sys_root: Path = Path("/sys")) -> str | None:
    """None where the kernel exposes a CPU PMU, else one line saying why there is none."""
    devices = sys_root / "bus" / "event_source" / "devices"
    if (devices / "cpu" / "events").is_dir():
        return None
    if (devices / "cpu_core").is_dir() or (devices / "cpu_atom").is_dir():  # Intel hybrids
        return None
    try:
        names = [entry.name for entry in devices.iterdir()]
    except OSError:
        return NO_PMU
    # ARM's PMUs are named for the core (armv8_cortex_a72, armv8_pmuv3_0, armv7_cortex_a7)
    if any(name.startswith(("armv8_", "armv7_")) for name in names):
        return None
    return NO_PMU


def source(sys_root: Path = Path("/sys")) -> str:
    """Where a side's counters come from on this machine: "perf" (its PMU) or "cachegrind"."""
    return "perf" if pmu_here(sys_root) is None else "cachegrind"


def prefix(out_file: str) -> list[str]:
    """What to put before a command's argv to count EVENTS into OUT_FILE as CSV."""
    return ["perf", "stat", "-x,", "--no-big-num", "-e", ",".join(EVENTS), "-o", out_file, "--"]


def _event_name(field: str) -> str:
    """The event's plain name: without a modifier (instructions:u, when not root) or a hybrid
    PMU's wrapper (cpu_core/instructions/), whose two cores' counts are then summed."""
    if "/" in field:
        field = field.split("/")[1]
    return field.split(":")[0]


def _row(line: str) -> tuple[str, float, float] | None:
    """(event, value, percent running) of one CSV line; None for a comment, a blank line or a
    count perf could not make ("<not supported>", "<not counted>")."""
    fields = line.split(",")
    if line.startswith("#") or len(fields) < 5 or fields[0].startswith("<"):
        return None
    try:
        value = float(fields[0])
        percent = float(fields[4]) if fields[4] else 100.0
    except ValueError:
        return None
    return _event_name(fields[2]), value, percent


def parse(text: str) -> dict[str, float]:
    """Counts by event from `perf stat -x,` output, with "ipc" where both instructions and
    cycles were counted. perf has already scaled a multiplexed count to the whole run; where a
    counter ran less than all of it, "multiplexed" is the least percent any one ran."""
    counts: dict[str, float] = {}
    least = 100.0
    for line in text.splitlines():
        row = _row(line)
        if row is None:
            continue
        event, value, percent = row
        counts[event] = counts.get(event, 0.0) + value
        least = min(least, percent)
    if counts.get("instructions") and counts.get("cycles"):
        counts["ipc"] = counts["instructions"] / counts["cycles"]
    if least < 100.0:
        counts["multiplexed"] = least
    return counts
