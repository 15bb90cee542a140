"""The schedule of a run across boots, and the checks before each block. Pure functions.

Kernels cannot alternate within a boot, so each boot measures one block of rounds under
one kernel. Blocks follow A B B A A B B A …: every kernel sits as often early as late in
the sequence, so a linear drift over hours (a warming room, an ageing SD card) adds the
same to both sides instead of masquerading as a kernel effect. Each boot is a run of its
own; the comparison is between runs (two or more boots per kernel).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shootout.base.errors import TargetError, UsageError
from shootout.boots.identity import BootIdentity, KernelWant


def block_schedule(configs: Sequence[str], blocks: int) -> list[str]:
    """Configuration of each block: the order forwards, then backwards, repeated (A B, B A, …)."""
    k = len(configs)
    if k < 2:
        raise UsageError("a run across boots needs two or more kernel configurations", "add another -c kernel:RELEASE")
    if len(set(configs)) != k:
        raise UsageError("a kernel configuration is named twice", "name each kernel once")
    if blocks < 2 * k or blocks % (2 * k):
        raise UsageError(f"--boots {blocks} does not fit {k} kernels",
                         f"use a multiple of {2 * k}: every kernel needs two or more boots, "
                         "balanced early and late (A B B A)")
    order: list[str] = []
    for cycle in range(blocks // k):
        order += list(configs) if cycle % 2 == 0 else list(reversed(configs))
    return order


@dataclass(frozen=True)
class Block:
    """A measured (or started) block: which configuration, under which boot, in which run."""

    index: int
    config: str
    boot: BootIdentity
    run_id: int
    complete: bool


def next_block(schedule: Sequence[str], blocks: Sequence[Block]) -> int | None:
    """Index of the first block without a complete run; None when all are measured."""
    done = {b.index for b in blocks if b.complete}
    return next((i for i in range(len(schedule)) if i not in done), None)


def check_boot(schedule: Sequence[str], blocks: Sequence[Block], index: int, want: KernelWant,
               boot: BootIdentity) -> None:
    """Refuse (one line) to measure block `index` under this boot when it is the wrong one."""
    config = schedule[index]
    where = f"block {index + 1} of {len(schedule)}"
    if want.root is not None and not boot.is_root(want.root):  # tryboot fell back to config.txt's root
        raise TargetError(f"this boot came up on root {boot.describe_root()}, but {where} is scheduled for {config} "
                          f"(root {want.root})", f"boot {want.boots()}, then run there: shootout run --resume last")
    if not want.matches(boot):
        raise TargetError(f"this boot runs kernel {boot.describe()}, but {where} is scheduled for {config} "
                          f"(kernel {want.describe()})", f"boot {want.describe()}, then run: shootout run --resume last")
    earlier = next((b for b in blocks if b.complete and b.boot.boot_id == boot.boot_id), None)
    if earlier is not None:
        raise TargetError(f"this boot ({boot.boot_id[:8]}) already measured block {earlier.index + 1}; "
                          f"{where} needs a fresh boot", f"reboot into {want.describe()}, then run: shootout run --resume last")


def matching_config(configs: Sequence[str], wants: dict[str, KernelWant], boot: BootIdentity) -> str:
    """The configuration whose kernel runs now: the schedule starts with it."""
    found = [c for c in configs if wants[c].matches(boot)]
    if not found:
        listed = ", ".join(f"{c} ({wants[c].describe()})" for c in configs)
        if any(w.root for w in wants.values()):
            raise TargetError(f"this boot (root {boot.describe_root()}, kernel {boot.release}) is none of the "
                              f"configurations: {listed}", "start the run on one of the roots it compares")
        raise TargetError(f"the running kernel {boot.describe()} is none of the configurations: {listed}",
                          "boot one of them first, or correct the release pattern (uname -r)")
    if len(found) > 1:
        raise UsageError(f"the running kernel {boot.release} matches {' and '.join(found)}",
                         "make the kernel patterns specific enough to tell the kernels apart")
    return found[0]


def next_step(schedule: Sequence[str], index: int | None, wants: dict[str, KernelWant], data: str | None = None) -> str:
    """What the user does after a block: which kernel (or whole install) to boot next, or that the run
    is done. data: the shared data directory a whole install's side must resume the run from."""
    if index is None:
        return f"all {len(schedule)} blocks are measured"
    config = schedule[index]
    same = index > 0 and schedule[index - 1] == config
    want = wants[config]
    again = "reboot (same root, a fresh boot)" if want.root else "reboot (same kernel, a fresh boot)"
    there = f" there with SHOOTOUT_HOME={data}" if want.root and data else ""
    return (f"next: block {index + 1} of {len(schedule)}, {config}: {again if same else 'boot ' + want.boots()}, "
            f"then run{there}: shootout run --resume last")
