"""The host userspace: commands run directly, scratch space on /dev/shm (tmpfs)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from shootout.model import Config
from shootout.paths import cache_dir
from shootout.targets.base import Target
from shootout.targets.process import ProcResult, run_process


def _tmpfs_root() -> str | None:
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() else None


class HostTarget(Target):
    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self._workdir: Path | None = None

    def open(self) -> None:
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="shootout-", dir=_tmpfs_root()))

    def close(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    @property
    def workdir(self) -> Path:
        self.open()
        assert self._workdir is not None
        return self._workdir

    @property
    def cachedir(self) -> Path:
        path = cache_dir() / "host"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = 3600.0,
    ) -> ProcResult:
        return run_process(argv, env=self.environment(env), cwd=cwd or str(self.workdir), timeout=timeout)
