"""What running somewhere means: the part of a target that build, net, userspace and vm use.

Paths are as seen inside the place. Targets (shootout.places) implement this protocol;
modules below them type against it, so they never import a target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from shootout.base.model import Config
from shootout.execution.process import Background, ProcResult, Stdin


@runtime_checkable
class Place(Protocol):
    """Somewhere commands run and files live, under a configuration."""

    config: Config

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
            timeout: float = 3600.0, stdin: Stdin = None, wrap: Sequence[str] = ()) -> ProcResult: ...

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> Background: ...

    def which(self, tool: str) -> str | None: ...

    def workdir(self) -> str: ...

    def cache_dir(self) -> str: ...

    def put(self, source: bytes | Path, dest: str) -> str: ...

    def read(self, path: str, limit: int | None = None, offset: int = 0) -> bytes: ...

    def exists(self, path: str) -> bool: ...

    def mkdir(self, path: str) -> str: ...

    def remove(self, path: str) -> None: ...
