"""CPU time the kernel spends outside any trial's processes: /proc/stat around a window.

A trial's rusage holds the CPU time of the processes it started and reaped. The receive path
of a packet, though, runs in softirq (NET_RX): inline in whatever process or idle loop the CPU
was in, or in ksoftirqd when it falls behind. So the network trials print the machine's
/proc/stat before and after their window, and count its softirq and irq time, per CPU.

Two figures, because of how this kernel family counts (no CONFIG_IRQ_TIME_ACCOUNTING, as on
the Debian and cloud kernels seen so far): a tick taken in softirq adds to the CPU's softirq
column *and* to the system time of the task it interrupted, so softirq that ran inside a
trial's own process is already in its rusage.
    softirq()         the softirq and irq columns of every CPU: the whole receive path of the
                      drop ladder, whose generator itself never runs in softirq;
    kernel_threads()  the CPU time of the kernel's threads (ksoftirqd, where softirq goes when
                      it falls behind; kworkers, where kernel WireGuard encrypts; NAPI threads):
                      what a trial's traffic costs beyond its rusage, never counted twice.
Both are the machine's: another program's traffic during the window counts too (run under
the shared lock; `uptime` beside the figures).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from shootout.base.errors import WorkloadError

# /proc/stat columns after the name: user nice system idle iowait irq softirq steal guest guest_nice
_IDLE, _IOWAIT, _IRQ, _SOFTIRQ, _STEAL = 3, 4, 5, 6, 7
USER_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

# shell line that prints the CPU lines of /proc/stat (one per CPU and the sum)
PRINT = "grep '^cpu' /proc/stat"


@dataclass(frozen=True)
class CpuTimes:
    """Ticks (1/USER_HZ s) per CPU line of /proc/stat: "cpu" (the sum), "cpu0", "cpu1", ..."""

    lines: dict[str, tuple[int, ...]]

    def seconds(self, cpu: str, columns: tuple[int, ...]) -> float:
        row = self.lines[cpu]
        return sum(row[c] for c in columns if c < len(row)) / USER_HZ


def parse(text: str) -> CpuTimes:
    lines = {}
    for line in text.splitlines():
        words = line.split()
        if words and words[0].startswith("cpu") and len(words) > _SOFTIRQ + 1:
            lines[words[0]] = tuple(int(w) for w in words[1:])
    if "cpu" not in lines:
        raise WorkloadError("no cpu line of /proc/stat in the trial's output", "the trial script was cut short")
    return CpuTimes(lines)


def softirq(before: CpuTimes, after: CpuTimes, cpu: str = "cpu") -> float:
    """Seconds of softirq and irq time between the snapshots (all CPUs by default)."""
    return after.seconds(cpu, (_IRQ, _SOFTIRQ)) - before.seconds(cpu, (_IRQ, _SOFTIRQ))


# shell line that prints every process's /proc/PID/stat (kernel threads are the children of kthreadd)
PRINT_THREADS = "cat /proc/[0-9]*/stat 2>/dev/null"
_KTHREADD = 2


def kernel_threads(text: str) -> dict[int, float]:
    """PID -> user+system seconds of each kernel thread in a dump of /proc/*/stat."""
    found = {}
    for line in text.splitlines():
        pid, _, rest = line.partition(" (")
        fields = rest[rest.rfind(")") + 2:].split()  # after the comm, which may hold spaces
        if len(fields) > 12 and pid.isdigit() and (fields[1] == str(_KTHREADD) or pid == str(_KTHREADD)):
            found[int(pid)] = (int(fields[11]) + int(fields[12])) / USER_HZ  # utime, stime
    return found


def kernel_thread_seconds(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds kernel threads spent between two dumps (a thread born in between counts whole)."""
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


def snapshot(tag: str) -> str:
    """Shell lines that print the kernel threads' and the CPUs' times as sections kthreads-TAG, cpu-TAG."""
    return f"echo 'section kthreads-{tag}'; {PRINT_THREADS}; echo 'section cpu-{tag}'; {PRINT}"


@dataclass(frozen=True)
class KernelShare:
    threads_s: float  # CPU seconds of the kernel's threads over the window
    softirq_s: float  # softirq and irq seconds of every CPU (partly inside the trial's own processes)


def kernel_share(sections: dict[str, str], before: str = "before", after: str = "after") -> KernelShare:
    """What snapshot(before) and snapshot(after) saw between them."""
    if f"kthreads-{after}" not in sections:
        raise WorkloadError("the trial printed no kernel-thread snapshot", "the trial script was cut short")
    threads = kernel_thread_seconds(kernel_threads(sections.get(f"kthreads-{before}", "")),
                                    kernel_threads(sections[f"kthreads-{after}"]))
    return KernelShare(threads, softirq(parse(sections.get(f"cpu-{before}", "")),
                                        parse(sections.get(f"cpu-{after}", ""))))
