"""Which machine each configuration ran on, and the note every output gives when they differ.

A remote (ssh) configuration runs on the remote machine, whose own facts carry its identity
(machine id, hostname). Everything else runs on the machine of its run: the host, chroots,
and VMs too (guests on this machine's hardware). Two sides on different machines differ in
more than what the user named, so show, report and compare say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

MACHINES_NOTE = "differences include the machines"


def machine_of(side: Mapping[str, Any], run_machine: Mapping[str, Any]) -> tuple[str, str]:
    """(identity, name) of the machine a configuration ran on; identity "" when unknown.
    side: the configuration's facts as the runner keeps them, its target's under "target"."""
    target = side.get("target")
    target = target if isinstance(target, Mapping) else {}
    remote = target.get("machine") if target.get("remote") and "vm" not in target else None
    facts = remote if isinstance(remote, Mapping) else run_machine
    host = facts.get("hostname") or "an unnamed machine"
    name = f"{host} (ssh {target['remote']})" if isinstance(remote, Mapping) else host
    return str(facts.get("machine_id") or facts.get("hostname") or target.get("remote") or ""), str(name)


def machines_note(sides: Iterable[tuple[str, Mapping[str, Any], Mapping[str, Any]]]) -> str | None:
    """sides: (configuration shown, its facts, its run's machine facts). A note naming where
    each ran when two known machines differ, else None (unknown identities claim nothing)."""
    where: dict[str, list[str]] = {}
    identities = set()
    for shown, config_facts, run_machine in sides:
        identity, name = machine_of(config_facts, run_machine)
        if identity:
            identities.add(identity)
            names = where.setdefault(shown, [])
            if name not in names:
                names.append(name)
    if len(identities) < 2:
        return None
    listed = "; ".join(f"{shown} ran on {' and '.join(names)}" for shown, names in where.items())
    return f"{MACHINES_NOTE}: {listed}"
