"""A named experiment on sides the user names (`shootout run --experiment rpi64 -c A -c B`).

The experiment's workloads, sizes and threshold then run on the user's sides. Where the
experiment's own [[config]] tables carry more than a target (a network part with veth offloads
and a drop rule, a scratch filesystem behind a throttled link, swap and a memory limit, sysctls,
build flags), a side the user names instead would run without it: a different experiment under
the same name. That is refused in one line naming what would be lost; naming the experiment's
own sides (rpi-iozone's `-c NATIVE-sd -c COMPANION-sd`) keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.configs.specs import FileSettings
from shootout.experiments.sizing import DEFAULT_SIZE
from shootout.experiments.writeup import Experiment

# what a [[config]] table may set besides its target and parts, that a side named instead lacks
_FIELDS = ("env", "cflags", "abi", "cc", "options")


def carried(config: Config, table: dict[str, Any]) -> list[str]:
    """What a configuration carries beyond its target: its parts by name, and the fields its table sets."""
    return sorted(config.parts) + [key for key in _FIELDS if table.get(key)]


def check_user_sides(named: Experiment, tables: FileSettings, specs: Sequence[str], size: str = DEFAULT_SIZE) -> None:
    """Refuse sides the user names where the experiment's own sides carry parts or options they
    would lose (tables: the experiment's, loaded at that size)."""
    if named.machines or not specs:  # its sides are the user's by design (cloud-openssl)
        return
    raw = {t.get("name", ""): t for t in named.tables(size).get("config", [])}
    own = {name: what for name, c in tables.configs.items() if (what := carried(c, raw.get(name, {})))}
    foreign = [s for s in specs if s not in tables.configs]
    if not own or not foreign:
        return
    lost: dict[str, list[str]] = {}
    for name, what in own.items():
        for part in what:
            lost.setdefault(part, []).append(name)
    said = "; ".join(f"{part} ({', '.join(names)})" for part, names in sorted(lost.items()))
    sides = " ".join(f"-c {name}" for name in tables.run.get("configs", list(tables.configs)))
    raise UsageError(
        f"experiment {named.name}'s own sides carry what {', '.join(foreign)} would lose: {said}",
        f"name its own sides ({sides}), or write it as a file to edit: "
        f"shootout experiments show {named.name} --toml > run.toml; shootout run --file run.toml")
