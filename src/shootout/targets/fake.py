"""A target with scripted output, for end-to-end tests of plan, runner and statistics.

A script is registered by name and selected with the configuration option `script`; it is
called as script(argv, config_name, call_index) and returns the trial's stdout.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.model import Config
from shootout.targets.base import Target
from shootout.targets.process import ProcResult

Script = Callable[[Sequence[str], str, int], str]
SCRIPTS: dict[str, Script] = {}


class FakeTarget(Target):
    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.calls = 0
        self._dir = Path(tempfile.mkdtemp(prefix="shootout-fake-"))

    @property
    def workdir(self) -> Path:
        return self._dir

    def which(self, tool: str) -> str | None:
        return f"/fake/bin/{tool}"

    def facts(self) -> dict[str, Any]:
        return {"fake": True}

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
            cwd: str | None = None, timeout: float = 3600.0) -> ProcResult:
        script = SCRIPTS[self.config.option("script") or "default"]
        self.calls += 1
        started = time.time()
        stdout = script(argv, self.config.name, self.calls)
        return ProcResult(tuple(argv), 0, stdout, "", time.time() - started, 0.001, 0.0, 1000, 1, started)
