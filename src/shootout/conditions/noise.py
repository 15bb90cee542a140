"""The machine's noise floor (the A/A spread of `run --aa`), stored per machine.

The store is keyed by noise_floor_key(machine facts), so later runs on the same machine
find the floor and show it beside their verdicts; another machine never sees it.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any, Protocol

from shootout.errors import UsageError

if TYPE_CHECKING:
    from shootout.analysis import Analysis


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


def aa_floor(analysis: Analysis) -> float | None:
    """The A/A noise floor: the median, over workloads, of how far the A/A interval reaches
    from 1 (a configuration against itself): differences smaller than this are not resolvable."""
    reach = sorted(max(c.estimate.high - 1.0, 1.0 - c.estimate.low)
                   for c in analysis.comparisons if c.headline and c.estimate is not None)
    return statistics.median(reach) if reach else None
