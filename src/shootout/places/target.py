"""What every target offers: run commands, own its files, report its facts.

Paths given to and returned by a target are paths *as seen inside it* (strings): nothing
outside a target's own class knows where its files are on this machine, or whether they are
on this machine at all. The file operations here go through run(), so a target whose files
live elsewhere (a VM, a machine over SSH) needs only run() and spawn(); targets whose files
are on this filesystem override them with direct file access (places.local).
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import secrets
import tarfile
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shootout.base.errors import TargetError, UsageError
from shootout.base.model import Config
from shootout.execution import placefacts as probe
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import Background, ProcResult, Stdin
from shootout.execution.tools import CLEAN_PATH
from shootout.places.kind import scratch_holders
from shootout.storage.scratch import Scratch, ScratchArea
from shootout.system.journal import Journal

if TYPE_CHECKING:
    from shootout.conditions.monitor import Monitor

SCRATCH_KINDS = ("tmpfs", "disk")
_trees = itertools.count(1)

# Write stdin to $1 atomically (through $1.part), making the directory first.
_PUT = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1.part" && mv -f -- "$1.part" "$1"'
# Unpack a tar on stdin as the directory $1, replacing what was there.
_PUT_TREE = ('rm -rf -- "$1.part" && mkdir -p -- "$1.part" && tar -x -f - -C "$1.part" '
             '&& rm -rf -- "$1" && mv -- "$1.part" "$1"')
# $2 bytes of $1 from offset $3 (all when $2 is empty), base64 so binary survives text output;
# tail seeks in a regular file: the section table at the end of a binary costs no read of its code.
_READ = ('[ -f "$1" ] && [ -r "$1" ] || { echo "no readable file $1" >&2; exit 1; }\n'
         'if [ "$3" -gt 0 ]; then tail -c +$(($3 + 1)) -- "$1"; else cat -- "$1"; fi |\n'
         'if [ -n "$2" ]; then head -c "$2"; else cat; fi | base64 -w0')


def layout_padding() -> dict[str, str]:
    """A random-length dummy variable: spreads stack/heap layout effects over trials."""
    return {"SHOOTOUT_PAD": "x" * (secrets.randbelow(4096) + 1)}


class Target(ABC):
    """A place where commands run: the host, a chroot userspace, a remote machine, a fake."""

    def __init__(self, config: Config, journal: Journal | None = None) -> None:
        self.config = config
        self.journal = journal
        self._sizing: TargetFacts | None = None
        self._scratch_owner: Scratch | None = None  # the run's (use_scratch), or one of its own
        self._owns_scratch = False
        self._scratch_area: ScratchArea | None = None  # the owner's area, once attached here
        self._disk = ""  # the disk scratch as seen inside, once attached
        self._own_journal: Journal | None = None

    # -- lifecycle -------------------------------------------------------------
    def open(self) -> None:
        """Set up what commands need (mounts, work directory). Changes go through the journal."""

    def close(self) -> None:
        """Undo what open() and scratch() did (the run's scratch area is the run's to close)."""
        self._scratch_area = None
        if self._owns_scratch and self._scratch_owner is not None:
            self._scratch_owner.close()
            self._scratch_owner, self._owns_scratch = None, False
        if self._own_journal is not None:
            self._own_journal.undo()
            self._own_journal = None

    # -- running ---------------------------------------------------------------
    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """A clean environment: nothing of the caller's leaks into a trial."""
        env = {"PATH": CLEAN_PATH, "LC_ALL": "C", "HOME": "/root", "TMPDIR": self.workdir()}
        env.update(dict(self.config.env))
        env.update(extra or {})
        return env

    @abstractmethod
    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = 3600.0,
        stdin: Stdin = None,
        wrap: Sequence[str] = (),
    ) -> ProcResult:
        """Run argv in the target (cwd: its work directory) and return output and resource usage.

        wrap: a command prefix that runs on the target's machine *outside* its userspace and
        execs the rest (e.g. entering a cgroup a configuration part made for the trial), so
        that the whole trial, the target's own machinery included, runs inside it."""

    @abstractmethod
    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> Background:
        """Start argv in the background, in its own process group; stop() ends the group."""

    # -- places ------------------------------------------------------------------
    @abstractmethod
    def workdir(self) -> str:
        """This target's private work directory (tmpfs where possible), for this run only."""

    def cache_dir(self) -> str:
        """A directory that keeps what is expensive to make (built kernels); the work directory
        unless the target has somewhere persistent."""
        return f"{self.workdir()}/cache"

    def scratch(self, kind: str) -> str:
        """A directory for a workload's files: "tmpfs" (memory) or "disk" (the configuration's
        scratch storage, the device under test)."""
        if kind == "tmpfs":
            return self.mkdir(f"{self.workdir()}/scratch")
        if kind == "disk":
            if self._scratch_area is None:
                owner = self._scratch()
                area = owner.open()
                try:
                    self._disk = self.attach_scratch(area.host_path)
                except BaseException:
                    owner.close()
                    raise
                self._scratch_area = area
            return self._disk
        raise UsageError(f"unknown scratch kind {kind!r}", "use one of: " + ", ".join(SCRATCH_KINDS))

    def use_scratch(self, owner: Scratch) -> None:
        """Put the disk scratch in `owner`'s area: the run hands the target the owner it hands
        the scratch's parts too (trim, throttle, facts), and closes it after the target."""
        if self._scratch_area is not None:
            raise TargetError(f"{self.config.display} already uses a scratch area", "hand it its owner before first use")
        self._scratch_owner, self._owns_scratch = owner, False

    def _scratch(self) -> Scratch:
        """The owner of this target's scratch area: the run's, or (outside a run) its own."""
        if self._scratch_owner is None:
            self._scratch_owner, self._owns_scratch = Scratch(self.config, self._journal()), True
        return self._scratch_owner

    def attach_scratch(self, host_path: Path) -> str:
        """Make the host directory `host_path` visible inside the target; the path inside."""
        raise TargetError(f"{self.config.display} cannot use scratch storage on this machine",
                          f"run disk workloads on a target that holds one: {scratch_holders()}")

    def scratch_facts(self) -> dict[str, Any] | None:
        """What the disk scratch is (device, filesystem), once one was made."""
        return None if self._scratch_area is None else dict(self._scratch_area.facts)

    def _journal(self) -> Journal:
        if self.journal is not None:
            return self.journal
        if self._own_journal is None:
            self._own_journal = Journal()  # undone by close()
        return self._own_journal

    # -- files (through run(); local targets override) -----------------------------
    def _checked(self, argv: Sequence[str], what: str, stdin: Stdin = None, timeout: float = 600.0) -> ProcResult:
        return self.run(argv, stdin=stdin, timeout=timeout).check(
            TargetError, f"cannot {what} in {self.config.display}", "check the free space and permissions inside the target")

    def put(self, source: bytes | Path, dest: str) -> str:
        """Write bytes, or the content of a host file, to `dest` inside the target; returns dest."""
        self._checked(["sh", "-c", _PUT, "put", dest], f"write {dest}", stdin=source)
        return dest

    def put_tree(self, source: Path, dest: str) -> str:
        """Copy the host directory `source` to `dest` inside the target (replacing it); returns dest."""
        # Through the journal: a kill while it uploads must not leave the tree's tar in /tmp.
        journal = self._journal()
        packed = Path(tempfile.gettempdir()) / f"shootout-tree-{journal.path.stem}-{next(_trees)}.tar"
        entry = journal.change(f"create {packed}", {"remove": str(packed)}, lambda: packed.touch(0o600, exist_ok=False))
        try:
            with tarfile.open(packed, mode="w") as tar:
                tar.add(source, arcname=".")
            self._checked(["sh", "-c", _PUT_TREE, "put", dest], f"write {dest}", stdin=packed)
        finally:
            journal.undo_entry(entry)
        return dest

    def read(self, path: str, limit: int | None = None, offset: int = 0) -> bytes:
        """The content of a file inside the target (`limit` bytes from `offset`)."""
        result = self._checked(["sh", "-c", _READ, "read", path, "" if limit is None else str(limit), str(offset)],
                               f"read {path}")
        return base64.b64decode(result.stdout.strip())

    def exists(self, path: str) -> bool:
        return self.run(["test", "-e", path], timeout=60).exit_status == 0

    def mkdir(self, path: str) -> str:
        """Make a directory (and its parents) inside the target; returns path."""
        self._checked(["mkdir", "-p", "--", path], f"make directory {path}")
        return path

    def remove(self, path: str) -> None:
        """Delete a file or a directory tree inside the target."""
        self._checked(["rm", "-rf", "--", path], f"remove {path}")

    def which(self, tool: str) -> str | None:
        """Path of tool inside the target, or None."""
        result = self.run(["sh", "-c", 'command -v "$1"', "which", tool], timeout=60)
        found = result.stdout.strip()
        return found if result.exit_status == 0 and found.startswith("/") else None

    # -- software ------------------------------------------------------------------
    def expect_packages(self, packages: Sequence[str]) -> None:
        """Before open(): the Debian packages the run's workloads need, for a target that
        cannot install them once it runs (a VM's image is made with them)."""

    def offers(self, packages: Sequence[str], components: Sequence[str] = ()) -> tuple[dict[str, list[str]], list[str]]:
        """Where packages are installed (a userspace): per package the versions this target
        could end with, newest first, and warnings; the host offers none."""
        return {}, []

    def lacks(self, packages: Sequence[str]) -> list[str]:
        """The packages provide() would install here (a userspace's missing ones); the host: none."""
        return []

    def provide(self, packages: Sequence[str], components: Sequence[str] = (),
                versions: Mapping[str, str] | None = None) -> list[str]:
        """Install the Debian packages the target lacks, where it may (a userspace), at
        `versions` where given; returns what was installed. The host is never changed: a
        missing tool is an error naming its package."""
        return []

    # -- description -------------------------------------------------------------
    def probe(self) -> TargetFacts:
        """Cores, memory and cache sizes of the target, which default parameters are sized by.
        As a configuration's trials get them (under its memory limit): parts.sized()."""
        if self._sizing is None:
            found = probe.sizing(self)
            if self.config.abi is not None:  # -m32 and -mx32 kernels have 32-bit pointers
                found = dataclasses.replace(found, address_bits=32)
            self._sizing = found
        return self._sizing

    def facts(self, packages: Sequence[str] = ()) -> dict[str, Any]:
        """Facts about this target's userspace (distro, libc, compiler, openssl); the versions of
        `packages` where it knows them (a userspace: the caller names the workload catalogue's,
        as targets sit below the workloads)."""
        return probe.identity(self)

    def monitor_samples(self) -> list[dict[str, Any]]:
        """Samples of the conditions on the target's own machine (clock, temperature, steal),
        for a target on another machine; the run's monitor samples this one's."""
        return []

    def machine_monitor(self) -> Monitor | None:
        """The monitor of the other machine this target runs on, which judges whether a trial
        there was interrupted (conditions/repeats.py); None: this machine's run monitor does."""
        return None
