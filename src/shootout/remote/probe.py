"""The remote machine's procfs/sysfs, mirrored into a local tree that shootout's readers use.

Every reader of conditions/ (machinefacts.py among them) takes a `root`; copying the files they read from
the remote (one `helper snap` exec) into a private local directory lets the same code
describe the remote: facts, preflight, and the monitor's samples (clock, temperature,
steal, throttle counters), which a `helper watch` stream refreshes once per interval.
"""

from __future__ import annotations

import os
import shlex
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from shootout.base.errors import TargetError
from shootout.conditions.machinefacts import cores
from shootout.conditions.monitor import Mark, Monitor
from shootout.conditions.sensors import CpuTimes, parse_stat
from shootout.execution.fsread import read_text
from shootout.execution.placefacts import TargetFacts, sizing_from
from shootout.remote.channel import SshChannel
from shootout.remote.helper import parse_snapshot
from shootout.system.journal import Journal

Snap = Callable[[list[str]], bytes]  # `helper snap PATTERN...`'s output (through the target's session)

_CPU = "/sys/devices/system/cpu"
# What the monitor reads, every interval.
SAMPLED = (
    "/proc/stat", "/proc/loadavg",
    f"{_CPU}/cpu[0-9]*/topology/core_id",  # makes every online CPU's directory exist in the mirror
    f"{_CPU}/cpu[0-9]*/cpufreq/scaling_cur_freq", f"{_CPU}/cpu[0-9]*/thermal_throttle/*_throttle_count",
    "/sys/class/thermal/thermal_zone*/type", "/sys/class/thermal/thermal_zone*/temp",
    "/sys/class/hwmon/hwmon*/name", "/sys/class/hwmon/hwmon*/temp*_input", "/sys/class/hwmon/hwmon*/temp*_label",
)
# What facts and preflight read, once.
DESCRIBED = (
    *SAMPLED, "/proc/cpuinfo", "/proc/meminfo", "/proc/vmstat", "/proc/cmdline",
    "/proc/sys/kernel/osrelease", "/proc/sys/kernel/arch", "/proc/sys/kernel/hostname",
    "/proc/sys/kernel/random/boot_id", "/etc/os-release", "/usr/lib/os-release", "/etc/machine-id", "/etc/hostname",
    "/proc/device-tree/model", "/sys/class/dmi/id/product_name", "/sys/hypervisor/type",
    f"{_CPU}/online", f"{_CPU}/vulnerabilities/*", f"{_CPU}/cpu[0-9]*/cpufreq/scaling_governor",
    f"{_CPU}/intel_pstate/no_turbo", f"{_CPU}/cpufreq/boost",
    "/sys/devices/system/cpu/cpu0/cache/index*/size", "/sys/devices/system/cpu/cpu0/cache/index*/level",
    "/sys/devices/system/cpu/cpu0/cache/index*/type",
    "/boot/firmware/config.txt", "/boot/config.txt",  # a Raspberry Pi's arm_64bit
)


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    """Put each remote file at root/PATH; atomic per file, so a concurrent reader never sees half.
    Writers (the monitor's stream, facts' refresh, a trial's counters) each use a temporary
    file of their own thread: one's rename never takes another's file."""
    for path, content in files.items():
        dest = root / path.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{threading.get_ident()}.tmp")
        tmp.write_bytes(content)
        os.replace(tmp, dest)


class RemoteProbe:
    """A local mirror of the remote's procfs/sysfs files; root is what readers take."""

    def __init__(self, channel: SshChannel, helper: str, snap: Snap, journal: Journal) -> None:
        self.channel = channel  # the monitor's stream gets a channel of its own
        self.helper = helper
        self.snap = snap
        self.journal = journal
        self.root = Path(tempfile.mkdtemp(prefix="shootout-remote-"))
        self._entry = journal.record(f"mirror of {channel.address.destination}'s /proc and /sys in {self.root}",
                                     {"rmtree": str(self.root)})

    def refresh(self, patterns: tuple[str, ...] = DESCRIBED) -> None:
        write_tree(self.root, parse_snapshot(self.snap(list(patterns))))

    def sizing(self) -> TargetFacts:
        """Cores, memory and caches as the mirror shows them (what default parameters are sized by)."""
        index = sorted((self.root / _CPU.lstrip("/") / "cpu0/cache").glob("index*"))
        caches = "\n".join(" ".join(read_text(d, d / name) or "" for name in ("level", "type", "size"))
                           for d in index)
        return sizing_from(cores(self.root), read_text(self.root, "/proc/meminfo") or "", caches)

    def close(self) -> None:
        self.journal.undo_entry(self._entry)


def read_stream(stream: IO[bytes], on_snapshot: Callable[[dict[str, bytes]], None]) -> None:
    """Consume `helper watch` output: files, then an "E" line closing each snapshot."""
    files: dict[str, bytes] = {}
    for header in iter(stream.readline, b""):
        kind, _, rest = header.decode(errors="replace").rstrip("\n").partition(" ")
        if kind == "F":
            length, _, path = rest.partition(" ")
            files[path] = stream.read(int(length))
        elif kind == "E":
            on_snapshot(files)
            files = {}


class RemoteMonitor(Monitor):
    """The run monitor fed by the remote's `helper watch` stream instead of a local timer.

    The remote side costs one process that wakes once per interval and reads a dozen small
    files in-process (no fork per sample); the ssh channel carries a few kB per sample.

    It also decides whether a trial on the remote was interrupted (conditions/repeats.py), as
    the run's monitor does for this machine: quiet() reads the remote's counters right before
    and right after the trial (one `helper snap` each, through the target's session), and other
    programs' CPU is the remote's user time meanwhile less what shootout's commands used there
    (own_user_s: their rusage, which the helper reports). So a machine measured beside others
    is judged by its own load, not by this machine's.
    """

    def __init__(self, probe: RemoteProbe, interval_s: float = 1.0,
                 own_user_s: Callable[[], float] = lambda: 0.0) -> None:
        probe.refresh()
        super().__init__(interval_s=interval_s, root=probe.root, own_user_s=own_user_s)
        self.probe = probe
        self._proc: Any = None
        self._reader: threading.Thread | None = None
        self._latest = -1  # the newest snapshot's total CPU ticks: an older one arriving late is dropped

    def start(self) -> None:
        if self._reader is not None:
            return
        self._prev_times = None
        self._proc = self.probe.channel.popen(
            shlex.join([self.probe.helper, "watch", f"{self.interval_s:g}", *SAMPLED]))
        self._reader = threading.Thread(target=read_stream, args=(self._proc.stdout, self._on_snapshot),
                                        name="shootout-remote-monitor", daemon=True)
        self._reader.start()

    def _on_snapshot(self, files: dict[str, bytes]) -> None:
        self._keep(files)

    def _keep(self, files: dict[str, bytes]) -> CpuTimes | None:
        """Mirror a snapshot and sample it, unless a newer one is mirrored already (the stream
        and quiet()'s reads cross); returns the snapshot's own CPU times."""
        times, _ = parse_stat(files.get("/proc/stat", b"").decode(errors="replace"))
        with self._reading:
            if times is None or times.total >= self._latest:
                self._latest = times.total if times is not None else self._latest
                write_tree(self.root, files)
                self.add(self.sample())
        return times

    def _read(self, patterns: tuple[str, ...], sample: bool) -> Mark:
        """The remote's CPU counts now (and a sample of them all, when sample); unknown when the
        remote does not answer (the trial's own command then says what went wrong)."""
        try:
            files = parse_snapshot(self.probe.snap(list(patterns)))
        except (TargetError, ValueError):
            return Mark(time.monotonic(), None, self.own_user_s())
        times = self._keep(files) if sample else parse_stat(files.get("/proc/stat", b"").decode(errors="replace"))[0]
        return Mark(time.monotonic(), times.user if times is not None else None, self.own_user_s())

    # cpus: the reserved CPUs of this machine's trials; a remote machine reserves none, so its whole count
    def _counts(self, cpus: frozenset[int] | None = None) -> Mark:
        return self._read(("/proc/stat",), sample=False)

    def _sample_and_counts(self, cpus: frozenset[int] | None = None) -> Mark:
        return self._read(SAMPLED, sample=True)

    def stop(self) -> None:
        if self._reader is None:
            return
        self._proc.stdin.close()
        self._proc.terminate()  # closes the channel: the remote helper dies of SIGPIPE
        self._proc.wait(timeout=30)
        self._reader.join(timeout=10)
        self._reader = None
