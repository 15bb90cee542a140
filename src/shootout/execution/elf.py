"""Identity of a binary from its ELF header: the ABI that actually ran, not the label's."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, BinaryIO

from shootout.base.errors import TargetError
from shootout.execution.place import Place

# e_machine names from pyelftools -> the short names users know
_MACHINES = {"EM_386": "x86", "EM_X86_64": "x86-64", "EM_ARM": "arm", "EM_AARCH64": "aarch64"}
# Enough of a binary to hold its ELF header, program headers and interpreter path.
HEAD_BYTES = 64 * 1024


def _identity(stream: BinaryIO) -> dict[str, Any]:
    # pyelftools costs 0.15 s to import: loaded when a binary is first read, not with every place
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(stream)
    interp = None
    try:
        for seg in elf.iter_segments():  # PT_INTERP precedes the segments that need more of the file
            if seg["p_type"] == "PT_INTERP":
                interp = seg.get_interp_name()
                break
    except ELFError:
        pass  # a static binary read only in part: it has no interpreter anyway
    machine = elf["e_machine"]
    return {
        "elf_class": elf.elfclass,
        "machine": _MACHINES.get(machine, machine),
        # x32 is ELFCLASS32 on x86-64: the machine tells it apart from i386
        "interpreter": interp,
    }


def elf_identity_of(data: bytes) -> dict[str, Any]:
    """{'elf_class': 32|64, 'machine': ..., 'interpreter': ...} from the first bytes of a
    binary (HEAD_BYTES are enough); {} if they are not ELF (a script)."""
    from elftools.common.exceptions import ELFError

    try:
        return _identity(io.BytesIO(data))
    except (ELFError, ValueError, EOFError):  # not ELF, or cut before what was needed
        return {}


def elf_identity(path: Path) -> dict[str, Any]:
    """elf_identity_of the file at path on this machine; {} if it is not ELF."""
    try:
        with open(path, "rb") as fh:
            return elf_identity_of(fh.read(HEAD_BYTES))
    except OSError:
        return {}


def _identity_in(target: Place, path: str) -> dict[str, Any]:
    try:
        return elf_identity_of(target.read(path, HEAD_BYTES))
    except TargetError:
        return {}


def tool_elf(target: Place, tool: str) -> dict[str, Any]:
    """ELF identity of `tool` as the target resolves it (read through the target); a script
    reports its interpreter's."""
    inside = target.which(tool)
    if inside is None:
        return {}
    identity = _identity_in(target, inside)
    if identity:
        return {**identity, "path": inside}
    try:
        first = target.read(inside, 256).split(b"\n", 1)[0]
    except TargetError:
        return {}
    if not first.startswith(b"#!"):
        return {}
    interpreter = first[2:].decode(errors="replace").split()
    if not interpreter:
        return {}
    identity = _identity_in(target, interpreter[0])
    return {**identity, "path": interpreter[0], "script": inside} if identity else {}
