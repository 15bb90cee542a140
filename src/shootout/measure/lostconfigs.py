"""Configurations a comparison lost before measuring: where a run keeps them, how they are said.

A configuration the user asked for that cannot run here (a setting this kernel lacks, no KVM
for a VM, ...) is dropped before the run starts (preparation.usable); when two or more sides are
left the run goes on, and keeps what it lost and why in its machine facts, so that `show` and
the report say so above the table and in the summary instead of only in the run's first lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LOST = "lost_configurations"  # key in Run.facts["machine"]: {configuration name: why it did not run}


def lost_configurations(facts: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The configurations a run lost before measuring, with why (none for runs stored before)."""
    return dict(facts.get("machine", {}).get(LOST, {}))


def lost_lines(facts: Mapping[str, Mapping[str, Any]], lead: str = "not compared") -> list[str]:
    """One line per lost configuration, for above the table."""
    return [f"{lead}: {name}, which cannot run here: {why}" for name, why in lost_configurations(facts).items()]


def lost_sentence(facts: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The summary's sentence about them, or None."""
    names = list(lost_configurations(facts))
    if not names:
        return None
    if len(names) == 1:
        return f"{names[0]} was asked for but not measured: it cannot run here (see above)."
    return f"{', '.join(names[:-1])} and {names[-1]} were asked for but not measured: they cannot run here (see above)."
