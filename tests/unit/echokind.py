"""A trivial place to run, to show that a new kind is one module (its Kind and its Target) plus one
line in shootout.places.

echo:DIR runs commands on this machine, in the existing directory DIR (its work directory).
The tests register it with the line that shootout/places/__init__.py would hold:
    register(EchoKind())
"""

from __future__ import annotations

from pathlib import Path

from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.places.host import HostTarget
from shootout.places.kind import Kind


class EchoTarget(HostTarget):
    """The host, working in the directory its spec names (made by whoever asked, not by it)."""

    def open(self) -> None:
        if not Path(self.workdir()).is_dir():
            raise UsageError(f"{self.config.name}: no directory {self.workdir()}", EchoKind.hint)

    def workdir(self) -> str:
        return self.config.option("dir") or ""


class EchoKind(Kind):
    name = "echo"
    forms = ("echo:DIR",)
    hint = "use echo:DIR, an existing directory to work in"
    target = EchoTarget
    this_kernel = True

    def parse(self, spec: str) -> Config | None:
        if not spec.startswith("echo:"):
            return None
        where = spec.removeprefix("echo:")
        if not where.startswith("/"):
            raise UsageError(f"bad echo configuration {spec!r}", self.hint)
        return Config(name=spec, target=self.name, label=f"echo in {where}", options=(("dir", where),))
