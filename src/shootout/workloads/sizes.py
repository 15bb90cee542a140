"""Sizes that fit every side: the facts default parameters are sized by, taken over all sides.

Calibration chooses the work once and every configuration does the same work, so a size
derived from machine facts (a buffer, a file, a tab) must fit the smallest side: a 32-bit
userspace's address space, a VM's memory, a remote machine's free memory. `smallest_side`
folds the sides' facts into one TargetFacts whose limits are the tightest of any side; the
budgets below turn those limits into what one trial may map or write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar


class Limits(Protocol):
    """What sizes read of a TargetFacts (execution/placefacts.py), named here so that this module
    imports nothing of the targets'."""

    memory_bytes: int | None
    available_bytes: int | None
    memory_limit: int | None
    address_bits: int | None
    __dataclass_fields__: dict[str, Any]


F = TypeVar("F", bound=Limits)

# What all the mappings of one 32-bit process may take together. Its address space is 4 GiB
# under a 64-bit kernel but 3 GiB under a 32-bit kernel's usual 3G/1G split (2 GiB under a
# 2G/2G one), and libraries, stack and the heap break it up: 2 GiB leaves a 1 GiB margin.
ADDRESS_SPACE_32_MIB = 2048
# A trial's buffers take at most this share of the smallest side's available memory: mlock()ed
# or written files on tmpfs cannot be reclaimed, and the rest of the machine keeps working.
MEMORY_SHARE = 2


def _least(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def smallest_side(sides: Sequence[F]) -> F:  # a run has at least one side
    """One TargetFacts for the whole run: the baseline's (first side's) cores and caches, which
    shape the work, with every limit (memory, memory limit, pointer width) the tightest of any side."""
    return replace(
        sides[0],
        memory_bytes=_least([s.memory_bytes for s in sides]),
        available_bytes=_least([s.available_bytes for s in sides]),
        memory_limit=_least([s.memory_limit for s in sides]),
        address_bits=_least([s.address_bits for s in sides]),
    )


def memory_budget_mib(facts: Limits) -> int | None:
    """MiB a trial's buffers or tmpfs files may take on the smallest side (None: unknown)."""
    return None if facts.available_bytes is None else (facts.available_bytes >> 20) // MEMORY_SHARE


def process_budget_mib(facts: Limits) -> int | None:
    """MiB all the mappings of one trial process may take: the memory budget, and on a 32-bit
    side the address space as well (None: no known limit)."""
    limits = [memory_budget_mib(facts), ADDRESS_SPACE_32_MIB if facts.address_bits == 32 else None]
    return _least(limits)


def limited_by(facts: Limits) -> str:
    """What sets process_budget_mib, in words (for a fact beside a size that was cut)."""
    memory = memory_budget_mib(facts)
    if facts.address_bits == 32 and (memory is None or ADDRESS_SPACE_32_MIB <= memory):
        return "a 32-bit side's address space"
    return "the smallest side's available memory"
