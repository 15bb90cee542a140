"""Scratch storage: where disk-touching workloads of a configuration put their files.

Minimal version: a fresh directory under /var/tmp for the run, removed through the change
journal (so also by `shootout doctor` after a kill). open_scratch() is called lazily, by the
first scratch("disk") of a target, so CPU-only runs never make one.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.errors import TargetError
from shootout.model import Config
from shootout.system.journal import Journal

DEFAULT_BASE = Path("/var/tmp")


@dataclass
class ScratchArea:
    host_path: Path  # a directory on the host (in shootout's mount namespace), fresh for this run
    facts: dict[str, Any]
    journal: Journal
    entries: list[int] = field(default_factory=list)

    def close(self) -> list[str]:
        """Remove what was made; returns what could not be undone."""
        errors: list[str] = []
        for entry in reversed(self.entries):
            errors += self.journal.undo_entry(entry)
        self.entries = []
        return errors


def open_scratch(config: Config, journal: Journal) -> ScratchArea:
    """A fresh scratch directory for `config`, removed with the journal."""
    path = DEFAULT_BASE / f"shootout-scratch-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        entry = journal.change(f"create scratch directory {path} for {config.name}", {"rmtree": str(path)},
                               lambda: path.mkdir(mode=0o755))
    except OSError as exc:
        raise TargetError(f"cannot create a scratch directory in {DEFAULT_BASE}: {exc.strerror}",
                          "check that it exists and is writable") from None
    return ScratchArea(path, {"filesystem": None, "directory": str(path)}, journal, [entry])
