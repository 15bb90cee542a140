"""Preflight: wait for an idle machine, then report the conditions a run starts under.

Shown at the start of `shootout run` and in `shootout info`. Nothing on the machine is
changed unless tune=True or reserve=True (`shootout run` reserves CPUs for its trials unless
--no-isolate: system/cpureserve.py), and then only through the change journal.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from shootout.arm.board import preflight_lines
from shootout.conditions import sensors
from shootout.conditions.clockflags import HOT_C, STEAL_LIMIT_PCT
from shootout.conditions.governor import PERFORMANCE, boost_state, governor_summary
from shootout.conditions.governor import tune as tune_governor
from shootout.conditions.kernellog import describe, sort_events
from shootout.conditions.machinefacts import machine_facts
from shootout.conditions.throttling import (
    NOW_MASK,
    arm_clock_mhz,
    decode_throttled,
    get_throttled,
    read_kernel_log,
)
from shootout.system.cpureserve import Reservation, reserve as reserve_cpus
from shootout.system.emulator import here as emulator_here
from shootout.system.journal import Journal

# Idleness is decided on what runs now, never on the load average: right after shootout
# built its userspaces the 1-minute average still holds its own debootstrap for minutes.
IDLE_BUSY_PCT = 15.0  # CPU use over the window below this share (all CPUs)
IDLE_RUNQ_PER_CPU = 0.25  # and on average fewer runnable tasks than this per CPU (besides us)
SAMPLE_S = 0.5  # length of the /proc/stat window for CPU use, run queue and steal (10 run-queue readings)
RUNQ_SAMPLES = 10  # run-queue readings per window
BUSIEST_SHOWN = 5  # processes named when the gate gives up
BUSIEST_MIN_PCT = 10.0  # of one CPU
EARLY_FRESH_S = 5.0  # an early window older than this no longer tells what runs now


@dataclass
class Preflight:
    lines: list[str]  # human-readable, one finding per line
    flags: list[str]  # run-level flags: busy-start, steal, swap-in-use, throttled, hot
    facts: dict[str, Any] = field(default_factory=dict)  # machine_facts + "conditions"
    reservation: Reservation | None = None  # the CPUs reserved for the trials, when they are


@dataclass
class _Gate:
    idle: bool
    waited_s: float
    load1: float | None
    busy_pct: float | None
    runq: float | None  # mean runnable tasks besides this process over the window
    steal_pct: float | None
    busiest: list[str] | None = None  # "name (pid N) P% CPU", asked when this machine is not idle


Window = tuple[float | None, float | None, float | None]  # busy %, run queue, steal %


def _window(root: Path) -> Window:
    """CPU use, mean run queue and steal over one SAMPLE_S window, without this process:
    on this machine its CPU time and its running threads are left out (it may be starting
    up meanwhile, see EarlyWindow); a fake root's reader counts as one running task."""
    here = root == Path("/")
    ours = sensors.own_running if here else lambda: 1
    before, own_before = sensors.cpu_times(root), sensors.own_cpu_ticks()
    start = time.monotonic()
    queue = []
    for i in range(1, RUNQ_SAMPLES + 1):
        # on a schedule: while shootout imports, this thread may wait for the GIL after a sleep
        time.sleep(max(0.0, start + i * SAMPLE_S / RUNQ_SAMPLES - time.monotonic()))
        # our threads, counted before and after the system's count (they come and go between)
        own_first, running, own_then = ours(), sensors.procs_running(root), ours()
        if running is not None:
            queue.append(max(0, running - max(own_first, own_then)))
    after = sensors.cpu_times(root)
    own = sensors.own_cpu_ticks() - own_before if here else 0.0
    runq = sum(queue) / len(queue) if queue else None
    return sensors.busy_pct(before, after, own), runq, sensors.steal_pct(before, after)


class EarlyWindow:
    """The gate's first window, measured in a thread while shootout starts up (imports,
    reading the request) rather than after: the window leaves shootout's own share out,
    and an idle machine then starts measuring half a second sooner. A window that ended
    more than EARLY_FRESH_S before the gate (a userspace was built meanwhile) is not used."""

    def __init__(self) -> None:
        self._found: Window | None = None
        self._ended = 0.0
        self._thread = threading.Thread(target=self._measure, name="load-gate", daemon=True)
        self._thread.start()

    def _measure(self) -> None:
        self._found, self._ended = _window(Path("/")), time.monotonic()

    def take(self) -> Window | None:
        self._thread.join()
        return self._found if time.monotonic() - self._ended <= EARLY_FRESH_S else None


def busiest_processes(window_s: float = SAMPLE_S) -> list[str]:
    """The processes that used the most CPU over a window, busiest first (this one left out)."""
    procs = [p for p in psutil.process_iter(["name"]) if p.pid != os.getpid()]
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.cpu_percent(None)  # starts each process's window
    time.sleep(window_s)
    used = []
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            used.append((proc.cpu_percent(None), proc.info["name"], proc.pid))
    used.sort(reverse=True)
    return [f"{name} (pid {pid}) {pct:.0f}% CPU" for pct, name, pid in used[:BUSIEST_SHOWN] if pct >= BUSIEST_MIN_PCT]


def wait_for_idle(load_wait_s: float, cpus: int, root: Path = Path("/"), first: Window | None = None) -> _Gate:
    """Sample CPU use and the run queue until the machine is idle or load_wait_s passed;
    `first` is a window already measured (EarlyWindow)."""
    t0 = time.monotonic()
    while True:
        busy, runq, steal = first or _window(root)
        first = None
        idle = (busy is None or busy < IDLE_BUSY_PCT) and (runq is None or runq < IDLE_RUNQ_PER_CPU * cpus)
        waited = time.monotonic() - t0
        if idle or waited + SAMPLE_S > load_wait_s:
            load = sensors.loadavg(root)
            # Name what kept the machine busy: only this machine's processes can be asked.
            busiest = busiest_processes() if not idle and root == Path("/") else None
            return _Gate(idle, waited, load[0] if load else None, busy, runq, steal, busiest)


def _fmt(value: float | None, spec: str, unit: str = "") -> str:
    return "?" if value is None else f"{value:{spec}}{unit}"


def preflight(
    *, tune: bool, journal: Journal | None, load_wait_s: float = 60.0, root: Path = Path("/"),
    early: EarlyWindow | None = None, clock: Callable[[], float | None] | None = None,
    reserve: bool | None = None, here: bool = True, why_not: str | None = None,
) -> Preflight:
    """Wait for idle (up to load_wait_s), optionally tune, and describe the machine's state;
    `clock` reads this machine's clock (the run's round_clock, whose loop is built already;
    measure.clock.measure_mhz for a one-off look); without one the clock is not measured.
    reserve: True reserves CPUs for the trials after the load gate (a run), False says they are
    not (--no-isolate), None leaves it unsaid (`shootout info`); here: some trial runs on this machine;
    why_not: the run's own reason not to reserve (system/cpureserve.reserve)."""
    if (tune or reserve) and journal is None:
        raise ValueError("tune=True and reserve=True need a change journal")
    real = Path(root) == Path("/")  # clock loop, firmware and kernel log describe this machine only
    facts = machine_facts(root)
    cpus = facts.get("cores") or 1
    lines: list[str] = []
    flags: list[str] = []
    cond: dict[str, Any] = {"started_at": time.time()}

    gate = wait_for_idle(load_wait_s, cpus, root, early.take() if early else None)
    _load(gate, cpus, lines, flags, cond)
    reservation = None
    if reserve is not None and real:
        made = reserve_cpus(journal, isolate=reserve, here=here, why_not=why_not)  # type: ignore[arg-type]
        reservation = made if isinstance(made, Reservation) else None
        lines.append(made.describe() if isinstance(made, Reservation) else made)
        facts["reserved_cpus"] = made.facts() if isinstance(made, Reservation) else {"reserved": None, "why": made}
    _governor(journal if tune else None, root, facts, lines, cond)

    virt = facts.get("virtualization") or {}
    kinds = [f"{virt['vm']} VM" if virt.get("vm") else "",
             f"{virt['container']} container" if virt.get("container") else ""]
    cond["steal_pct"] = gate.steal_pct
    lines.append(f"virtualization: {', '.join(k for k in kinds if k) or 'none detected'}; "
                 f"steal {_fmt(gate.steal_pct, '.1f', '%')} over {SAMPLE_S:g} s")
    if (gate.steal_pct or 0.0) > STEAL_LIMIT_PCT:
        flags.append("steal")
    lines += preflight_lines(facts)  # a Pi's board and firmware, AArch32, page size, caches sysfs lacks

    _swap_and_heat(root, lines, flags, cond)

    if real:
        _firmware(lines, flags, cond)
        cond["measured_mhz"] = clock() if clock is not None else None
        how = "dependent-add loop" + (", under qemu-user: the emulator's pace, not a CPU clock" if emulator_here() else "")
        lines.append(f"measured clock: {_fmt(cond['measured_mhz'], '.0f', ' MHz')} ({how})")
        _kernel_log(lines, cond)
    facts["conditions"] = cond
    return Preflight(lines=lines, flags=flags, facts=facts, reservation=reservation)


def _load(gate: _Gate, cpus: int, lines: list[str], flags: list[str], cond: dict[str, Any]) -> None:
    """How busy the machine was when the run started (after waiting for idle)."""
    cond.update(load1=gate.load1, busy_pct=gate.busy_pct, runq=gate.runq, waited_s=round(gate.waited_s, 1))
    state = "idle" if gate.idle else f"not idle after {gate.waited_s:.0f} s; going on (busy-start)"
    lines.append(f"load: {_fmt(gate.busy_pct, '.0f', '%')} busy and {_fmt(gate.runq, '.1f')} tasks waiting "
                 f"for a CPU over {SAMPLE_S:g} s on {cpus} CPUs (load average {_fmt(gate.load1, '.2f')}): {state}")
    if not gate.idle:
        flags.append("busy-start")
    if gate.busiest is not None:
        cond["busiest"] = gate.busiest
        lines.append(f"busiest processes: {', '.join(gate.busiest) or 'none stands out (many small ones)'}")


def _governor(tune_with: Journal | None, root: Path, facts: dict[str, Any], lines: list[str],
              cond: dict[str, Any]) -> None:
    """The cpufreq governor and boost the run uses, after tuning them when asked (tune_with: its journal)."""
    if tune_with is not None:
        cond["tuned"] = tune_governor(tune_with, root=root)
        lines += [f"tune: {line}" for line in cond["tuned"]]
    governor, boost = governor_summary(root), boost_state(root)
    facts.update(governor=governor, boost=boost)  # after tuning: what the run uses
    gov_text = governor or "no cpufreq (the clock is not under the OS's control here)"
    boost_text = f"; boost {'on' if boost['enabled'] else 'off'} ({boost['control']})" if boost else ""
    hint = "" if tune_with is not None or governor in (None, PERFORMANCE) else " (--tune sets performance)"
    lines.append(f"governor: {gov_text}{boost_text}{hint}")


def _swap_and_heat(root: Path, lines: list[str], flags: list[str], cond: dict[str, Any]) -> None:
    """Swap already in use, and the temperatures: both slow a run down."""
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
    events = sort_events(records)
    cond["kernel_events"] = events.as_fact()
    lines += describe(events)
