"""The host userspace: commands run directly, the work directory on /dev/shm (tmpfs).

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

from shootout.execution.process import Background, ProcResult, Stdin, run_process
from shootout.execution.tools import CLEAN_PATH
from shootout.base.model import Config
from shootout.base.paths import cache_dir
from shootout.system.emulator import here as emulator_here
from shootout.system.journal import Journal
from shootout.places.local import LocalFiles

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
