"""The run monitor: a low-priority sampler of clock, temperature, load, steal and run queue.

Why a thread and not a child process: a sample is a dozen small procfs/sysfs reads (well
under a millisecond of CPU), and the runner's main thread spends trials blocked in wait4()
with the GIL released, so a thread competes with nothing; a child process would cost a
second interpreter and a pipe for the same readings. The thread lowers its own priority
to nice 19 (Linux applies setpriority to a single thread id), so on a saturated machine
the benchmark wins the CPU. Overhead is measured by `python -m shootout.measure.overhead`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.conditions import sensors
from shootout.conditions.clockflags import readings
from shootout.conditions.throttling import NOW_MASK, get_throttled
from shootout.execution.tools import find_tool

log = logging.getLogger(__name__)

# What --no-monitor turns off, as the run says it (docs/method.md, "Trials and rounds", says the same)
OFF = ("monitor off (--no-monitor): no samples of clock, temperature, throttling, load or steal during the "
       "trials, so no steal, hot or throttled flags, clock drops seen only by the clock check of each round, "
       "and no timeline in the report; trials that other programs interrupted are still set aside and measured "
       "again (/proc/stat read before and after each; --repeats 0 turns that off)")


@dataclass
class TrialWindow:
    """What the monitor saw while one trial ran: filled in when the trial's quiet() ends.

    summary is the window dict stored in Trial.monitor (see summarize), with others_cpu_s: the
    user CPU time that programs outside shootout's process tree used meanwhile (the trial,
    its daemons and a VM are inside the tree; kernel threads' work is system time and not
    counted), and others_cpus, that time per second of the window.
    """

    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Mark:
    """The CPU counts at one moment: the machine's user ticks (/proc/stat) and shootout's own
    user CPU there; two of them tell what other programs used in between (_others)."""

    at: float
    user_ticks: int | None
    tree_user_s: float


def _mark(root: Path, own_user_s: Callable[[], float] = sensors.tree_user_s,
          cpus: frozenset[int] | None = None) -> Mark:
    """cpus: only these CPUs' ticks (a trial on reserved CPUs: others' work on the rest does not touch it)."""
    times = sensors.cpu_times(root, cpus)
    return Mark(time.monotonic(), times.user if times is not None else None, own_user_s())


def _others(before: Mark, after: Mark) -> dict[str, float | None]:
    if before.user_ticks is None or after.user_ticks is None or after.at <= before.at:
        return {"others_cpu_s": None, "others_cpus": None}
    system = (after.user_ticks - before.user_ticks) / os.sysconf("SC_CLK_TCK")
    others = max(0.0, system - (after.tree_user_s - before.tree_user_s))
    return {"others_cpu_s": others, "others_cpus": others / (after.at - before.at)}


@contextmanager
def others_during(root: Path = Path("/"), cpus: frozenset[int] | None = None) -> Iterator[TrialWindow]:
    """Around a trial without the monitor: only what other programs used meanwhile (two reads
    of /proc/stat and of the process tree's times, no sampling), which is all that decides
    whether the trial was interrupted (conditions/repeats.py); cpus: on those CPUs alone."""
    seen = TrialWindow()
    before = _mark(root, cpus=cpus)
    try:
        yield seen
    finally:
        seen.summary = _others(before, _mark(root, cpus=cpus))


def wait_quiet(limit_cpus: float, max_s: float, root: Path = Path("/"), step_s: float = 0.1,
               counts: Callable[[], Mark] | None = None, cpus: frozenset[int] | None = None) -> float:
    """Wait until other programs use at most limit_cpus over a step_s window, or max_s has
    passed; returns the seconds waited. Burst load lasts longer than a short trial, so a
    trial run again at once would meet the same burst. counts: the CPU counts now (default:
    this machine's, read under root; cpus: those CPUs' alone)."""
    counts = counts or (lambda: _mark(root, cpus=cpus))
    start = time.monotonic()
    before = counts()
    while time.monotonic() - start < max_s:
        time.sleep(step_s)
        after = counts()
        share = _others(before, after)["others_cpus"]
        if share is None or share <= limit_cpus:
            break
        before = after
    return time.monotonic() - start


def _nice_this_thread() -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except OSError as exc:
        log.debug("monitor keeps normal priority: %s", exc)


class Monitor:
    """Samples every `interval_s` in a background thread between start() and stop()."""

    def __init__(self, interval_s: float = 1.0, root: Path = Path("/"),
                 own_user_s: Callable[[], float] = sensors.tree_user_s) -> None:
        self.interval_s = interval_s
        self.root = root
        self.own_user_s = own_user_s  # shootout's own user CPU on the monitored machine, in seconds
        self._dirs = sensors.cpu_dirs(root)  # CPU hotplug during a run is not followed
        self.cpus = len(self._dirs) or os.cpu_count() or 1
        self.cpu_s = 0.0  # CPU time the sampler thread used, to show its cost
        self._samples: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._reading = threading.Lock()  # one sample at a time: sample() advances the counters
        self._paused = threading.Event()  # set while a trial runs (see quiet())
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._prev_times: sensors.CpuTimes | None = None
        self._prev_throttle: int | None = None
        # Firmware flags describe the real machine only, and only a Raspberry Pi has the tool.
        self._vcgencmd = root == Path("/") and find_tool("vcgencmd") is not None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._prev_times = sensors.cpu_times(self.root)
        self._prev_throttle = sensors.thermal_throttle_count(self.root, self._dirs)
        self._thread = threading.Thread(target=self._loop, name="shootout-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling; one last sample closes the final interval."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self.add(self.sample())

    def __enter__(self) -> Monitor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        _nice_this_thread()
        next_at = time.monotonic() + self.interval_s
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            next_at += self.interval_s
            if self._paused.is_set():
                continue
            c0 = time.thread_time()
            try:
                self._take()
            except Exception:  # a sensor failing must not end monitoring of the run
                log.exception("monitor sample failed")
            self.cpu_s += time.thread_time() - c0

    def _take(self) -> None:
        with self._reading:
            self.add(self.sample())

    @contextmanager
    def quiet(self, cpus: frozenset[int] | None = None) -> Iterator[TrialWindow]:
        """Around a trial: no sampling while it runs, one sample right before and right after.

        The sampler would otherwise wake up during the trial and compete for a CPU (on a
        2-core machine that shows in the trial's time). The sample taken right after the trial
        counts steal and throttle events since the one right before, so the window it yields
        (filled in on leaving) covers exactly the trial's run, as window() does later. cpus:
        the reserved CPUs the trial ran on, whose ticks alone say what other programs took from it.
        """
        self._paused.set()
        seen = TrialWindow()
        before, entered = self._sample_and_counts(cpus), time.time()
        try:
            yield seen
        finally:
            after, left = self._sample_and_counts(cpus), time.time()
            seen.summary = {**self.window(entered, left), **_others(before, after)}
            self._paused.clear()

    def _counts(self, cpus: frozenset[int] | None = None) -> Mark:
        """The CPU counts now (of those CPUs), which tell what other programs used (see _others)."""
        return _mark(self.root, self.own_user_s, cpus)

    def _sample_and_counts(self, cpus: frozenset[int] | None = None) -> Mark:
        """A sample now, and the CPU counts: right before and right after a trial."""
        self._take()
        return self._counts(cpus)

    def wait_quiet(self, limit_cpus: float, max_s: float, step_s: float = 0.1,
                   cpus: frozenset[int] | None = None) -> float:
        """wait_quiet() on the monitored machine."""
        return wait_quiet(limit_cpus, max_s, self.root, step_s, counts=lambda: self._counts(cpus))

    # -- samples -----------------------------------------------------------------
    def sample(self) -> dict[str, Any]:
        """One reading now; steal and throttle events cover the time since the previous one."""
        times, running = sensors.stat_snapshot(self.root)
        mhz = sensors.cpu_mhz(self.root, self._dirs)
        load = sensors.loadavg(self.root)
        throttle = sensors.thermal_throttle_count(self.root, self._dirs)
        sample: dict[str, Any] = {
            "t": time.time(),
            "mhz_min": min(mhz) if mhz else None,
            "mhz_mean": sum(mhz) / len(mhz) if mhz else None,
            # Idle cores clock down; the fastest core is the one a running trial gets.
            "mhz_max": max(mhz) if mhz else None,
            "temp_c": sensors.max_temp_c(self.root),
            "load1": load[0] if load else None,
            "steal_pct": sensors.steal_pct(self._prev_times, times),
            # procs_running counts this sampler too, which is running while it reads.
            "runq": max(0, running - 1) if running is not None else None,
            "throttle_events": (throttle - self._prev_throttle)
            if throttle is not None and self._prev_throttle is not None
            else None,
            "throttled_bits": get_throttled() if self._vcgencmd else None,
        }
        # A reading that failed (a file caught mid-rewrite) keeps the last good one, so the
        # next sample still counts the events since then instead of losing them.
        if times is not None:
            self._prev_times = times
        if throttle is not None:
            self._prev_throttle = throttle
        return sample

    def add(self, sample: dict[str, Any]) -> None:
        """Append a sample (the sampler's own, or one injected by a test or a clock check)."""
        with self._lock:
            self._samples.append(sample)

    def samples(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._samples)

    def window(self, t0: float, t1: float) -> dict[str, Any]:
        """Summary of what was seen while a trial ran from Unix time t0 to t1.

        Uses the samples taken in [t0, t1] and the first one after t1, whose steal and
        throttle counts cover the interval in which the trial ended (a trial shorter than
        the interval still gets that one). Values are None when no sample had them.
        """
        ordered = sorted(self.samples(), key=lambda s: s["t"])
        inside = [s for s in ordered if t0 <= s["t"] <= t1]
        after = next((s for s in ordered if s["t"] > t1), None)
        used = inside + ([after] if after is not None else [])
        return summarize(used, self.cpus)


def summarize(samples: Sequence[dict[str, Any]], cpus: int) -> dict[str, Any]:
    """The window dict stored in Trial.monitor (see Monitor.window)."""
    def pick(fn: Callable[[list[float]], float], key: str) -> float | None:
        vals = readings(samples, key)
        return fn(vals) if vals else None

    bits = [int(b) for b in readings(samples, "throttled_bits")]
    events = readings(samples, "throttle_events")
    throttled = None
    if bits or events:
        throttled = any(b & NOW_MASK for b in bits) or any(e > 0 for e in events)
    return {
        "max_temp_c": pick(max, "temp_c"),
        "min_mhz": pick(min, "mhz_max"),
        "max_steal_pct": pick(max, "steal_pct"),
        "max_load": pick(max, "load1"),
        "max_runq": pick(max, "runq"),
        "throttled": throttled,
        "cpus": cpus,
        "samples": len(samples),
    }
