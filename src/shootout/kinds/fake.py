"""The fake kind: scripted output for the tests of plan, runner and statistics
(shootout.targets.fake); not written as a spec. Option machine=NAME: a scripted remote machine."""

from __future__ import annotations

from shootout.kinds.base import Kind
from shootout.model import Config


class FakeKind(Kind):
    name = "fake"
    target = "shootout.targets.fake:FakeTarget"

    def machine(self, config: Config) -> str | None:
        return "fake " + str(config.option("machine")) if config.option("machine") else None
