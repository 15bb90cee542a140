"""Preflight: wait for an idle machine, then report the conditions a run starts under.

Shown at the start of `shootout run` and in `shootout info`. Nothing on the machine is
changed unless tune=True, and then only through the change journal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.conditions import sensors
from shootout.conditions.clock import measure_mhz
from shootout.conditions.governor import PERFORMANCE, boost_state, governor_summary
from shootout.conditions.governor import tune as tune_governor
from shootout.conditions.flags import HOT_C, STEAL_LIMIT_PCT
from shootout.conditions.throttling import (
    NOW_MASK,
    arm_clock_mhz,
    decode_throttled,
    get_throttled,
    kernel_events,
    read_kernel_log,
)
from shootout.facts import machine_facts
from shootout.system.journal import Journal

IDLE_LOAD_PER_CPU = 0.3  # 1-minute load average below this times the CPU count is idle
IDLE_BUSY_PCT = 15.0  # and CPU use over the last second below this share (all CPUs)
SAMPLE_S = 1.0  # length of the /proc/stat window for CPU use and steal


@dataclass
class Preflight:
    lines: list[str]  # human-readable, one finding per line
    flags: list[str]  # run-level flags: busy-start, steal, swap-in-use, throttled, hot
    facts: dict[str, Any] = field(default_factory=dict)  # machine_facts + "conditions"


@dataclass
class _Gate:
    idle: bool
    waited_s: float
    load1: float | None
    busy_pct: float | None
    steal_pct: float | None


def wait_for_idle(load_wait_s: float, cpus: int, root: Path = Path("/")) -> _Gate:
    """Sample load and CPU use every second until the machine is idle or load_wait_s passed."""
    t0 = time.monotonic()
    while True:
        before = sensors.cpu_times(root)
        time.sleep(SAMPLE_S)
        after = sensors.cpu_times(root)
        load = sensors.loadavg(root)
        load1 = load[0] if load else None
        busy = sensors.busy_pct(before, after)
        idle = (load1 is None or load1 < IDLE_LOAD_PER_CPU * cpus) and (busy is None or busy < IDLE_BUSY_PCT)
        waited = time.monotonic() - t0
        if idle or waited + SAMPLE_S > load_wait_s:
            return _Gate(idle, waited, load1, busy, sensors.steal_pct(before, after))


def _fmt(value: float | None, spec: str, unit: str = "") -> str:
    return "?" if value is None else f"{value:{spec}}{unit}"


def preflight(
    *, tune: bool, journal: Journal | None, load_wait_s: float = 60.0, root: Path = Path("/")
) -> Preflight:
    """Wait for idle (up to load_wait_s), optionally tune, and describe the machine's state."""
    if tune and journal is None:
        raise ValueError("tune=True needs a change journal")
    real = Path(root) == Path("/")  # clock loop, firmware and kernel log describe this machine only
    facts = machine_facts(root)
    cpus = facts.get("cores") or 1
    lines: list[str] = []
    flags: list[str] = []
    cond: dict[str, Any] = {"started_at": time.time()}

    gate = wait_for_idle(load_wait_s, cpus, root)
    cond.update(load1=gate.load1, busy_pct=gate.busy_pct, waited_s=round(gate.waited_s, 1))
    state = "idle" if gate.idle else f"not idle after {gate.waited_s:.0f} s; going on (busy-start)"
    lines.append(f"load: {_fmt(gate.load1, '.2f')} (1 min) on {cpus} CPUs, "
                 f"{_fmt(gate.busy_pct, '.0f', '%')} busy over {SAMPLE_S:g} s: {state}")
    if not gate.idle:
        flags.append("busy-start")

    if tune:
        assert journal is not None
        cond["tuned"] = tune_governor(journal, root=root)
        lines += [f"tune: {line}" for line in cond["tuned"]]
    governor, boost = governor_summary(root), boost_state(root)
    facts.update(governor=governor, boost=boost)  # after tuning: what the run uses
    gov_text = governor or "no cpufreq (the clock is not under the OS's control here)"
    boost_text = f"; boost {'on' if boost['enabled'] else 'off'} ({boost['control']})" if boost else ""
    hint = "" if tune or governor in (None, PERFORMANCE) else " (--tune sets performance)"
    lines.append(f"governor: {gov_text}{boost_text}{hint}")

    virt = facts.get("virtualization") or {}
    kinds = [f"{virt['vm']} VM" if virt.get("vm") else "",
             f"{virt['container']} container" if virt.get("container") else ""]
    cond["steal_pct"] = gate.steal_pct
    lines.append(f"virtualization: {', '.join(k for k in kinds if k) or 'none detected'}; "
                 f"steal {_fmt(gate.steal_pct, '.1f', '%')} over {SAMPLE_S:g} s")
    if (gate.steal_pct or 0.0) > STEAL_LIMIT_PCT:
        flags.append("steal")

    swap = cond["swap_used_bytes"] = sensors.swap_used_bytes(root)
    swap_text = "unknown" if swap is None else "none in use" if swap == 0 else f"{swap / 2**20:.1f} MiB in use"
    lines.append(f"swap: {swap_text}")
    if swap:
        flags.append("swap-in-use")

    temps = cond["temperatures"] = sensors.temperatures(root)
    temp_text = ", ".join(f"{k} {v:.1f} °C" for k, v in temps.items())
    lines.append(f"sensors: {temp_text or 'no thermal zones or hwmon sensors found'}")
    if temps and max(temps.values()) >= HOT_C:
        flags.append("hot")

    if real:
        _firmware(lines, flags, cond)
        cond["measured_mhz"] = measure_mhz()
        lines.append(f"measured clock: {_fmt(cond['measured_mhz'], '.0f', ' MHz')} (dependent-add loop)")
        _kernel_log(lines, cond)
    facts["conditions"] = cond
    return Preflight(lines=lines, flags=flags, facts=facts)


def _firmware(lines: list[str], flags: list[str], cond: dict[str, Any]) -> None:
    """Raspberry Pi: the firmware's throttling flags and its own clock reading."""
    value = get_throttled()
    if value is None:
        return
    cond["throttled"] = value
    cond["throttled_decoded"] = decoded = decode_throttled(value)
    meaning = f": {', '.join(decoded)}" if decoded else " (never throttled since boot)"
    lines.append(f"firmware: throttled={value:#x}{meaning}")
    if value & NOW_MASK:
        flags.append("throttled")
    if (mhz := arm_clock_mhz()) is not None:
        cond["arm_clock_mhz"] = mhz
        lines.append(f"firmware arm clock: {mhz:.0f} MHz")


def _kernel_log(lines: list[str], cond: dict[str, Any]) -> None:
    records = read_kernel_log()
    if records is None:
        lines.append("kernel log: not readable (throttling/OOM messages cannot be checked)")
        return
    events = cond["kernel_events"] = kernel_events(records, 0.0)
    if events:
        lines.append(f"kernel log: {len(events)} throttling/under-voltage/OOM message(s) since boot; "
                     f"latest: {events[-1]}")
    else:
        lines.append("kernel log: no throttling, under-voltage or OOM messages since boot")
