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


def machine_of(config_facts: Mapping[str, Any], run_machine: Mapping[str, Any]) -> tuple[str, str]:
    """(identity, name) of the machine a configuration ran on; identity "" when unknown."""
    remote = config_facts.get("machine") if config_facts.get("remote") and "vm" not in config_facts else None
    facts = remote if isinstance(remote, dict) else run_machine
    host = facts.get("hostname") or "an unnamed machine"
    name = f"{host} (ssh {config_facts['remote']})" if isinstance(remote, dict) else host
    return str(facts.get("machine_id") or facts.get("hostname") or config_facts.get("remote") or ""), str(name)


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
