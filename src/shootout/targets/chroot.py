"""A debootstrap userspace as a target: every trial runs chrooted into it.

open() builds a private view of the userspace for this target alone:
  userspaces/.sessions/NAME-PID-N      the root, bind-mounted (private)
      /proc /sys /dev /dev/pts         the kernel's, for the programs inside
      /dev/shm                         a fresh tmpfs
      /tmp/shootout-work-PID-N         a private tmpfs: the work directory
Each mount goes through the journal (undo recorded first) and close() undoes them newest
first, so two targets of one userspace (or two shootout processes) never share or pull
each other's mounts. A foreign-arch userspace runs through qemu via binfmt_misc.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.errors import TargetError, UsageError
from shootout.model import Config
from shootout.system.journal import Journal
from shootout.targets.base import CLEAN_PATH, Target
from shootout.targets.process import ProcResult, run_process
from shootout.userspace import registry
from shootout.userspace.arches import is_foreign
from shootout.userspace.binfmt import ensure_emulation
from shootout.userspace.create import JOURNAL_LOCK, require_root
from shootout.userspace.mounts import bind_private, make_dir, mount_fs
from shootout.userspace.packages import WORKLOAD_PACKAGES
from shootout.userspace.rootfs import resolve_in_root, which_in_root

_sessions = itertools.count(1)


def sessions_dir() -> Path:
    path = registry.userspaces_dir() / ".sessions"
    path.mkdir(exist_ok=True)
    return path


class ChrootTarget(Target):
    def __init__(self, config: Config, journal: Journal) -> None:
        super().__init__(config)
        if not config.userspace:
            raise UsageError(f"configuration {config.name} runs in a chroot but names no userspace",
                             "set userspace = NAME (see `shootout userspace list`)")
        self.journal = journal
        self.userspace = registry.get_ready(config.userspace)
        self.emulated = is_foreign(self.userspace.arch)
        self._session: Path | None = None
        self._workdir: Path | None = None
        self._entries: list[int] = []
        self.close_errors: list[str] = []

    @property
    def root(self) -> Path:
        return self.userspace.root

    # -- lifecycle -------------------------------------------------------------------
    def open(self) -> None:
        if self._session is not None:
            return
        require_root(f"running userspace {self.userspace.name}")
        tag = f"{os.getpid()}-{next(_sessions)}"
        session = sessions_dir() / f"{self.userspace.name}-{tag}"
        work = session / "tmp" / f"shootout-work-{tag}"
        try:
            self._mount_all(session, work)
        except BaseException:
            self.close()
            raise

    def _mount_all(self, session: Path, work: Path) -> None:
        j = self.journal
        with JOURNAL_LOCK:  # creates in worker threads may share this journal
            if self.emulated:
                # Left registered until the journal is undone: other targets may rely on it.
                ensure_emulation(self.userspace.arch, j)
            self._entries.append(make_dir(j, session))
            self._entries.append(bind_private(j, self.root, session, f"userspace {self.userspace.name}"))
            self._session = session
            self._entries.append(mount_fs(j, "proc", session / "proc", "nosuid,nodev,noexec", "/proc"))
            self._entries.append(bind_private(j, Path("/sys"), session / "sys", "/sys"))
            self._entries.append(bind_private(j, Path("/dev"), session / "dev", "/dev"))
            self._entries.append(bind_private(j, Path("/dev/pts"), session / "dev/pts", "/dev/pts"))
            self._entries.append(mount_fs(j, "tmpfs", session / "dev/shm", "mode=1777,nosuid,nodev", "/dev/shm"))
            self._entries.append(make_dir(j, work))
            self._entries.append(mount_fs(j, "tmpfs", work, "mode=0755,nosuid,nodev", "a work directory"))
            self._workdir = work

    def close(self) -> None:
        with JOURNAL_LOCK:
            for entry in reversed(self._entries):
                self.close_errors += self.journal.undo_entry(entry)
        self._entries = []
        self._session = None
        self._workdir = None

    # -- running ---------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = 3600.0,
    ) -> ProcResult:
        self.open()
        assert self._session is not None
        chroot = shutil.which("chroot", path=CLEAN_PATH) or "chroot"
        inner_cwd = cwd or self.inside(self.workdir)
        # env -C: chroot(1) always starts in /, and the trial must start in its work directory.
        command = [chroot, str(self._session), "/usr/bin/env", "-C", inner_cwd, "--", *argv]
        return run_process(command, env=self.environment(env), cwd="/", timeout=timeout,
                           missing_package="coreutils")

    # -- files -----------------------------------------------------------------------
    @property
    def workdir(self) -> Path:
        self.open()
        assert self._workdir is not None
        return self._workdir

    @property
    def cachedir(self) -> Path:
        path = self.root / "var/cache/shootout"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def inside(self, host_path: Path) -> str:
        path = Path(host_path)
        for base in (self._session, self.root):
            if base is None:
                continue
            try:
                return "/" + str(path.relative_to(base)).removeprefix(".")
            except ValueError:
                continue
        raise TargetError(f"{host_path} is not inside userspace {self.userspace.name}",
                          "put files for a chroot trial under its workdir or cachedir")

    def host_path(self, inside: str) -> Path:
        """Host path of a path as seen inside (symlinks resolved against the root)."""
        base = self._session or self.root
        return resolve_in_root(base, inside) or base / inside.lstrip("/")

    def which(self, tool: str) -> str | None:
        return which_in_root(self.root, tool, dict(self.config.env).get("PATH", CLEAN_PATH))

    # -- description -----------------------------------------------------------------
    def facts(self) -> dict[str, Any]:
        from shootout.facts import target_facts
        from shootout.userspace.abi import tool_elf

        found: dict[str, Any] = target_facts(self)
        meta = self.userspace.meta
        versions = self.userspace.packages
        found.update(
            userspace=self.userspace.name,
            release=meta.get("release"),
            arch=found.get("dpkg_arch") or self.userspace.arch,
            compiler=found.get("cc"),
            emulated=self.emulated,
            packages={p: versions[p] for p in WORKLOAD_PACKAGES if p in versions},
            libc6=versions.get("libc6"),
            shell_elf=tool_elf(self, "sh"),
        )
        return found
