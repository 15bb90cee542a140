"""What the configurations had in force on the machine, side by side: the point of the comparison.

Settings and scratch storage that differ between configurations were asked for by the user,
so they are shown as what is being compared, never as confounders. The values come from what
was read back before each trial (Trial.in_force) and from the scratch's recorded facts, not
from what the configuration asked for. Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from shootout.base.model import Run, Trial
from shootout.storage.scratchspec import PART as SCRATCH

# Facts of a scratch area that say what is being compared (the rest is in the facts table).
_SCRATCH_FACTS = ("filesystem", "mount_options", "device.model", "device.transport", "device.rotational")


def _flat(data: Any, prefix: str = "") -> dict[str, str]:
    if not isinstance(data, dict):
        return {prefix: str(data)}
    out: dict[str, str] = {}
    for key, value in data.items():
        out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def in_force_by_config(run: Run, trials: Sequence[Trial]) -> dict[str, dict[str, str]]:
    """Per configuration: setting -> the value read back most often before its trials."""
    counts: dict[str, dict[str, Counter[str]]] = {c.name: {} for c in run.configs}
    for t in trials:
        for key, value in _flat(t.in_force).items():
            counts.setdefault(t.spec.config, {}).setdefault(key, Counter())[value] += 1
    state = {name: {k: c.most_common(1)[0][0] for k, c in keys.items()} for name, keys in counts.items()}
    for config in run.configs:
        scratch = _flat(run.facts.side_value(config.name, SCRATCH, default={}), SCRATCH)
        for key in _SCRATCH_FACTS:
            if f"{SCRATCH}.{key}" in scratch:
                state[config.name].setdefault(f"{SCRATCH}.{key}", scratch[f"{SCRATCH}.{key}"])
    return state


def _short(key: str) -> str:
    """settings.vm.dirty_ratio -> vm.dirty_ratio; scratch.filesystem stays as it is."""
    return key.removeprefix("settings.")


def compared_notes(run: Run, trials: Sequence[Trial]) -> list[str]:
    """One line per setting that differs between configurations, e.g.
    'what is compared: vm.dirty_ratio = 20 (host), 50 (dirty50)'."""
    state = in_force_by_config(run, trials)
    keys = sorted({k for values in state.values() for k in values})
    notes = []
    for key in keys:
        values = [(c.display, state.get(c.name, {}).get(key, "\u2014")) for c in run.configs]
        if len({v for _, v in values}) > 1:
            notes.append(f"what is compared: {_short(key)} = " + ", ".join(f"{v} ({name})" for name, v in values))
    return notes
