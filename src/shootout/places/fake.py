"""The fake kind: scripted output for the tests of plan, runner and statistics
(shootout.places.faketarget); not written as a spec. Option machine=NAME: a scripted remote machine."""

from __future__ import annotations

from shootout.places.kind import Kind
from shootout.base.model import Config


class FakeKind(Kind):
    name = "fake"
    target = "shootout.places.faketarget:FakeTarget"

    def machine(self, config: Config) -> str | None:
        return "fake " + str(config.option("machine")) if config.option("machine") else None
