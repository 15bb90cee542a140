"""The host kind: this machine itself, natively or with a 32-bit compiler ABI (host+m32,
host+mx32), or requiring a running kernel (kernel:RELEASE[:MACHINE], shootout.boots), whose
trials may run in a userspace (kernel:RELEASE/debian:RELEASE:ARCH: then a chroot configuration),
or a boot of a whole install on another root (boot:ROOT[:IMAGE], boots/wholeroot.py).

The host userspace: commands run directly, the work directory on /dev/shm (tmpfs).

The work directory is a change like any other: journalled before it is made (removed by close(),
or by `shootout doctor` or the next run after a kill), since a killed run's leaves its inputs
(tens of MB) in RAM. Its name holds a digest of the journal's own (pid and start time), so it is
never a directory another process made.
"""

from __future__ import annotations

import hashlib
import itertools
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.base.paths import cache_dir
from shootout.execution.build import ABI_FLAGS
from shootout.execution.process import Background, ProcResult, Stdin, run_process
from shootout.execution.tools import CLEAN_PATH
from shootout.places.kind import Kind
from shootout.places.local import LocalFiles
from shootout.system.emulator import here as emulator_here
from shootout.system.journal import Journal

_workdirs = itertools.count(1)


def _tmpfs_root() -> Path:
    shm = Path("/dev/shm")
    return shm if shm.is_dir() else Path(tempfile.gettempdir())


class HostTarget(LocalFiles):
    def __init__(self, config: Config, journal: Journal | None = None) -> None:
        super().__init__(config, journal)
        self._workdir: Path | None = None
        self._workdir_entry: int | None = None

    def open(self) -> None:
        if self._workdir is None:
            journal = self._journal()
            # short: programs put sockets below it (Chromium's singleton), and a socket's path
            # may not exceed 107 bytes; unique to the journal, which records the whole path
            tag = hashlib.sha256(journal.path.stem.encode()).hexdigest()[:8]
            path = _tmpfs_root() / f"shootout-{tag}-{next(_workdirs)}"
            self._workdir_entry = journal.change(f"create the work directory {path}", {"rmtree": str(path)},
                                                 lambda: path.mkdir(mode=0o700))
            self._workdir = path

    def close(self) -> None:
        if self._workdir_entry is not None:
            self._journal().undo_entry(self._workdir_entry)
            self._workdir_entry = None
        self._workdir = None
        super().close()

    def facts(self, packages: Sequence[str] = ()) -> dict[str, Any]:
        found = super().facts(packages)
        if (why := emulator_here()) is not None:  # qemu-user: every figure is the emulator's
            found.update(emulated=True, emulator=why)
        return found

    def workdir(self) -> str:
        self.open()
        return str(self._workdir)

    def cache_dir(self) -> str:
        path = cache_dir() / "host"
        path.mkdir(parents=True, exist_ok=True)
        return str(path)

    def host_path(self, inside: str) -> Path:
        return Path(inside)

    def attach_scratch(self, host_path: Path) -> str:
        return str(host_path)

    def which(self, tool: str) -> str | None:
        return shutil.which(tool, path=dict(self.config.env).get("PATH", CLEAN_PATH))

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
        return run_process([*wrap, *argv], env=self.environment(env), cwd=cwd or self.workdir(), timeout=timeout,
                           stdin=stdin)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> Background:
        return Background(argv, env=self.environment(env), cwd=cwd or self.workdir())


HOST_LABELS = {None: "host", "m32": "host -m32", "mx32": "host -mx32"}


def x86_abi_problem(abi: str) -> tuple[str, str] | None:
    """(why, fix) when -m32/-mx32 are asked for on a machine that is not x86."""
    from shootout.userspace.arches import kernel_arch

    kernel = kernel_arch()
    if kernel in ("amd64", "i386"):
        return None
    side = "the armhf userspace (debian:RELEASE:armhf)" if kernel in ("arm64", "armhf") else "a 32-bit userspace"
    return (f"-{abi} is an x86 compiler option and this is an {kernel} machine, whose 32-bit side is {side}",
            f"use -c debian:bookworm:armhf, or leave -c out for the default {kernel} against armhf"
            if kernel in ("arm64", "armhf") else "use a debian:RELEASE:ARCH userspace")


class HostKind(Kind):
    name = "host"
    forms = ("host", "host+m32", "host+mx32", "kernel:RELEASE[:MACHINE][/USERSPACE]", "boot:ROOT[:IMAGE]")
    hint = ("use host, host+m32 or host+mx32, kernel:RELEASE[:MACHINE][/USERSPACE] for a running kernel, "
            "or boot:ROOT[:IMAGE] for a whole install booted on another root")
    target = HostTarget
    this_kernel = True
    host_abi = True
    disk_scratch = True

    def parse(self, spec: str) -> Config | None:
        base, _, abi = spec.partition("+")
        if base == "host" and (abi or None) in ABI_FLAGS:
            if abi and (problem := x86_abi_problem(abi)):
                raise UsageError(f"{spec}: {problem[0]}", problem[1])
            return Config(name=spec, target=self.name, label=HOST_LABELS[abi or None], abi=abi or None)
        if base == "host":
            raise UsageError(f"unknown configuration {spec!r}", self.hint)
        if spec.startswith("boot:"):
            from shootout.boots.wholeroot import boot_config

            return boot_config(spec)
        if spec.startswith("kernel:"):
            from shootout.boots.identity import (
                kernel_config,  # (the CLI imports kinds for its help: kept light)
            )

            userspace = spec.partition("/")[2]
            if not userspace:
                return kernel_config(spec)
            from shootout.places.chroot import ChrootKind

            if (inside := ChrootKind().parse(userspace)) is None:
                raise UsageError(f"{spec}: the userspace after / must be debian:RELEASE:ARCH or userspace:NAME",
                                 "e.g. kernel:kernel8.img/debian:bookworm:arm64")
            return kernel_config(spec, inside)
        return None
