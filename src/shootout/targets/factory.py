"""Make the target a configuration names."""

from __future__ import annotations

from shootout.errors import UsageError
from shootout.model import Config
from shootout.system.journal import Journal
from shootout.targets.base import Target


def make_target(config: Config, journal: Journal) -> Target:
    if config.target == "host":
        from shootout.targets.host import HostTarget

        return HostTarget(config, journal)
    if config.target == "chroot":
        from shootout.targets.chroot import ChrootTarget

        return ChrootTarget(config, journal)
    if config.target == "fake":
        from shootout.targets.fake import FakeTarget

        return FakeTarget(config, journal)
    raise UsageError(f"unknown target {config.target!r} in configuration {config.name}", "use host or chroot")
