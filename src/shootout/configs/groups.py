"""Groups of machines: one configuration measured on several machines of one kind.

Two instances of one cloud type, or two Raspberry Pis of one model, differ by several percent
(other tenants, another host, another chip's lottery). One machine per side then stands for
its whole kind, and a paired interval from its trials says nothing of that. A `[[config]]`
with `machines = ["ssh:a1-1", "ssh:a1-2", ...]` is a group: it runs as one member
configuration per machine (named GROUP@MACHINE), measured in parallel (lanes.py), and its
comparison with another group takes the machines as the units, as the cross-run method
takes runs (stats/runs.py): every machine contributes its mean log performance, and the
interval is Welch's t on those means (pooled t when one side has one machine), so it
includes how much machines of one kind differ. With one machine per side the trials of the
two machines are compared as independent samples, labelled ONE_MACHINE wherever shown.

A run of groups measures --min-rounds rounds: with machines as the units, more rounds
narrow each machine's mean but not the machine-to-machine spread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from shootout.base.errors import UsageError
from shootout.base.model import Config, Run
from shootout.places import LOCAL, machine_key


class Runs(Protocol):
    """A target, as far as machine_arch needs it (no import of targets: configs imports this module)."""

    def run(self, argv: Sequence[str], *, timeout: float = ...) -> Any: ...

GROUP = "group"  # option of a member configuration: its group's name
MACHINES = "machines"  # option of a group before it is expanded: its machines, one a line
MIXED = "mixed_architectures"  # option "yes": the user says the group's machines differ in architecture
ONE_MACHINE = "one machine per side: machine-to-machine variation not included"
MACHINES_NOTE = ("machines as units, unpaired: every machine of a group contributes its mean, and the interval "
                 "(Welch's t on those means) includes machine-to-machine variation; more machines per group, not "
                 "more rounds, narrow it")
ONE_MACHINE_NOTE = ONE_MACHINE + " (the two machines' trials compared unpaired)"
MACHINES_RULE = (
    "Groups of machines: each machine of a group contributes its mean log performance over its rounds, and two "
    "groups are compared by Welch's t on those means (pooled t when one side has one machine), so the interval "
    "includes how much machines of one kind differ; with one machine per side the two machines' trials are "
    "compared as independent samples (Hodges\u2013Lehmann shift, Mann\u2013Whitney interval): " + ONE_MACHINE + ".")


def group_table(name: str, machines: object, mixed: object, where: str) -> tuple[tuple[str, str], ...]:
    """The options that make a [[config]] a group, checked: (machines, mixed_architectures)."""
    if not isinstance(machines, list) or not machines or not all(isinstance(m, str) and m for m in machines):
        raise UsageError(f"{where}: machines must be a list of machines", 'e.g. machines = ["ssh:a1-1", "ssh:a1-2"]')
    if len(set(machines)) != len(machines):
        raise UsageError(f"{where}: group {name} names a machine twice", "name each machine once")
    if not isinstance(mixed, bool):
        raise UsageError(f"{where}: {MIXED} must be true or false", f"{MIXED} = true")
    return ((MACHINES, "\n".join(machines)),) + (((MIXED, "yes"),) if mixed else ())


def expand(config: Config, parse: Callable[[str], Config]) -> list[Config]:
    """A group's member configurations, one per machine (a configuration that is no group: itself).
    parse turns a machine's spec (ssh:HOST, or a [[config]] name) into its configuration."""
    machines = (config.option(MACHINES) or "").split("\n")
    if machines == [""]:
        return [config]
    own = tuple((k, v) for k, v in config.options if k not in (MACHINES, MIXED))
    mixed = ((MIXED, "yes"),) if config.option(MIXED) else ()
    members = []
    for spec in machines:
        base = parse(spec)
        if machine_key(base) == LOCAL:
            raise UsageError(f"group {config.name}: {spec} runs on this machine, not a machine of its own",
                             "a group's machines are remote: ssh:[USER@]HOST[:PORT] or a [[config]] of one")
        members.append(dataclasses.replace(
            base, name=f"{config.name}@{spec}", label=f"{config.display} on {base.display}",
            cflags=(*base.cflags, *config.cflags), env=(*base.env, *config.env),
            options=(*base.options, *own, *mixed, (GROUP, config.name)), parts={**base.parts, **config.parts}))
    return members


def group_of(config: Config) -> str | None:
    return config.option(GROUP)


def grouped(run: Run) -> bool:
    return any(group_of(c) for c in run.configs)


def sides(configs: Sequence[Config]) -> dict[str, list[Config]]:
    """Group name (or a lone configuration's name) -> its configurations, in the run's order."""
    out: dict[str, list[Config]] = {}
    for config in configs:
        out.setdefault(group_of(config) or config.name, []).append(config)
    return out


def side_names(configs: Sequence[Config]) -> list[str]:
    """What a price or a comparison names: groups by their name, other configurations by theirs."""
    return list(sides(configs))


def check_architectures(configs: Sequence[Config], arch_of: Callable[[Config], str]) -> None:
    """Refuse a group whose machines differ in architecture unless it says mixed_architectures."""
    for name, members in sides(configs).items():
        if len(members) < 2 or not group_of(members[0]) or members[0].option(MIXED):
            continue
        found = {m.name: arch_of(m) for m in members}
        if len(set(found.values())) > 1:
            listed = ", ".join(f"{m.removeprefix(name + '@')} is {a}" for m, a in found.items())
            raise UsageError(f"group {name} mixes architectures ({listed}); a group is machines of one kind",
                             f"split it into one group per architecture, or say {MIXED} = true in its [[config]]")


def machine_arch(target: Runs) -> str:
    """The kernel's machine name (uname -m) where the target runs, for check_architectures."""
    done = target.run(["uname", "-m"], timeout=60)
    return done.stdout.strip() if done.exit_status == 0 else "unknown"
