"""Pieces shared by the importers: reading the file, numbers, trials of imported values."""

from __future__ import annotations

import math
from pathlib import Path

from shootout.base.errors import UsageError
from shootout.base.model import Trial, TrialSpec

IMPORTED_CATEGORY = "imported"
PLACEHOLDER_RUN_ID = 0  # the store assigns the real id when it saves the run


def read_bytes(path: Path, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file", f"give the path of a {what}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory", f"give the path of a {what}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def positive_number(text: object, where: str) -> float:
    """A measured value: finite and > 0 (performance of lower-is-better values is 1/value)."""
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UsageError(f"{where}: {text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{where}: {text!r} is not a positive finite number")
    return value


def imported_trial(
    workload: str,
    config: str,
    round_no: int,
    position: int,
    values: dict[str, float],
    started_at: float,
    wall_s: float = 0.0,
    exit_status: int = 0,
    error: str | None = None,
) -> Trial:
    """A trial from another tool: only what the file says; times it did not record are 0."""
    return Trial(
        spec=TrialSpec(round=round_no, position=position, workload=workload, config=config),
        values=values,
        wall_s=wall_s,
        user_s=0.0,
        sys_s=0.0,
        max_rss_kb=0,
        ctx_switches=0,
        exit_status=exit_status,
        stderr_tail="",
        started_at=started_at,
        monitor={},
        error=error,
    )


def unique(name: str, taken: set[str]) -> str:
    """`name`, or `name (2)`, `name (3)`... so two entries never share a name."""
    candidate, i = name, 2
    while candidate in taken:
        candidate, i = f"{name} ({i})", i + 1
    taken.add(candidate)
    return candidate
