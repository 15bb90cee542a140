"""The machine's noise floor (the A/A spread of `run --aa`), stored per machine.

The store is keyed by noise_floor_key(machine facts), so later runs on the same machine
find the floor and show it beside their verdicts; another machine never sees it.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any, Protocol

from shootout.base.errors import StoreError, UsageError
from shootout.judge.confounders import is_emulated
from shootout.stats import Design, smallest_resolvable

if TYPE_CHECKING:
    from shootout.base.model import Run
    from shootout.judge.analysis import Analysis


class SettingStore(Protocol):
    def put_setting(self, key: str, value: dict[str, Any]) -> None: ...

    def get_setting(self, key: str) -> dict[str, Any] | None: ...

    def get_run(self, ref: str | int) -> Run: ...


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
    """This machine's floor; None when there is none, or when an emulated A/A stored it (versions
    before aa_floor kept those out did), since native runs must not be held to an emulator's spread."""
    floor = store.get_setting(noise_floor_key(machine_facts))
    if floor is None or not isinstance(floor.get("run"), int):
        return floor
    try:
        run = store.get_run(floor["run"])
    except StoreError:  # its A/A run was deleted: the floor stands as stored
        return floor
    return None if _emulated(run) else floor


def aa_floor(analysis: Analysis) -> dict[str, float] | None:
    """The A/A noise floor of this machine, from an A/A analysis (a configuration against itself).

    sd: the median over headline workloads of the robust spread (1.4826 MAD) of the paired
    log-ratios d_r, the per-round noise a comparison on this machine has to beat.
    halfwidth: the smallest difference one comparison could resolve with that noise in a full
    run of the A/A run's maximum rounds (its interval's half-width then): differences smaller
    than this cannot be told from noise. rounds: that maximum.
    None for an emulated A/A (qemu-user, TCG): its spread is the emulator's, which never gets a
    verdict, and native runs on this machine must not be held to it.
    """
    if emulated_aa(analysis):
        return None
    spreads = [1.4826 * statistics.median(abs(d - statistics.median(c.log_ratios.values()))
                                          for d in c.log_ratios.values())
               for c in analysis.comparisons if c.headline and len(c.log_ratios) >= 2]
    if not spreads or not analysis.runs:
        return None
    s = analysis.runs[0].settings
    sd = statistics.median(spreads)
    design = Design(s.confidence, 1, (s.min_rounds, s.max_rounds))
    return {"sd": sd, "rounds": s.max_rounds, "halfwidth": smallest_resolvable(sd, s.max_rounds, design)}


def emulated_aa(analysis: Analysis) -> bool:
    """Whether a side of the A/A ran under an emulator."""
    return any(_emulated(run) for run in analysis.runs)


def _emulated(run: Run) -> bool:
    return any(is_emulated(run.facts.side(c.name)) for c in run.configs)


def resolvable_threshold(floor: dict[str, Any], max_rounds: int, design: Design) -> float | None:
    """The smallest threshold a run of `max_rounds` rounds with `design` can settle on this
    machine; None when the stored floor does not say. Floors stored before the noise (sd) was
    kept give their half-width as it is."""
    if isinstance(floor.get("sd"), (int, float)):
        return smallest_resolvable(float(floor["sd"]), max_rounds, design)
    halfwidth = floor.get("halfwidth")
    return float(halfwidth) if isinstance(halfwidth, (int, float)) else None
