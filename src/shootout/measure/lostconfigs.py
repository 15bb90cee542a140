"""Configurations a comparison lost before measuring: where a run keeps them, how they are said.

A configuration the user asked for that cannot run here (a setting this kernel lacks, no KVM
for a VM, ...) is dropped before the run starts (preparation.usable); when two or more sides are
left the run goes on, and keeps what it lost and why (Run.lost), so that `show` and
the report say so above the table and in the summary instead of only in the run's first lines.
"""

from __future__ import annotations

from collections.abc import Mapping


def lost_lines(lost: Mapping[str, str], lead: str = "not compared") -> list[str]:
    """One line per lost configuration (Run.lost: name -> why), for above the table."""
    return [f"{lead}: {name}, which cannot run here: {why}" for name, why in lost.items()]


def lost_sentence(lost: Mapping[str, str]) -> str | None:
    """The summary's sentence about them, or None."""
    names = list(lost)
    if not names:
        return None
    if len(names) == 1:
        return f"{names[0]} was asked for but not measured: it cannot run here (see above)."
    return f"{', '.join(names[:-1])} and {names[-1]} were asked for but not measured: they cannot run here (see above)."
