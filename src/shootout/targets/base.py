"""What every target offers: run a command in its userspace, map paths, report facts."""

from __future__ import annotations

import secrets
import shutil
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.model import Config
from shootout.targets.process import ProcResult

CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def layout_padding() -> dict[str, str]:
    """A random-length dummy variable: spreads stack/heap layout effects over trials."""
    return {"SHOOTOUT_PAD": "x" * (secrets.randbelow(4096) + 1)}


class Target(ABC):
    """A place where commands run: the host, a chroot userspace, a remote machine, a fake."""

    def __init__(self, config: Config) -> None:
        self.config = config

    # -- lifecycle -------------------------------------------------------------
    def open(self) -> None:
        """Set up what trials need (mounts, work directory). Changes go through the journal."""

    def close(self) -> None:
        """Undo what open() did."""

    # -- running ---------------------------------------------------------------
    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """A clean environment: nothing of the caller's leaks into a trial."""
        env = {"PATH": CLEAN_PATH, "LC_ALL": "C", "HOME": "/root", "TMPDIR": self.inside(self.workdir)}
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
    ) -> ProcResult:
        """Run argv (paths as seen inside the target) and return output and resource usage."""

    # -- files -----------------------------------------------------------------
    @property
    @abstractmethod
    def workdir(self) -> Path:
        """Host path of this target's private scratch directory (tmpfs where possible)."""

    @property
    def cachedir(self) -> Path:
        """Host path of a persistent cache visible inside the target (built kernels, inputs)."""
        return self.workdir

    def inside(self, host_path: Path) -> str:
        """The path a command inside the target uses for host_path."""
        return str(host_path)

    def which(self, tool: str) -> str | None:
        """Path of tool inside the target, or None."""
        return shutil.which(tool, path=CLEAN_PATH)

    # -- description -------------------------------------------------------------
    def facts(self) -> dict[str, Any]:
        """Facts about this target's userspace (distro, libc, compiler, openssl)."""
        from shootout.facts import target_facts

        return target_facts(self)
