"""Cpuset groups for reserved CPUs (system/cpureserve.py), where a cpuset controller is mounted:
they keep other programs off the reserved CPUs even where a task sets its own affinity.

cgroup v1 (this CI machine): the rest's group below the cpuset root, its mems copied from the
root; the root's threads (`tasks`) are moved into it at every sweep. A trial's wrapper enters the
root group before `taskset` pins it.

cgroup2 (a Debian 12 or Raspberry Pi OS machine, where systemd owns the tree): the trials' own
partition, made when the rounds begin (what prepares the run has every CPU). A group below the
root holds the reserved CPUs, and once its cpuset.cpus.partition reads "root" the kernel takes
them from every other group (systemd's slices, the root's own processes) and gives them back
when the group goes: no other group is written (a slice's cpuset.cpus, once set, could not be
emptied again while it holds tasks: the kernel refuses with ENOSPC). A trial's wrapper enters
the group. A workload that needs more CPUs than are reserved turns it back into an ordinary
group ("member") for its trial, and the sweep before the next trial makes it a partition again. A run whose configuration parts put
trials in cgroups of their own (a memory limit, a throttle: siblings of the partition, whose CPUs
it would take from them, and entering one would reset a trial's affinity) keeps to affinity
alone, and says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from shootout.system import affinity
from shootout.system.affinity import PF_NO_SETAFFINITY, format_cpulist
from shootout.system.cgroups import Hierarchy, enable, enter_argv, is_ours, layout, unique_name
from shootout.system.journal import Journal, Undo

# Undo of a group: its tasks back to the root group (which gives them every CPU of the root; the
# journal's older entries then give moved tasks their own), then the directory removed (a
# partition's CPUs go back to every other group with it), tried for up to 5 s while tasks are
# still forking into it. Safe to run twice.
_RELEASE = r"""
d=$1; root=$2; file=$3; i=0
while [ -d "$d" ]; do
  for t in $(cat "$d/$file"); do echo "$t" > "$root/$file" 2>/dev/null; done
  rmdir "$d" 2>/dev/null && exit 0
  i=$((i+1)); [ "$i" -gt 100 ] && { echo "cannot remove $d: still in use" >&2; exit 1; }
  sleep 0.05
done
"""


def cpuset_hierarchy() -> Hierarchy | None:
    """The hierarchy (v1 or cgroup2) that holds the cpuset controller here, if any."""
    try:
        return layout().holding("cpuset")
    except OSError:
        return None


class RestCpuset:
    """cgroup v1: the rest's group; make() it, then sweep() before every trial."""

    method = "cgroup v1 cpuset"

    def __init__(self, journal: Journal, root: Path, rest: frozenset[int], named: str) -> None:
        self.journal = journal
        self.root = root
        self.rest = rest
        self.named = named
        self.group = root / unique_name("shootout-rest")

    def make(self) -> bool:
        """The group, made through the journal; False (nothing made) when the kernel refuses."""
        def make() -> None:
            self.group.mkdir()  # a v1 group starts with no CPUs and no memory nodes
            (self.group / "cpuset.mems").write_text((self.root / "cpuset.mems").read_text().strip())
            (self.group / "cpuset.cpus").write_text(format_cpulist(self.rest))

        try:
            self.journal.change(f"cpuset group {self.group} of {self.named}", _release(self.group, self.root, "tasks"),
                                make)
        except OSError:
            return False
        return True

    def wrap(self, fits: bool, pin: list[str]) -> list[str]:
        """A trial's `taskset` prefix behind a wrapper that first enters the root group: inside
        the rest's group no affinity reaches a reserved CPU."""
        return enter_argv([self.root / "cgroup.procs"], pin)

    def sweep(self, own: set[int], stay: set[tuple[int, int]], rounds: bool) -> None:
        """The root group's threads into the group (per-CPU kernel threads refuse: they stay)."""
        try:
            ids = [int(t) for t in (self.root / "tasks").read_text().split()]
        except OSError:
            return
        into = self.group / "tasks"
        for tid in ids:
            if tid in own:
                continue
            stat = affinity.task_stat(tid)
            if stat is None or stat[0] & PF_NO_SETAFFINITY or (tid, stat[1]) in stay:
                continue
            try:
                into.write_text(str(tid))
            except OSError:
                continue  # exited, or bound to its CPU


class TrialPartition:
    """cgroup2: the trials' partition of the reserved CPUs, made by the first sweep of the rounds
    and made again by every sweep after."""

    method = "cgroup2 cpuset partition"

    def __init__(self, journal: Journal, root: Path, reserved: frozenset[int], named: str) -> None:
        self.journal = journal
        self.root = root
        self.reserved = reserved
        self.named = named
        self.group = root / unique_name("shootout-trials")
        self.made = False
        self.invalid: str | None = None  # why there is no partition

    def make(self) -> bool:
        return True  # when the rounds begin (sweep): what prepares the run has every CPU

    def _make(self) -> None:
        def make() -> None:
            self.group.mkdir()
            (self.group / "cpuset.cpus").write_text(format_cpulist(self.reserved))

        try:
            enable(self.journal, self.root, ["cpuset"])
            self.journal.change(f"cpuset partition {self.group} of {self.named}",
                                _release(self.group, self.root, "cgroup.procs"), make)
        except OSError as exc:
            self.invalid = f"refused: {exc.strerror or exc}"
            return
        self.made = True

    def wrap(self, fits: bool, pin: list[str]) -> list[str]:
        """A trial's `taskset` prefix behind a wrapper that enters the partition; for a trial that
        needs every CPU, the partition made an ordinary group first and the root group entered.
        Without a partition, the prefix as it is."""
        if not self.made or self.invalid:
            return pin
        if fits:
            return enter_argv([self.group / "cgroup.procs"], pin)
        return ["/bin/sh", "-c", 'echo member > "$1"; shift; exec "$@"', "shootout-cpuset-member",
                str(self.group / "cpuset.cpus.partition"), *enter_argv([self.root / "cgroup.procs"], pin)]

    def sweep(self, own: set[int], stay: set[tuple[int, int]], rounds: bool) -> None:
        """Once the rounds have begun: the group a partition (again), or why there is none."""
        if not rounds or self.invalid:
            return
        if not self.made:
            if self._parts_groups():
                self.invalid = "this run's configuration parts put trials in cgroups of their own"
                return
            self._make()
            if not self.made:
                return
        state = self.group / "cpuset.cpus.partition"
        try:
            if state.read_text().strip() != "root":
                state.write_text("root")
            now = state.read_text().strip()
        except OSError as exc:
            now = f"refused: {exc.strerror or exc}"
        if now != "root":  # "root invalid (...)": another group holds these CPUs exclusively
            self.invalid = now
            try:
                state.write_text("member")
            except OSError:
                pass

    def _parts_groups(self) -> bool:
        """Whether this run made cgroups of its own (a memory limit, a throttle): a trial moved into
        one would have the partition's CPUs taken from it (and its affinity reset)."""
        mine = f"-{os.getpid()}-"
        try:
            return any(d.is_dir() and mine in d.name and is_ours(d.name) for d in self.root.iterdir())
        except OSError:
            return False


def cpuset_for(journal: Journal, reserved: frozenset[int], rest: frozenset[int],
               named: Callable[[frozenset[int]], str]) -> RestCpuset | TrialPartition | None:
    """The reservation's cpuset group, made; None without a cpuset controller or when refused."""
    where = cpuset_hierarchy()
    if where is None:
        return None
    made = (RestCpuset(journal, where.mount, rest, named(rest)) if where.version == 1
            else TrialPartition(journal, where.mount, reserved, named(reserved)))
    return made if made.make() else None


def _release(group: Path, root: Path, members: str) -> Undo:
    return {"argv": ["sh", "-c", _RELEASE, "shootout-cpuset-release", str(group), str(root), members]}
