"""TRIM of a scratch between rounds. An SSD (or SD card) that was told which blocks are free
writes faster than one that was not, so a run that lets that state drift from round to round
measures the drift. At the start of each round the scratch's filesystem is trimmed with
`fstrim -v` (util-linux) when its device takes discards, and what was trimmed is recorded.

fstrim only tells the device which blocks the filesystem does not use: nothing to put back, so
it has no journal entry. On a loop device it punches holes in the image file, which returns the
free space of the image to the disk under it, as an SSD's controller would (so that space is
no longer set aside for the scratch); the image goes with the scratch, through the journal.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.base.errors import ToolMissing
from shootout.execution.tools import host_tool
from shootout.storage.blockdev import discard_max_bytes, kernel_name

TIMEOUT_S = 600  # the first trim of a large disk never trimmed before can take minutes
_TRIMMED = re.compile(r"\(?(\d+) bytes\)? (?:were )?trimmed")


def parse_fstrim(output: str) -> int | None:
    """Bytes trimmed, from `fstrim -v`: "/mnt: 11.7 MiB (12318720 bytes) trimmed" (older
    util-linux: "/mnt: 12318720 bytes were trimmed"); None when it says neither."""
    found = _TRIMMED.search(output)
    return int(found.group(1)) if found else None


def fstrim(mount_point: str) -> int:
    """Trim the filesystem at mount_point; the bytes trimmed. RuntimeError with fstrim's message
    when it fails, ToolMissing when there is no fstrim."""
    try:
        done = subprocess.run([host_tool("fstrim", "util-linux"), "-v", mount_point], capture_output=True,
                              text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"fstrim {mount_point} took more than {TIMEOUT_S} s") from None
    trimmed = parse_fstrim(done.stdout) if done.returncode == 0 else None
    if trimmed is None:
        lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit status {done.returncode}"]
        raise RuntimeError(lines[-1])
    return trimmed


@dataclass
class ScratchTrim:
    """The trimming of one scratch over a run; facts() is what the run records."""

    mount_point: str | None
    device: str | None  # kernel name of the filesystem's block device (loop3, sda1, dm-0)
    discard: bool | None  # the device takes discards; None: no block device, or not known
    rounds: list[int] = field(default_factory=list)  # rounds at whose start it was trimmed
    trimmed: list[int] = field(default_factory=list)  # bytes trimmed in each of those rounds
    failed: list[int] = field(default_factory=list)  # rounds whose fstrim failed
    error: str | None = None  # the last failure's message

    @classmethod
    def of(cls, facts: dict[str, Any], sys_root: Path = Path("/")) -> ScratchTrim:
        """From a scratch area's facts (blockdev.storage_facts: mount point and source)."""
        source = str(facts.get("source") or "")
        name = kernel_name(source) if source.startswith("/dev/") else None
        most = discard_max_bytes(name, sys_root) if name else None
        return cls(facts.get("mount_point"), name, None if most is None else most > 0)

    def new_round(self, round_index: int) -> None:
        if not self.discard or self.mount_point is None:
            return  # a device that takes no discards is not trimmed (facts say so)
        try:
            trimmed = fstrim(self.mount_point)
        except (RuntimeError, ToolMissing) as exc:  # not fatal: the round runs untrimmed, and says so
            self.failed.append(round_index)
            self.error = str(exc)
            return
        self.rounds.append(round_index)
        self.trimmed.append(trimmed)

    def facts(self) -> dict[str, Any]:
        out: dict[str, Any] = {"device": self.device, "discard": self.discard}
        if self.discard:
            out.update(rounds=self.rounds, bytes_trimmed=self.trimmed)
        if self.failed:
            out.update(failed_rounds=self.failed, error=self.error)
        return out
