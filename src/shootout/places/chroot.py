"""The chroot kind: a Debian userspace of shootout's on this machine (debian:RELEASE:ARCH, made
on first use, or userspace:NAME, an existing one of any name). Parsing only names the userspace;
shootout.configs.userspaces makes a missing one when a run is about to use it. Its target
runs every command chrooted into the userspace.

open() builds a private view of the userspace for this target alone, inside this process's
private mount namespace (system.mountns):
  userspaces/.sessions/               a tmpfs of this process: the sessions' mount points
      NAME-PID-N                      the root, bind-mounted (private)
          /proc /sys /dev /dev/pts    the kernel's, for the programs inside
          /dev/shm /tmp               fresh tmpfs; /tmp/shootout is the work directory
Each mount also goes through the journal (undo recorded first) and close() undoes them
newest first, so two targets of one userspace (or two shootout processes) never share or
pull each other's mounts. Every command runs in a new PID namespace whose init dies with
shootout, so a killed run leaves no process that would keep the mount namespace (and so
its mounts) alive. A foreign-arch userspace runs through qemu via binfmt_misc.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from shootout.base.errors import TargetError, UsageError, require_root
from shootout.base.model import Config, UserspaceRef
from shootout.execution.elf import tool_elf
from shootout.execution.process import Background, ProcResult, Stdin, run_process
from shootout.execution.tools import CLEAN_PATH, find_tool
from shootout.places.kind import Kind
from shootout.places.local import LocalFiles
from shootout.system.emulator import here as emulator_here
from shootout.system.journal import Journal
from shootout.system.mountns import private_mounts
from shootout.system.mounts import bind_private, mount_fs
from shootout.userspace import apt, registry
from shootout.userspace.arches import is_foreign
from shootout.userspace.binfmt import ensure_emulation
from shootout.userspace.create import ROOT_HINT, Progress, create_userspace
from shootout.userspace.rootfs import host_path_in_root, which_in_root

WORKDIR = "/tmp/shootout"
SCRATCH_POINT = "/tmp/shootout-scratch"
# pid 1 of the trial's PID namespace: runs the command as a child, so the command keeps the
# usual signal behaviour (init ignores signals it has no handler for) and its exit status.
_INIT = '"$@"; exit $?'

_sessions = itertools.count(1)
_sessions_lock = threading.Lock()
_sessions_mounted: set[tuple[str, Path]] = set()  # (namespace, path) of the tmpfs this process made


def sessions_dir() -> Path:
    """userspaces/.sessions, with a tmpfs of this mount namespace on it.

    The tmpfs lives exactly as long as the namespace (it is not in the journal: nothing can
    outlive it), so a killed run leaves not even an empty mount point on disk."""
    path = registry.userspaces_dir() / ".sessions"
    path.mkdir(exist_ok=True)
    namespace = private_mounts()
    with _sessions_lock:
        # Our own even when the namespace we copied has one (a parent shootout's): on top of it.
        if (namespace, path) not in _sessions_mounted:
            done = subprocess.run(["mount", "--make-private", "-t", "tmpfs", "-o", "mode=0755,size=1m",
                                   "shootout-sessions", str(path)], capture_output=True, text=True)
            if done.returncode != 0:
                raise TargetError(f"cannot mount a tmpfs at {path}: {done.stderr.strip() or done.returncode}",
                                  "run as root; see `findmnt` and dmesg")
            _sessions_mounted.add((namespace, path))
    return path


class ChrootTarget(LocalFiles):
    def __init__(self, config: Config, journal: Journal) -> None:
        super().__init__(config, journal)
        self.journal: Journal = journal
        self.userspace = self._userspace(config)
        self.emulated = under_qemu(self.userspace.arch)
        self._session: Path | None = None
        self._claim: IO[str] | None = None
        self._entries: list[int] = []
        self.close_errors: list[str] = []

    def _userspace(self, config: Config) -> registry.Userspace:
        if not config.userspace:
            raise UsageError(f"configuration {config.name} runs in a chroot but names no userspace",
                             "set userspace = NAME (see `shootout userspace list`)")
        return registry.get_ready(config.userspace)

    @property
    def root(self) -> Path:
        return self.userspace.root

    # -- lifecycle -------------------------------------------------------------------
    def open(self) -> None:
        if self._session is not None:
            return
        require_root(f"running userspace {self.userspace.name}", ROOT_HINT)
        session = sessions_dir() / f"{self.userspace.name}-{os.getpid()}-{next(_sessions)}"
        session.mkdir()
        self._claim = registry.claim(self.userspace.name)
        try:
            self._mount_all(session)
        except BaseException:
            self.close()
            raise

    def _mount_all(self, session: Path) -> None:
        j = self.journal
        with j.lock:  # creates in worker threads may share this journal
            if self.emulated:
                # Left registered until the journal is undone: other targets may rely on it.
                ensure_emulation(self.userspace.arch, j)
            self._entries.append(bind_private(j, self.userspace.root, session, f"userspace {self.userspace.name}"))
            self._session = session
            self._entries.append(mount_fs(j, "proc", session / "proc", "nosuid,nodev,noexec", "/proc"))
            self._entries.append(bind_private(j, Path("/sys"), session / "sys", "/sys"))
            self._entries.append(bind_private(j, Path("/dev"), session / "dev", "/dev"))
            self._entries.append(bind_private(j, Path("/dev/pts"), session / "dev/pts", "/dev/pts"))
            self._entries.append(mount_fs(j, "tmpfs", session / "dev/shm", "mode=1777,nosuid,nodev", "/dev/shm"))
            self._entries.append(mount_fs(j, "tmpfs", session / "tmp", "mode=1777,nosuid,nodev", "/tmp"))
        (session / WORKDIR.lstrip("/")).mkdir(mode=0o755)

    def close(self) -> None:
        with self.journal.lock:
            for entry in reversed(self._entries):
                self.close_errors += self.journal.undo_entry(entry)
        self._entries = []
        super().close()  # the scratch area, once nothing inside the session holds it
        if self._session is not None:
            try:
                self._session.rmdir()
            except OSError:
                pass  # still in use (a lazy unmount): it goes with the sessions tmpfs
        self._session = None
        if self._claim is not None:
            self._claim.close()
            self._claim = None

    # -- running ---------------------------------------------------------------------
    def _command(self, argv: Sequence[str], cwd: str | None) -> list[str]:
        self.open()
        assert self._session is not None
        # setpriv: the PID namespace's keeper dies with shootout; --kill-child: then its
        # init does, and with it every process of the trial. env -C: chroot(1) starts in /.
        return [find_tool("setpriv") or "setpriv", "--pdeathsig", "KILL", find_tool("unshare") or "unshare", "--pid", "--fork", "--kill-child",
                find_tool("chroot") or "chroot", str(self._session), "/bin/sh", "-c", _INIT, "shootout-init",
                "/usr/bin/env", "-C", cwd or WORKDIR, "--", *argv]

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
        return run_process([*wrap, *self._command(argv, cwd)], env=self.environment(env), cwd="/", timeout=timeout,
                           stdin=stdin, missing_package="util-linux")

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> Background:
        return Background(self._command(argv, cwd), env=self.environment(env), cwd="/",
                          missing_package="util-linux")

    # -- files -----------------------------------------------------------------------
    def workdir(self) -> str:
        self.open()
        return WORKDIR

    def cache_dir(self) -> str:
        return self.mkdir("/var/cache/shootout")

    def host_path(self, inside: str) -> Path:
        """Host path of a path as seen inside (symlinks resolved against the root)."""
        return host_path_in_root(self._session or self.root, inside)

    def attach_scratch(self, host_path: Path) -> str:
        self.open()
        assert self._session is not None
        point = self._session / SCRATCH_POINT.lstrip("/")
        point.mkdir()  # on the session's /tmp tmpfs: nothing to remove afterwards
        with self.journal.lock:
            self._entries.append(bind_private(self.journal, host_path, point, "the scratch directory"))
        return SCRATCH_POINT

    def which(self, tool: str) -> str | None:
        return which_in_root(self.root, tool, dict(self.config.env).get("PATH", CLEAN_PATH))

    def offers(self, packages: Sequence[str], components: Sequence[str] = ()) -> tuple[dict[str, list[str]], list[str]]:
        return apt.offers(self, packages, components)

    def lacks(self, packages: Sequence[str]) -> list[str]:
        return apt.lacking(self, packages)

    def provide(self, packages: Sequence[str], components: Sequence[str] = (),
                versions: Mapping[str, str] | None = None) -> list[str]:
        installed = apt.provide(self, packages, components, versions)
        if installed:
            self.userspace = registry.get_ready(self.userspace.name)
        return installed

    # -- description -----------------------------------------------------------------
    def facts(self, packages: Sequence[str] = ()) -> dict[str, Any]:
        found = super().facts(packages)
        meta = self.userspace.meta
        versions = self.userspace.packages
        found.update(
            userspace=self.userspace.name,
            release=meta.get("release"),
            arch=found.get("dpkg_arch") or self.userspace.arch,
            compiler=found.get("cc"),
            emulated=self.emulated,
            packages={p: versions[p] for p in packages if p in versions},
            libc6=versions.get("libc6"),
            shell_elf=tool_elf(self, "sh"),
        )
        return found


def under_qemu(arch_name: str) -> bool:
    """qemu-user runs a userspace of this arch here: the arch is foreign, or this whole machine
    is emulated (its figures are then the emulator's)."""
    return is_foreign(arch_name) or emulator_here() is not None


def ready(name: str) -> bool:
    return any(u.state == "ready" for u in registry.find(name))


def userspace_config_of(name: str, release: str, arch_name: str) -> Config:
    """The debian:RELEASE:ARCH configuration that runs in the userspace `name`."""
    return Config(name=f"debian:{release}:{arch_name}", target=ChrootKind.name, label=f"{arch_name} userspace",
                  userspace=name, userspace_ref=UserspaceRef(release, arch_name))


def debian_config(release: str, arch_name: str) -> Config:
    """debian:RELEASE:ARCH: the userspace debian-RELEASE-ARCH, named (a ready one must hold that
    release and architecture)."""
    from shootout.userspace.arches import arch

    arch(arch_name)
    name = registry.check_name(registry.default_name(release, arch_name))
    if ready(name):
        found = registry.get_ready(name)
        if (found.arch, found.release) != (arch_name, release):
            raise TargetError(f"userspace {name} holds {found.release} {found.arch}, not {release} {arch_name}",
                              f"shootout userspace remove {name}, or use userspace:{name}")
    return userspace_config_of(name, release, arch_name)


def named_userspace_config(name: str) -> Config:
    """userspace:NAME: an existing userspace of any name."""
    found = registry.get_ready(name)
    return Config(name=f"userspace:{name}", target=ChrootKind.name, label=f"{name} ({found.arch})", userspace=name,
                  userspace_ref=_recorded_ref(found))


def _recorded_ref(found: registry.Userspace) -> UserspaceRef | None:
    release, arch_name = found.meta.get("release"), found.meta.get("arch")  # as the registry records them
    return UserspaceRef(str(release), str(arch_name)) if release and arch_name else None


def userspace_ref_of(name: str) -> UserspaceRef | None:
    """The release and architecture of the userspace a configuration file names, decided once
    as the file is read: a ready one's as the registry records them; else, for a name as
    shootout gives them (debian-RELEASE-ARCH), those of the userspace a run then creates on
    first use, as debian:RELEASE:ARCH does; None for any other name."""
    if ready(registry.check_name(name)):
        return _recorded_ref(registry.get_ready(name))
    parts = registry.default_name_parts(name)
    return UserspaceRef(*parts) if parts else None


class ChrootKind(Kind):
    name = "chroot"
    forms = ("debian:RELEASE:ARCH", "userspace:NAME")
    hint = "use debian:RELEASE:ARCH (made on first use) or userspace:NAME (see: shootout userspace list)"
    target = ChrootTarget
    this_kernel = True
    userspace = True
    disk_scratch = True

    def parse(self, spec: str) -> Config | None:
        if spec.startswith("debian:") and spec.count(":") == 2:
            _, release, arch_name = spec.split(":")
            return debian_config(release, arch_name)
        if spec.startswith("debian:"):
            raise UsageError(f"unknown configuration {spec!r}", self.hint)
        if spec.startswith("userspace:"):
            return named_userspace_config(spec.removeprefix("userspace:"))
        return None

    def emulated_here(self, config: Config) -> bool:
        """A userspace of a foreign arch runs under qemu-user here (as ChrootTarget finds it)."""
        ref = config.userspace_ref
        return under_qemu(ref.arch) if ref is not None else emulator_here() is not None


def userspace_config(release: str, arch_name: str, *, progress: Progress | None = None,
                     packages: Sequence[str] = ()) -> Config:
    """debian:RELEASE:ARCH: the userspace debian-RELEASE-ARCH, created now when missing, with
    `packages` besides minbase."""
    config = debian_config(release, arch_name)
    if config.userspace and not ready(config.userspace):
        create_userspace(config.userspace, arch_name, release, progress=progress, packages=packages)
        return debian_config(release, arch_name)
    return config
