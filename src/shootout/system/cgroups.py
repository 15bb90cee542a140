"""cgroups for a run's workload: created through the journal, processes placed by a wrapper,
removed (their stragglers killed) when the run or trial is over, also by `shootout doctor`.

A machine may hold cgroup v1 hierarchies (one per controller or set of controllers), a
cgroup2 hierarchy, or both (hybrid: this CI machine has v1 memory and blkio, and a cgroup2
hierarchy without controllers). A `Cgroup` therefore is one directory per hierarchy it
needs: the hierarchy that holds each controller asked for, plus the cgroup2 hierarchy when
there is one, because cgroup2 tracks pressure (PSI) per cgroup and can kill a whole cgroup
even where it controls nothing. Controllers are named as cgroup2 names them ("memory",
"io"); the v1 name is looked up ("io" is "blkio" there).

Groups are made directly below the hierarchy's root: cgroup2 forbids controllers in a group
that holds processes, and the root is exempt from that rule.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.execution.fsread import unescape
from shootout.system.journal import Journal, Undo

V1_NAMES = {"io": "blkio"}  # cgroup2 controller name -> its cgroup v1 name

# Lift the memory limits (a process killed at its limit must still fault its pages back in
# to exit; with its swap full it would reclaim forever), kill what is left in each group
# (only processes this run put there), then remove the directories, waiting up to 5 s for
# dying processes to leave. Runs again safely after a kill.
_REMOVE = r"""
for d; do
  [ -d "$d" ] || continue
  for f in memory.memsw.limit_in_bytes memory.limit_in_bytes; do [ -e "$d/$f" ] && echo -1 > "$d/$f"; done
  for f in memory.max memory.swap.max; do [ -e "$d/$f" ] && echo max > "$d/$f"; done
  if [ -e "$d/cgroup.kill" ]; then echo 1 > "$d/cgroup.kill"
  else for p in $(cat "$d/cgroup.procs"); do kill -KILL "$p" 2>/dev/null; done; fi
done
for d; do
  i=0
  while [ -d "$d" ] && ! rmdir "$d" 2>/dev/null; do
    i=$((i+1)); [ "$i" -gt 100 ] && { echo "cannot remove $d: still in use" >&2; exit 1; }
    sleep 0.05
  done
done
"""

# Writes its own pid into each cgroup.procs file, then becomes the command (same pid, so
# wait4 still measures it). Exit status 125 when a write fails, as env(1) does for its own errors.
_ENTER = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"'


@dataclass(frozen=True)
class Hierarchy:
    mount: Path
    version: int  # 1 or 2
    controllers: frozenset[str]  # v2: cgroup.controllers of the root; v1: the mount's controllers


def hierarchies(mountinfo: Path = Path("/proc/self/mountinfo")) -> list[Hierarchy]:
    """The cgroup hierarchies mounted in this mount namespace (the first mount of each)."""
    found: dict[str, Hierarchy] = {}
    for line in mountinfo.read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _source, *options = right.split()
        point = Path(unescape(left.split()[4]))
        if fstype == "cgroup2":
            text = (point / "cgroup.controllers").read_text() if (point / "cgroup.controllers").exists() else ""
            found.setdefault("cgroup2", Hierarchy(point, 2, frozenset(text.split())))
        elif fstype == "cgroup":
            names = frozenset(o for o in (options[0].split(",") if options else [])
                              if o not in ("rw", "ro") and "=" not in o)
            if names:
                found.setdefault(",".join(sorted(names)), Hierarchy(point, 1, names))
    return list(found.values())


@dataclass(frozen=True)
class Layout:
    """Which hierarchy holds each controller on this machine."""

    hierarchies: tuple[Hierarchy, ...]

    @property
    def unified(self) -> Hierarchy | None:
        return next((h for h in self.hierarchies if h.version == 2), None)

    def holding(self, controller: str) -> Hierarchy | None:
        """cgroup2 when it offers the controller, else the v1 hierarchy that has it."""
        if self.unified is not None and controller in self.unified.controllers:
            return self.unified
        v1 = V1_NAMES.get(controller, controller)
        return next((h for h in self.hierarchies if h.version == 1 and v1 in h.controllers), None)

    def describe(self) -> dict[str, str]:
        """controller -> 'v1 /sys/fs/cgroup/memory' etc., recorded as a fact of the run."""
        out = {}
        for h in self.hierarchies:
            for c in sorted(h.controllers) or ["(none)"]:
                out.setdefault(c if h.version == 1 else f"{c} (cgroup2)", f"v{h.version} {h.mount}")
        return out


def layout(mountinfo: Path = Path("/proc/self/mountinfo")) -> Layout:
    return Layout(tuple(hierarchies(mountinfo)))


def remove_undo(dirs: Iterable[Path]) -> Undo:
    return {"argv": ["sh", "-c", _REMOVE, "shootout-cgroup-remove", *map(str, dirs)]}


@dataclass(frozen=True)
class Cgroup:
    """One cgroup: its directory in each hierarchy it spans, keyed by controller ("" = cgroup2)."""

    name: str
    dirs: dict[str, Path]
    entry: int  # journal entry whose undo removes it

    def path(self, controller: str) -> Path:
        return self.dirs[controller]

    def has(self, controller: str) -> bool:
        return controller in self.dirs

    def read(self, controller: str, file: str) -> str:
        return (self.dirs[controller] / file).read_text()

    def write(self, controller: str, file: str, value: str) -> None:
        """Set a limit; a value the kernel refuses is a TargetError naming file and value."""
        path = self.dirs[controller] / file
        try:
            path.write_text(value)
        except OSError as exc:
            raise TargetError(f"cgroup {path} refused {value!r}: {exc.strerror or exc}",
                              "see the cgroup documentation for the values this kernel accepts") from None

    def enter_argv(self, argv: Sequence[str]) -> list[str]:
        """argv run by a wrapper that first moves itself into this cgroup (every hierarchy).

        For targets whose processes start on this machine: the wrapper goes in front of
        the target's own command (before chroot), where /sys/fs/cgroup is visible."""
        return enter_argv([d / "cgroup.procs" for d in sorted(set(self.dirs.values()))], argv)


def enter_argv(procs: Sequence[Path], argv: Sequence[str]) -> list[str]:
    """argv run by a wrapper that first writes its own pid into each cgroup.procs file."""
    return ["/bin/sh", "-c", _ENTER, "shootout-cgroup-enter", str(len(procs)), *map(str, procs), *argv]


def enable(journal: Journal, parent: Path, controllers: Sequence[str]) -> None:
    """cgroup2: controllers must be enabled in the parent's subtree_control before a child uses them."""
    control = parent / "cgroup.subtree_control"
    enabled = set(control.read_text().split())
    for c in controllers:
        if c in enabled:
            continue
        undo = {"argv": ["sh", "-c", 'echo "-$2" > "$1"', "shootout-cgroup-disable", str(control), c],
                "tolerate_failure": True}  # another user of the hierarchy may rely on it by then
        journal.change(f"enable the {c} controller in {control}", undo, lambda c=c: control.write_text(f"+{c}"))


def create(journal: Journal, where: Layout, name: str, controllers: Sequence[str],
           parent: Cgroup | None = None) -> Cgroup:
    """A new cgroup `name` (below `parent`, or at the roots) spanning the controllers asked for.

    TargetError when a controller is not available on this machine or the kernel refuses."""
    dirs: dict[str, Path] = {}
    for c in controllers:
        h = where.holding(c)
        if h is None:
            raise TargetError(f"no cgroup hierarchy here offers the {c} controller",
                              "mount it (cgroup v1) or enable it in cgroup2; see /proc/cgroups")
        base = parent.dirs[c] if parent else h.mount
        if h.version == 2:
            enable(journal, base, [c])
        dirs[c] = base / name
    if where.unified is not None:
        dirs[""] = (parent.dirs[""] if parent and "" in parent.dirs else where.unified.mount) / name
    unique = sorted(set(dirs.values()))

    def make() -> None:
        for d in unique:
            d.mkdir()

    try:
        entry = journal.change(f"create cgroup {name}", remove_undo(unique), make)
    except OSError as exc:
        raise TargetError(f"cannot create cgroup {name}: {exc.strerror or exc}", "run as root") from None
    return Cgroup(name, dirs, entry)


def remove(journal: Journal, group: Cgroup) -> list[str]:
    """Kill what is left in the group and remove its directories; errors as text."""
    return journal.undo_entry(group.entry)


def unique_name(prefix: str) -> str:
    """A name no other process (or other shootout run) uses: pid plus a random tag."""
    return f"{prefix}-{os.getpid()}-{os.urandom(3).hex()}"


# What unique_name makes of a "shootout..." prefix, anywhere in a cgroup path.
_OURS = re.compile(r"(?:^|/)shootout(?:-[a-z]+)*-\d+-[0-9a-f]{6}(?:/|$)")


def is_ours(path: str) -> bool:
    """Whether a cgroup path (as the kernel log names it, e.g. /shootout-812-a1b2c3/trial-4)
    lies in a group some shootout run made."""
    return bool(_OURS.search(path))
