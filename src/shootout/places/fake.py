"""The fake kind: scripted output for the tests of plan, runner and statistics
not written as a spec. Option machine=NAME: a scripted remote machine.

A script is registered by name and selected with the configuration option `script`; it is
called as script(argv, config_name, call_index) and returns the command's stdout. Its
files are real, in a temporary directory; its facts are fixed.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.base.errors import TargetError
from shootout.base.model import Config
from shootout.conditions.monitor import Monitor
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import Background, ProcResult, Stdin
from shootout.places.kind import Kind
from shootout.places.local import LocalFiles
from shootout.system.journal import Journal

Script = Callable[[Sequence[str], str, int], str]
SCRIPTS: dict[str, Script] = {}
FACTS = TargetFacts(cores=2, memory_bytes=4 << 30, available_bytes=2 << 30, caches_kib={"l1": 32, "l2": 1024})


class FakeTarget(LocalFiles):
    def __init__(self, config: Config, journal: Journal | None = None) -> None:
        super().__init__(config, journal)
        self.calls = 0
        self.user_s = 0.0  # what its commands "used", as a remote's helper reports it
        self._monitor: Monitor | None = None
        self._dir: Path | None = None  # made when first asked for: a target only probed leaves none

    def close(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        super().close()

    def machine_monitor(self) -> Monitor | None:
        """Option stat_root=DIR: a scripted machine's own monitor, reading DIR/proc/stat (which
        the script writes), as a remote target's monitor reads that machine."""
        root = self.config.option("stat_root")
        if root and self._monitor is None:
            self._monitor = Monitor(interval_s=3600, root=Path(root), own_user_s=lambda: self.user_s)
        return self._monitor

    def workdir(self) -> str:
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="shootout-fake-"))
        self._dir.mkdir(exist_ok=True)
        return str(self._dir)

    def host_path(self, inside: str) -> Path:
        return Path(inside)

    def which(self, tool: str) -> str | None:
        return f"/fake/bin/{tool}"

    def probe(self) -> TargetFacts:
        return FACTS

    def facts(self, packages: Sequence[str] = ()) -> dict[str, Any]:
        # option emulated=yes: facts as an emulated VM's (no verdicts)
        return {"fake": True, **({"emulated": True} if self.config.option("emulated") == "yes" else {})}

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
            cwd: str | None = None, timeout: float = 3600.0, stdin: Stdin = None,
            wrap: Sequence[str] = ()) -> ProcResult:
        script = SCRIPTS[self.config.option("script") or "default"]
        self.calls += 1
        started = time.time()
        stdout = script(argv, self.config.name, self.calls)
        self.user_s += 0.001
        return ProcResult(tuple(argv), 0, stdout, "", time.time() - started, 0.001, 0.0, 1000, 1, started)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> Background:
        raise TargetError("the fake target runs no background processes", "use a host or chroot target")


class FakeKind(Kind):
    name = "fake"
    target = FakeTarget
    scripted = True

    def machine(self, config: Config) -> str | None:
        return "fake " + str(config.option("machine")) if config.option("machine") else None
