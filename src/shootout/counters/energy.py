"""The energy a trial used, where the machine reports it.

One source per machine, the first found of: RAPL through powercap (the CPU packages' energy
counters), hwmon energy counters, hwmon power sensors, the Raspberry Pi 5's PMIC through
`vcgencmd pmic_read_adc`; a meter command the user gives (`--meter CMD`, printing watts) wins
over all of them. Counters are read before and after a trial and cost nothing while it runs;
power readings are sampled by a background thread and integrated (trapezoid) over the trial.

find_source() gives the source, or one line saying why there is none; source.start() begins a
trial's reading and reading.stop() gives its joules (None when the source failed meanwhile).
Readers take a root (`sys_root`) so the tests run them against fake trees.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from shootout.conditions.throttling import vcgencmd as run_vcgencmd
from shootout.execution.fsread import read_int, read_text

NONE_FOUND = ("energy: this machine reports none (no RAPL powercap, hwmon power or energy sensor, or Pi 5 PMIC); "
              "--meter CMD reads an external meter")
POWER_INTERVAL_S = 0.2  # sysfs power sensors: a file read, cheap
SPAWN_INTERVAL_S = 0.5  # vcgencmd and meters: a process per reading
METER_TIMEOUT_S = 5.0
_RAPL_TOP_ZONE = re.compile(r"intel-rapl:\d+")  # intel-rapl:0:0 and the like are subzones, inside these
_INPUT = re.compile(r"(energy|power)(\d+)_input")
# ` 3V7_WL_SW_A current(0)=0.00390372A` and ` 3V7_WL_SW_V volt(8)=3.71462100V`
_PMIC_LINE = re.compile(r"^\s*(\S+)_([AV])\s+(?:current|volt)\(\d+\)=([-+0-9.eE]+)[AV]\s*$")
clock: Callable[[], float] = time.monotonic  # every time stamp here; the tests give a fake one
_WATTS = re.compile(r"^\s*((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*[wW]?\s*$")


class EnergyUnreadable(Exception):
    """A reading failed: the counter could not be read, the command failed or printed no number."""


@dataclass(frozen=True)
class Counter:
    """A cumulative energy counter in microjoules; `wrap_uj` is where it wraps to 0 (RAPL)."""

    path: Path
    wrap_uj: int | None = None

    def read(self) -> int:
        try:
            return int(self.path.read_text().strip())
        except (OSError, ValueError) as error:
            raise EnergyUnreadable(f"{self.path}: {_why(error)}") from error

    def joules(self, before: int, after: int) -> float:
        """The energy between two readings; a RAPL counter that went back wrapped once (a trial is
        far shorter than a wrap: tens of minutes at full power)."""
        if after < before:
            if self.wrap_uj is None:
                raise EnergyUnreadable(f"{self.path} went back from {before} to {after}")
            after += self.wrap_uj
        return (after - before) / 1e6


class EnergyReading:
    """One trial's reading, begun by EnergySource.start(); stop() ends it."""

    problem: str | None = None  # why stop() gave None

    def stop(self) -> float | None:
        raise NotImplementedError


@dataclass(frozen=True)
class EnergySource:
    """Where energy comes from: `counters` read before and after, or `sample` (watts) polled."""

    kind: str  # "rapl" | "hwmon-energy" | "hwmon-power" | "pmic" | "meter"
    label: str  # what a reader is told: which zones, sensors or command
    counters: tuple[Counter, ...] = ()
    sample: Callable[[], float] | None = field(default=None, compare=False, repr=False)
    interval_s: float = POWER_INTERVAL_S

    def start(self) -> EnergyReading:
        if self.sample is not None:
            return SampledReading(self.sample, self.interval_s)
        return CounterReading(self.counters)


class CounterReading(EnergyReading):
    """Counters read at start and at stop: nothing runs during the trial."""

    def __init__(self, counters: tuple[Counter, ...]) -> None:
        self._counters = counters
        try:
            self._before: list[int] | None = [c.read() for c in counters]
        except EnergyUnreadable as error:
            self._before, self.problem = None, str(error)

    def stop(self) -> float | None:
        if self._before is None:
            return None
        try:
            return sum(c.joules(b, c.read()) for c, b in zip(self._counters, self._before, strict=True))
        except EnergyUnreadable as error:
            self.problem = str(error)
            return None


class SampledReading(EnergyReading):
    """Watts read at start, every `interval_s` by a daemon thread, and at stop; integrated."""

    def __init__(self, sample: Callable[[], float], interval_s: float) -> None:
        self._sample, self._interval_s = sample, interval_s
        self._samples: list[tuple[float, float]] = []
        self._done = threading.Event()
        self._take()  # before the clock starts: the trial is not slowed by it
        self._start = clock()
        if self._samples:
            self._samples[0] = (self._start, self._samples[0][1])
        self._thread = threading.Thread(target=self._run, name="energy-sampler", daemon=True)
        self._thread.start()

    def _take(self) -> None:
        """One reading, stamped halfway through it; a failure ends the sampling."""
        begun = clock()
        try:
            watts = self._sample()
        except Exception as error:  # noqa: BLE001 - any failure, so the thread never dies unheard
            self.problem = str(error) or type(error).__name__
            self._done.set()
            return
        self._samples.append(((begun + clock()) / 2, watts))

    def _run(self) -> None:
        while not self._done.wait(self._interval_s):
            self._take()

    def stop(self) -> float | None:
        end = clock()
        self._done.set()
        self._thread.join()
        if self.problem is not None:
            return None
        in_trial = len(self._samples) - 1  # the thread's samples, after the one at start
        self._take()
        if self.problem is not None:
            return None
        points = [(min(t, end), w) for t, w in self._samples[:-1]] + [(end, self._samples[-1][1])]
        return integrate(points, self._start, end, by_mean=in_trial < 2)


def integrate(points: list[tuple[float, float]], start: float, end: float, *, by_mean: bool) -> float:
    """Joules from (time, watts) points spanning start..end: the trapezoid rule, or for a trial too
    short for the sampler (fewer than 2 samples of its own) the mean of the points × the duration."""
    if by_mean:
        return sum(w for _, w in points) / len(points) * (end - start)
    return sum((t1 - t0) * (w0 + w1) / 2 for (t0, w0), (t1, w1) in pairwise(points))


def _why(error: BaseException) -> str:
    if isinstance(error, PermissionError):
        return "permission denied (root can read it)"
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


# RAPL through powercap


def rapl_zones(sys_root: Path) -> list[tuple[str, Counter]]:
    """The top-level zones to sum, (name, counter): every package-N, or psys alone where no package
    zone is listed (psys covers the packages, so the two are never summed)."""
    base = sys_root / "class" / "powercap"
    zones = []
    top = [zone for zone in base.glob("intel-rapl:*") if _RAPL_TOP_ZONE.fullmatch(zone.name)]
    for zone in sorted(top, key=lambda p: int(p.name.partition(":")[2])):
        name = read_text(sys_root, zone / "name")
        if name is not None:
            wraps_at = read_int(sys_root, zone / "max_energy_range_uj")
            zones.append((name, Counter(zone / "energy_uj", wraps_at)))
    packages = [z for z in zones if z[0].startswith("package-")]
    return packages or [z for z in zones if z[0] == "psys"]


def rapl_source(sys_root: Path) -> EnergySource | str | None:
    """RAPL's source, a line saying why it is unusable (energy_uj unreadable), or None without it."""
    zones = rapl_zones(sys_root)
    if not zones:
        return None
    try:
        for _, counter in zones:
            counter.read()
    except EnergyUnreadable as error:
        return f"RAPL powercap: {error}"
    label = "RAPL " + " + ".join(name for name, _ in zones) + " (powercap)"
    return EnergySource("rapl", label, counters=tuple(c for _, c in zones))


# hwmon: energy counters and power sensors


def hwmon_inputs(sys_root: Path, kind: str) -> list[tuple[str, Path]]:
    """Every hwmon `<kind>K_input` file (kind: energy or power), named `device label`."""
    found = []
    for device in sorted((sys_root / "class" / "hwmon").glob("hwmon*"), key=lambda p: p.name):
        name = read_text(sys_root, device / "name") or device.name
        for path in sorted(device.glob(f"{kind}*_input")):
            match = _INPUT.fullmatch(path.name)
            if match and match.group(1) == kind:
                label = read_text(sys_root, device / f"{kind}{match.group(2)}_label") or f"{kind}{match.group(2)}"
                found.append((f"{name} {label}", path))
    return found


def without_parts(inputs: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """Sockets alone where a device lists sockets and their cores too (amd_energy's Esocket0 and
    Ecore000...): the cores are inside the sockets, so summing both would count them twice."""
    sockets = [i for i in inputs if "socket" in i[0].lower()]
    return sockets or inputs


def hwmon_energy_source(sys_root: Path) -> EnergySource | str | None:
    inputs = without_parts(hwmon_inputs(sys_root, "energy"))
    if not inputs:
        return None
    counters = tuple(Counter(path) for _, path in inputs)
    try:
        for counter in counters:
            counter.read()
    except EnergyUnreadable as error:
        return f"hwmon energy: {error}"
    return EnergySource("hwmon-energy", "hwmon energy: " + " + ".join(n for n, _ in inputs), counters=counters)


def read_power(paths: tuple[Path, ...]) -> float:
    """Watts now: the sum of hwmon power inputs (microwatts)."""
    return sum(Counter(path).read() for path in paths) / 1e6


def hwmon_power_source(sys_root: Path) -> EnergySource | str | None:
    inputs = hwmon_inputs(sys_root, "power")
    if not inputs:
        return None
    paths = tuple(path for _, path in inputs)
    try:
        read_power(paths)
    except EnergyUnreadable as error:
        return f"hwmon power: {error}"
    label = "hwmon power: " + " + ".join(n for n, _ in inputs) + f", sampled every {POWER_INTERVAL_S:g} s"
    return EnergySource("hwmon-power", label, sample=lambda: read_power(paths), interval_s=POWER_INTERVAL_S)


# Raspberry Pi 5 PMIC


def pmic_rails(text: str) -> dict[str, float]:
    """Watts per rail of `vcgencmd pmic_read_adc`'s output: rails listed with both a current
    (NAME_A) and a voltage (NAME_V); voltages alone (EXT5V_V, BATT_V) are left out."""
    amps: dict[str, float] = {}
    volts: dict[str, float] = {}
    for line in text.splitlines():
        match = _PMIC_LINE.match(line)
        if match:
            (amps if match.group(2) == "A" else volts)[match.group(1)] = float(match.group(3))
    return {rail: amps[rail] * volts[rail] for rail in amps if rail in volts}


def pmic_watts(vcgencmd: Callable[[], str | None]) -> float:
    rails = pmic_rails(vcgencmd() or "")
    if not rails:
        raise EnergyUnreadable("vcgencmd pmic_read_adc gave no rail")
    return sum(rails.values())


def default_vcgencmd() -> str | None:
    """`vcgencmd pmic_read_adc` on this machine; None without vcgencmd or when it fails."""
    return run_vcgencmd("pmic_read_adc")


def pmic_source(vcgencmd: Callable[[], str | None]) -> EnergySource | None:
    rails = pmic_rails(vcgencmd() or "")
    if not rails:
        return None
    label = (f"Pi 5 PMIC: {len(rails)} rails (vcgencmd pmic_read_adc), the PMIC's rails only, not the whole "
             f"board (USB, fan, HATs and the 5 V input are outside), sampled every {SPAWN_INTERVAL_S:g} s")
    return EnergySource("pmic", label, sample=lambda: pmic_watts(vcgencmd), interval_s=SPAWN_INTERVAL_S)


# an external meter


def meter_watts(command: str) -> float:
    """The watts a meter command prints (its last line: a number, maybe with a trailing W)."""
    try:
        done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=METER_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise EnergyUnreadable(f"meter {command!r}: {_why(error)}") from error
    lines = done.stdout.strip().splitlines()
    match = _WATTS.match(lines[-1]) if lines else None
    if done.returncode != 0 or match is None:
        printed = " ".join((done.stdout + done.stderr).split())[:120]
        raise EnergyUnreadable(f"meter {command!r} exited {done.returncode} and printed {printed!r}, not watts")
    return float(match.group(1))


def meter_source(command: str) -> EnergySource | str:
    try:
        meter_watts(command)
    except EnergyUnreadable as error:
        return f"energy: --meter gives no reading: {error}"
    return EnergySource("meter", f"meter: {command}", sample=lambda: meter_watts(command), interval_s=SPAWN_INTERVAL_S)


def find_source(*, sys_root: Path = Path("/sys"), meter: str | None = None,
                vcgencmd: Callable[[], str | None] | None = None) -> EnergySource | str:
    """The machine's energy source, or one line saying why there is none."""
    if meter is not None:
        return meter_source(meter)
    unusable = []
    for finder in (rapl_source, hwmon_energy_source, hwmon_power_source):
        found = finder(sys_root)
        if isinstance(found, EnergySource):
            return found
        if found is not None:
            unusable.append(found)
    pmic = pmic_source(vcgencmd or default_vcgencmd)
    if pmic is not None:
        return pmic
    return "; ".join([NONE_FOUND, *unusable])
