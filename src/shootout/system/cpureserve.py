"""Reserved CPUs: the trials run on all CPUs but one, everything else that may move on that one.

Why: on a 2-CPU VM with light load beside it, a trial that shares its CPU with other programs
carries 10-30% noise. So for a run on this machine every task that may move (user threads and
the kernel threads without PF_NO_SETAFFINITY), every IRQ that takes a new affinity, and the
default affinity of IRQs yet to come go to the *rest* CPU, and only the trial's process tree is
started on the *reserved* ones (`taskset -c`, in front of its command). shootout itself moves to
the rest when the rounds begin (Reservation.include_self): until then what prepares the run
(compiling, calibrating, `nproc` sizing a workload's threads) has every CPU, as without.

Which: all online CPUs but the lowest-numbered one (CPU 0 takes the IRQs and timers that
cannot move, and is the CPU that never goes offline): 1 of 2, 3 of a Raspberry Pi's 4. A
workload that runs n threads or processes (Workload.cpus) fits when n CPUs are reserved; one
that needs more runs on every CPU, beside the rest (said once per workload).

How: sched_setaffinity on every thread, on any machine (cgroup v1, cgroup2, or none); children
inherit their parent's CPUs, and a sweep before every trial moves what started meanwhile (a
kernel thread, a process a daemon started with its own affinity). Where a cpuset controller is
mounted, a cpuset group keeps the others off the reserved CPUs even where a task sets its own
affinity (system/cpusets.py): the rest's group in cgroup v1 (this CI machine), the trials' own
partition in cgroup2 (a Debian 12 or Raspberry Pi OS machine); the trial's wrapper enters the
group it may run in before `taskset`.

One run at a time (system/machinelock.py): a second run on the machine meanwhile reserves
nothing and says so; its trials share the rest CPU, where the first run's sweeps move them.

Undo (through the change journal, also after a kill): every moved task gets its recorded CPUs
back when it is still the same task (system/affinity.py), every IRQ its old mask; a task that
runs on exactly the rest CPU and did not before (a child of a moved task started after the last
sweep) gets every online CPU, and such an IRQ (one a driver requested meanwhile, which took the
default mask of then) the old default. Per-CPU kernel threads are never touched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.execution.tools import find_tool
from shootout.system import affinity, machinelock
from shootout.system.affinity import PF_KTHREAD, PF_NO_SETAFFINITY, format_cpulist, format_mask, parse_mask
from shootout.system.cpusets import RestCpuset, TrialPartition, cpuset_for
from shootout.system.journal import Journal, recover_file

IRQS = Path("/proc/irq")
HELD = "reserves them for its own trials"  # a second run's line, which its report repeats

@dataclass(frozen=True)
class Split:
    reserved: frozenset[int]  # the trials'
    rest: frozenset[int]  # everything else's


def split(online: frozenset[int]) -> Split | None:
    """All online CPUs but the lowest-numbered reserved; None with fewer than two."""
    if len(online) < 2:
        return None
    rest = frozenset({min(online)})
    return Split(online - rest, rest)


def fits(need: int, where: Split) -> bool:
    """Whether a workload that keeps `need` CPUs busy runs on the reserved ones alone."""
    return need <= len(where.reserved)


def cpus_named(cpus: frozenset[int]) -> str:
    """ "CPU 1", "CPUs 1-3"."""
    return f"CPU{'s' if len(cpus) > 1 else ''} {format_cpulist(cpus)}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass
class Moved:
    """What the sweeps moved to the rest CPU, and what stays."""

    tasks: int = 0  # user threads
    kthreads: int = 0  # kernel threads that may move
    irqs: int = 0
    irqs_refused: int = 0  # the kernel refuses (EIO: managed IRQs, per-CPU timers)
    refused: int = 0  # threads the kernel refused (a cpuset without the rest CPU)
    stay: set[tuple[int, int]] = field(default_factory=set)  # per-CPU kernel threads: (tid, started)


class Reservation:
    """The run's reserved CPUs: made by start(), kept by sweep() before every trial, undone with the journal."""

    def __init__(self, journal: Journal, where: Split, taskset: str, irqs: Path = IRQS) -> None:
        self.journal = journal
        self.split = where
        self.taskset = taskset
        self.irqs = irqs
        self.moved = Moved()
        self._boot = affinity.boot_id()
        self._refused_irqs: set[str] = set()
        self._refused_tasks: set[tuple[int, int]] = set()  # tried once: not again every sweep
        self.cpuset: RestCpuset | TrialPartition | None = None  # where a cpuset controller is mounted
        # shootout itself stays on every CPU until the rounds begin (include_self): what prepares
        # the run (compiling, calibrating, nproc sizing a workload's threads) runs as before
        self.spare_self = True
        self.recovered: list[str] = []  # what a killed holder of the reservation had left, undone first

    def start(self) -> None:
        """Journal the last-resort unpin (the tasks already on exactly the rest CPU keep it), then
        move IRQs to come, IRQs and tasks."""
        rest = self.split.rest
        keep = [[tid, stat[1]] for tid in affinity.tasks()
                if affinity.allowed(tid) == rest and (stat := affinity.task_stat(tid)) is not None]
        self.journal.record(f"tasks left on {cpus_named(rest)} get every CPU back",
                            {"unpin": format_cpulist(rest), "keep": keep, "boot": self._boot})
        self.irqs_to_come()
        self.sweep()
        # after the first sweep: undone before it, so its masks win
        self.cpuset = cpuset_for(self.journal, self.split.reserved, self.split.rest, cpus_named)
        if self.cpuset is not None:
            self.cpuset.sweep(self._own(), self.moved.stay, not self.spare_self)

    def irqs_to_come(self) -> None:
        """IRQs requested from now on to the rest CPU (the default mask), and back at the undo:
        the default, and a driver's IRQ requested meanwhile (a device reset), which took it."""
        rest = self.split.rest
        default = self.irqs / "default_smp_affinity"
        try:
            old = default.read_text().strip()
            if parse_mask(old) & self.split.reserved:
                self.journal.record(f"IRQs requested meanwhile on {cpus_named(rest)} get {old} back",
                                    {"unpin_irqs": format_cpulist(rest), "keep": affinity.irqs_on(rest, self.irqs),
                                     "mask": old, "irqs": str(self.irqs), "boot": self._boot})
                self.journal.change(f"new IRQs on {cpus_named(rest)} (default_smp_affinity was {old})",
                                    {"write": str(default), "content": old},
                                    lambda: default.write_text(format_mask(rest)))
        except OSError:
            pass  # no /proc/irq (a container): nothing to keep off the reserved CPUs there

    def include_self(self) -> None:
        """shootout's own process to the rest too, when the rounds begin (its trials are pinned)."""
        self.spare_self = False
        self.sweep()

    def _own(self) -> set[int]:
        if not self.spare_self:
            return set()
        try:
            return {int(t) for t in os.listdir("/proc/self/task")}
        except OSError:
            return set()

    def sweep(self) -> None:
        """Move whatever runs on a reserved CPU now (newcomers since the last sweep) to the rest."""
        self._sweep_irqs()
        self._sweep_tasks()
        if self.cpuset is not None:
            self.cpuset.sweep(self._own(), self.moved.stay, not self.spare_self)

    def _sweep_tasks(self) -> None:
        reserved, rest = self.split.reserved, self.split.rest
        moving: list[tuple[int, int, frozenset[int], bool]] = []
        own = self._own()
        for tid in affinity.tasks():
            if tid in own:
                continue
            cpus = affinity.allowed(tid)
            if cpus is None or not cpus & reserved:
                continue
            stat = affinity.task_stat(tid)
            if stat is None:
                continue
            flags, started = stat
            if flags & PF_NO_SETAFFINITY:
                self.moved.stay.add((tid, started))  # a per-CPU kernel thread: the kernel keeps it
                continue
            moving.append((tid, started, cpus, bool(flags & PF_KTHREAD)))
        moving = [m for m in moving if (m[0], m[1]) not in self.moved.stay | self._refused_tasks]
        if not moving:
            return
        self.journal.record(f"{len(moving)} tasks moved to {cpus_named(rest)}",
                            {"affinity": [[tid, started, format_cpulist(cpus)] for tid, started, cpus, _ in moving],
                             "boot": self._boot})
        for tid, started, _cpus, kernel in moving:
            try:
                os.sched_setaffinity(tid, rest)
            except ProcessLookupError:
                continue  # it exited meanwhile
            except OSError:  # EINVAL: a kernel thread bound to its CPU, or a cpuset without the rest CPU
                if kernel:
                    self.moved.stay.add((tid, started))
                else:
                    self._refused_tasks.add((tid, started))
                    self.moved.refused += 1
                continue
            if kernel:
                self.moved.kthreads += 1
            else:
                self.moved.tasks += 1

    def _sweep_irqs(self) -> None:
        try:
            numbers = sorted((d.name for d in self.irqs.iterdir() if d.name.isdigit()), key=int)
        except OSError:
            return
        mask = format_mask(self.split.rest)
        for n in numbers:
            if n in self._refused_irqs:
                continue
            path = self.irqs / n / "smp_affinity"
            try:
                old = path.read_text().strip()
            except OSError:
                continue
            if not parse_mask(old) & self.split.reserved:
                continue
            try:
                self.journal.change(f"IRQ {n} to {cpus_named(self.split.rest)} (was {old})",
                                    {"write": str(path), "content": old}, lambda p=path: p.write_text(mask))
            except OSError:  # EIO: the kernel manages it (a queue per CPU), or its chip cannot
                self._refused_irqs.add(n)
                self.moved.irqs_refused += 1
                continue
            self.moved.irqs += 1

    def pin(self, need: int) -> list[str]:
        """The prefix that starts a trial on the reserved CPUs; on every online CPU when its
        workload needs more of them than are reserved (shootout's own CPUs, the rest, are
        inherited otherwise)."""
        fit = fits(need, self.split)
        cpus = self.split.reserved if fit else self.split.reserved | self.split.rest
        pin = [self.taskset, "-c", format_cpulist(cpus)]
        return pin if self.cpuset is None else self.cpuset.wrap(fit, pin)

    def no_partition(self) -> str | None:
        """On cgroup2, once the rounds have begun: why the trials have no cpuset partition, if so."""
        if why := getattr(self.cpuset, "invalid", None):  # the reason in_force is None
            return f"no cpuset partition for the trials ({why}): affinity alone keeps their CPUs"
        return None

    def describe(self) -> str:
        """The preflight's line."""
        m = self.moved
        moved = [_plural(m.tasks, "task")]
        if m.kthreads:
            moved.append(_plural(m.kthreads, "kernel thread"))
        moved.append(_plural(m.irqs, "IRQ"))
        stays = []
        if m.stay:
            stays.append(f"{_plural(len(m.stay), 'per-CPU kernel thread')} stay")
        if m.irqs_refused:
            stays.append(f"{_plural(m.irqs_refused, 'IRQ')} the kernel keeps")
        if m.refused:
            stays.append(f"{_plural(m.refused, 'task')} refused")
        if self.recovered:
            stays.append(f"first undid {_plural(len(self.recovered), 'change')} a killed run had left")
        tail = f"; {', '.join(stays)}" if stays else ""
        how = self.method
        return (f"{cpus_named(self.split.reserved)} reserved for the trials; moved {_listed(moved)} to "
                f"{cpus_named(self.split.rest)} ({how}, IRQ smp_affinity){tail}")

    @property
    def in_force(self) -> RestCpuset | TrialPartition | None:
        """The cpuset group that keeps the CPUs apart: none where the cgroup2 partition stood aside."""
        return None if getattr(self.cpuset, "invalid", None) else self.cpuset

    @property
    def method(self) -> str:
        return f"{self.in_force.method}, sched_setaffinity" if self.in_force is not None else "sched_setaffinity"

    def facts(self) -> dict[str, Any]:
        m = self.moved
        return {"reserved": format_cpulist(self.split.reserved), "rest": format_cpulist(self.split.rest),
                "method": self.method, "cpuset": str(self.in_force.group) if self.in_force is not None else None,
                "cpuset_partition_refused": getattr(self.cpuset, "invalid", None), "moved_tasks": m.tasks, "moved_kernel_threads": m.kthreads,
                "moved_irqs": m.irqs, "irqs_kept_by_kernel": m.irqs_refused, "refused_tasks": m.refused,
                "per_cpu_kernel_threads": len(m.stay)}


def reserve(journal: Journal, *, isolate: bool, here: bool, why_not: str | None = None,
            locks: Path = machinelock.LOCKS) -> Reservation | str:
    """The run's reservation, made; or why there is none, one line (then nothing is changed).
    isolate: not `run --no-isolate`; here: some configuration's trials run on this machine;
    why_not: the run's own reason against it (a VM on this machine); locks: machinelock's folder."""
    if not isolate:
        return "CPUs not reserved (--no-isolate): the trials share every CPU with other programs"
    if not here:
        return "CPUs not reserved: no trial runs on this machine"
    if why_not:
        return f"CPUs not reserved: {why_not}"
    online = affinity.online_cpus()
    where = split(online)
    if where is None:
        return (f"CPUs not reserved: this machine has {_plural(len(online), 'online CPU')}, and everything "
                "else needs one of its own")
    if os.geteuid() != 0:
        return "CPUs not reserved: not root (moving other programs' tasks and IRQs needs root)"
    taskset = find_tool("taskset")
    if taskset is None:
        return "CPUs not reserved: taskset is missing (apt-get install util-linux)"
    lock = machinelock.lock_file("reserved-cpus", locks)
    entry, holder = journal.take_lock("the machine's CPU reservation, this run's", lock)
    if entry is None:
        who = f"shootout process {holder.pid}" if holder is not None else "another shootout process"
        return (f"CPUs not reserved: {who} {HELD}; this run's share "
                f"{cpus_named(where.rest)} with everything else while it runs")
    made = Reservation(journal, where, taskset)
    if holder is not None:  # killed while it held them: its moves and cpuset go before ours
        made.recovered, errors = recover_file(Path(holder.journal))
        if errors:
            journal.undo_entry(entry)
            return f"CPUs not reserved: a killed run's reservation is not undone ({errors[0]}): run `shootout doctor`"
    made.start()
    return made
