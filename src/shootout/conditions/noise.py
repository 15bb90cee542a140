"""The machine's noise floor (the A/A spread of `run --aa`), stored per machine.

The store is keyed by noise_floor_key(machine facts), so later runs on the same machine
find the floor and show it beside their verdicts; another machine never sees it.
"""

from __future__ import annotations

from typing import Any, Protocol

from shootout.errors import UsageError


class SettingStore(Protocol):
    def put_setting(self, key: str, value: dict[str, Any]) -> None: ...

    def get_setting(self, key: str) -> dict[str, Any] | None: ...


def noise_floor_key(machine_facts: dict[str, Any]) -> str:
    """"noise-floor/<machine id>"; falls back to the hostname when the id is unknown."""
    ident = machine_facts.get("machine_id") or machine_facts.get("hostname")
    if not ident:
        raise UsageError("cannot tell which machine this is", "neither /etc/machine-id nor a hostname was found")
    return f"noise-floor/{ident}"


def save_noise_floor(store: SettingStore, machine_facts: dict[str, Any], floor: dict[str, Any]) -> str:
    """Store this machine's noise floor (e.g. {"run": id, "halfwidth": 0.004, ...}); returns the key."""
    key = noise_floor_key(machine_facts)
    store.put_setting(key, floor)
    return key


def load_noise_floor(store: SettingStore, machine_facts: dict[str, Any]) -> dict[str, Any] | None:
    return store.get_setting(noise_floor_key(machine_facts))
