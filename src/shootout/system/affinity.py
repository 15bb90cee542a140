"""CPU sets as the kernel writes them (lists "0-3,5", hex masks "0f"), the tasks of this machine
and their allowed CPUs, IRQs' masks, and the undo steps of reserved CPUs (system/cpureserve.py),
which the change journal replays also after a kill.

A task is named by its thread id and its start time (clock ticks since boot, /proc/TID/stat) and
the boot it belongs to: a thread id the kernel gave to another task since, or a journal replayed
after a reboot, changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

PF_KTHREAD = 0x00200000  # include/linux/sched.h: a kernel thread
PF_NO_SETAFFINITY = 0x04000000  # ... whose CPUs userspace may not change (per-CPU kthreads)


def parse_cpulist(text: str) -> frozenset[int]:
    """ "0-3,5" (as /sys/devices/system/cpu/online and Cpus_allowed_list write it) -> {0, 1, 2, 3, 5}."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return frozenset(cpus)


def format_cpulist(cpus: Iterable[int]) -> str:
    """{0, 1, 2, 3, 5} -> "0-3,5"."""
    ordered = sorted(set(cpus))
    runs: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        runs.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(runs)


def parse_mask(text: str) -> frozenset[int]:
    """A hex mask as /proc/irq/N/smp_affinity writes it ("00000003", "ff,ffffffff") -> CPUs."""
    value = int(text.strip().replace(",", "") or "0", 16)
    return frozenset(i for i in range(value.bit_length()) if value >> i & 1)


def format_mask(cpus: Iterable[int]) -> str:
    """CPUs -> a hex mask the kernel takes, in 32-bit groups separated by commas."""
    value = sum(1 << c for c in set(cpus))
    digits = f"{value:x}"
    digits = digits.zfill(-(-len(digits) // 8) * 8)
    return ",".join(digits[i:i + 8] for i in range(0, len(digits), 8))


def online_cpus(root: Path = Path("/")) -> frozenset[int]:
    try:
        return parse_cpulist((root / "sys/devices/system/cpu/online").read_text())
    except OSError:
        return frozenset(os.sched_getaffinity(0))


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def task_stat(tid: int) -> tuple[int, int] | None:
    """(flags, start time in ticks) of a task, or None when it is gone."""
    try:
        text = Path(f"/proc/{tid}/stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()  # after "(comm)", which may hold spaces: state is fields[0]
    try:
        return int(fields[6]), int(fields[19])  # the 9th and the 22nd fields of stat
    except (IndexError, ValueError):
        return None


def tasks() -> Iterator[int]:
    """Every thread id of this machine (each process's threads: affinity is per thread)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # it exited while we looked
        for tid in threads:
            if tid.isdigit():
                yield int(tid)


def allowed(tid: int) -> frozenset[int] | None:
    try:
        return frozenset(os.sched_getaffinity(tid))
    except OSError:
        return None


def _same(tid: int, started: int) -> bool:
    stat = task_stat(tid)
    return stat is not None and stat[1] == started


def _set(tid: int, cpus: frozenset[int]) -> None:
    try:
        os.sched_setaffinity(tid, cpus)
    except OSError:
        pass  # gone, or a cpuset that no longer holds these CPUs: nothing of ours to put back


def restore(moved: Sequence[Sequence[object]], boot: str) -> None:
    """Undo step {"affinity": [[tid, started, "0-1"], ...], "boot": ...}: every task that is still
    the one moved gets its recorded CPUs back (those of them still online; all online if none)."""
    if boot and boot != boot_id():
        return
    online = online_cpus()
    for tid, started, cpus in moved:
        if _same(int(tid), int(started)):  # type: ignore[call-overload]
            _set(int(tid), (parse_cpulist(str(cpus)) & online) or online)  # type: ignore[call-overload]


def unpin(rest: str, keep: Sequence[Sequence[object]], boot: str) -> None:
    """Undo step {"unpin": "0", "keep": [[tid, started], ...], "boot": ...}: a task that runs on
    exactly the rest CPUs now and did not before the reservation (a child of a moved task, started
    after the last sweep) gets every online CPU."""
    if boot and boot != boot_id():
        return
    pinned, online = parse_cpulist(rest), online_cpus()
    kept = {(int(t), int(s)) for t, s in keep}  # type: ignore[call-overload]
    for tid in tasks():
        if allowed(tid) != pinned:
            continue
        stat = task_stat(tid)
        if stat is None or stat[0] & PF_NO_SETAFFINITY or (tid, stat[1]) in kept:
            continue
        _set(tid, online)


def irqs_on(cpus: frozenset[int], irqs: Path) -> list[str]:
    """The IRQs whose affinity is exactly these CPUs."""
    found = []
    for path in irqs.glob("*/smp_affinity"):
        try:
            if parse_mask(path.read_text()) == cpus:
                found.append(path.parent.name)
        except (OSError, ValueError):
            continue
    return sorted(found, key=int)


def unpin_irqs(rest: str, keep: Sequence[str], mask: str, irqs: str, boot: str) -> None:
    """Undo step {"unpin_irqs": "0", "keep": ["24", ...], "mask": "3", "irqs": "/proc/irq", "boot": ...}:
    an IRQ on exactly the rest CPUs now and not before the reservation (one a driver requested
    meanwhile, which took the default of then) gets the old default mask."""
    if boot and boot != boot_id():
        return
    kept = set(keep)
    for n in irqs_on(parse_cpulist(rest), Path(irqs)):
        if n not in kept:
            try:
                (Path(irqs) / n / "smp_affinity").write_text(mask)
            except OSError:
                continue  # the kernel keeps it (a managed IRQ), or it is gone
