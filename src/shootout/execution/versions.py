"""What a program says it is: the one way shootout asks a tool for its version."""

from __future__ import annotations

import re
from collections.abc import Sequence

from shootout.base.errors import ShootoutError
from shootout.execution.place import Place


def output(place: Place, argv: Sequence[str], *, use_stderr: bool = False) -> str | None:
    """Stripped output of argv in the place, or None when it is absent or fails (use_stderr:
    a tool that prints to stderr and fails, as musl's ldd, still answers)."""
    try:
        result = place.run(list(argv), timeout=30)
    except (ShootoutError, OSError):
        return None
    if result.timed_out or (result.exit_status != 0 and not use_stderr):
        return None
    return result.stdout.strip() or (result.stderr.strip() if use_stderr else "") or None


def first_line(text: str | None) -> str | None:
    return text.splitlines()[0].strip() if text else None


def tool_version(place: Place, argv: Sequence[str], pattern: str = r"\S") -> str:
    """The first output line (stdout, then stderr) matching pattern: how a tool names its version."""
    result = place.run(list(argv), timeout=60)
    for line in (result.stdout + "\n" + result.stderr).splitlines():
        if re.search(pattern, line):
            return line.strip()
    return "unknown"
