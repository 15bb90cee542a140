"""Errors that reach the user: a one-line message plus a hint saying what to do.

The CLI prints `error: <message> (<hint>)` and exits with `exit_code`.
"""

from __future__ import annotations

import os


class ShootoutError(Exception):
    exit_code = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(ShootoutError):
    """Bad input on the command line or in a configuration file."""

    exit_code = 2


class ToolMissing(ShootoutError):
    """A program a workload or target needs is not installed where it must run."""

    exit_code = 3

    def __init__(self, tool: str, package: str, where: str = "this machine", components: tuple[str, ...] = ()) -> None:
        hint = f"install the Debian package {package}: apt-get install {package}"
        if components:  # not in main: say how to enable it, or where shootout does that itself
            hint = (f"{package} is in Debian's {' and '.join(components)} component: add it to Components in "
                    f"/etc/apt/sources.list.d/debian.sources, apt-get update, then {hint.split(': ', 1)[1]}; "
                    "or run in a shootout userspace (e.g. -c debian:bookworm:amd64), which gets it on first use")
        super().__init__(f"{tool} is not installed on {where}", hint)
        self.tool = tool
        self.package = package


class TargetError(ShootoutError):
    """A configuration cannot be used here (ABI unsupported, userspace missing, ...)."""

    exit_code = 4


class WorkloadError(ShootoutError):
    """A workload's command failed or printed no usable number."""

    exit_code = 5


class StoreError(ShootoutError):
    """The results database cannot be opened, written or does not hold what was asked."""

    exit_code = 6


def require_root(what: str, hint: str) -> None:
    """Refuse, in one line, what only root may do: "<what> needs root (<hint>)"."""
    if os.geteuid() != 0:
        raise TargetError(f"{what} needs root", hint)
