"""The programs shootout runs on this machine itself, found one way: on the clean PATH."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass

from shootout.base.errors import ToolMissing

# Every command a target runs gets this PATH (nothing of the caller's leaks into a trial), and
# shootout's own machine tools (mkfs, swapon, ip, mmdebstrap) are looked up on it.
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class Tool:
    command: str
    package: str  # Debian package that provides it


def find_tool(command: str, *, also: Sequence[str] = ()) -> str | None:
    """Path of a program on this machine, or None: on the caller's PATH, then on the clean PATH
    (a root shell's PATH may lack the sbin directories), then in the directories `also`."""
    dirs = [*([os.environ["PATH"]] if os.environ.get("PATH") else []), CLEAN_PATH, *also]
    return shutil.which(command, path=":".join(dirs))


def host_tool(command: str, package: str) -> str:
    """Path of a machine tool shootout runs itself; ToolMissing names the package."""
    found = find_tool(command)
    if found is None:
        raise ToolMissing(command, package)
    return found
