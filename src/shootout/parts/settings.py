"""Machine settings of a configuration: sysctls and sysfs files, set before each of its trials.

    [[config]]
    name = "dirty50"
    sysctl = { "vm.dirty_ratio" = "50", "vm.dirty_background_ratio" = "1" }
    sysfs  = { "/sys/module/zswap/parameters/max_pool_percent" = "15" }

Spec (Config.parts["settings"]): {"sysctl": {name: value}, "sysfs": {path: value}}, values as
strings. Read back before every trial and stored with it, by the name the user gave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.parts.part import Part, PartSession
from shootout.storage.scratch import Scratches
from shootout.system.journal import Journal, journal
from shootout.system.sysfiles import (
    SettingSwitch,
    SysFile,
    exclusive,
    sysctl_file,
    sysfs_file,
    write_problem,
)

_MAKERS = {"sysctl": sysctl_file, "sysfs": sysfs_file}


def _value(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UsageError(f"{where}: {value!r} is not a setting value",
                         'write the value as the kernel prints it, as a string: "1", "Y", "lz4"')
    return str(value)


def files(spec: Mapping[str, Mapping[str, str]]) -> dict[SysFile, str]:
    """The spec's files and values (the spec was checked when parsed)."""
    return {_MAKERS[kind](name, kind): value for kind, values in spec.items() for name, value in values.items()}


class SettingsPart(Part):
    name = "settings"
    keys = ("sysctl", "sysfs")

    def __init__(self, root: Path = Path("/")) -> None:
        self.root = root

    def parse(self, table: Mapping[str, Any], where: str) -> dict[str, dict[str, str]]:
        spec: dict[str, dict[str, str]] = {}
        for kind in self.keys:
            given = table.get(kind, {})
            if not isinstance(given, dict):
                raise UsageError(f"{where}: {kind} must be a table", f'{kind} = {{ "NAME" = "VALUE" }}')
            spec[kind] = {name: _value(v, f"{where}: {kind} {name}") for name, v in given.items()}
            for name in given:
                _MAKERS[kind](name, f"{where}: {kind}")
        if pair := exclusive(files(spec)):
            raise UsageError(f"{where}: {pair[0]} and {pair[1]} exclude each other (writing one zeroes the other)",
                             "set only one of them")
        return {kind: values for kind, values in spec.items() if values}

    def problem(self, spec: Mapping[str, Mapping[str, str]]) -> str | None:
        with journal() as j:
            for f, value in files(spec).items():
                if (found := write_problem(f, value, self.root, j)) is not None:
                    return found
        return None

    def open(self, configs: Sequence[Config], journal: Journal, scratches: Scratches) -> PartSession | None:
        wanted = {c.name: files(c.parts[self.name]) for c in configs if self.name in c.parts}
        return _Session(SettingSwitch(wanted, journal, self.root)) if wanted else None


class _Session(PartSession):
    def __init__(self, switch: SettingSwitch) -> None:
        self.switch = switch

    def apply(self, config: Config) -> None:
        self.switch.apply(config.name)

    def in_force(self, config: Config) -> dict[str, Any]:
        return self.switch.in_force()

    def close(self) -> list[str]:
        return self.switch.close()
