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


def _program_headers(data: bytes) -> tuple[Any, list[Any]]:
    """The ELF file over `data` and its program headers, read one by one: pyelftools' own segment
    objects want the section table, which lies at the end of the file, past what was read."""
    from elftools.common.utils import struct_parse
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(data))
    return elf, [struct_parse(elf.structs.Elf_Phdr, elf.stream, elf["e_phoff"] + i * elf["e_phentsize"])
                 for i in range(elf["e_phnum"])]


def dynamic_end(head: bytes) -> int | None:
    """Where a dynamically linked binary's dynamic section ends in the file, from its first bytes;
    None for a static binary or bytes that are not ELF."""
    from elftools.common.exceptions import ELFError

    try:
        _, headers = _program_headers(head)
    except (ELFError, ValueError, EOFError):
        return None
    return next((int(h["p_offset"] + h["p_filesz"]) for h in headers if h["p_type"] == "PT_DYNAMIC"), None)


def linked_libraries(data: bytes) -> list[str] | None:
    """The libraries a binary links (its DT_NEEDED entries, in order) from its bytes up to the end
    of its dynamic section; [] for a static binary, None where the bytes do not tell."""
    from elftools.common.exceptions import ELFError
    from elftools.common.utils import struct_parse

    try:
        elf, headers = _program_headers(data)
        dynamic = next((h for h in headers if h["p_type"] == "PT_DYNAMIC"), None)
        if dynamic is None:
            return []
        size, tags = elf.structs.Elf_Dyn.sizeof(), []
        while len(tags) * size < dynamic["p_filesz"]:
            tags.append(struct_parse(elf.structs.Elf_Dyn, elf.stream, dynamic["p_offset"] + len(tags) * size))
            if tags[-1]["d_tag"] == "DT_NULL":
                break
        strtab = next(t["d_ptr"] for t in tags if t["d_tag"] == "DT_STRTAB")
        # the string table's address, mapped to the file by the loadable segment that holds it
        base = next(h["p_offset"] + strtab - h["p_vaddr"] for h in headers
                    if h["p_type"] == "PT_LOAD" and h["p_vaddr"] <= strtab < h["p_vaddr"] + h["p_filesz"])
        names = [data[base + t["d_val"]:data.index(b"\0", base + t["d_val"])] for t in tags if t["d_tag"] == "DT_NEEDED"]
        return [name.decode(errors="replace") for name in names]
    except (ELFError, ValueError, EOFError, StopIteration):  # cut before its string table, or not ELF
        return None


# How much of a binary is read for its linked libraries: a browser's dynamic section lies past
# 100 MB of code, and its libraries are not what a code path's caveat is about.
NEEDED_BYTES = 8 * 1024 * 1024


def _identity_in(target: Place, path: str) -> dict[str, Any]:
    """ELF identity of a file in the target, with the libraries it links where its dynamic section
    lies within NEEDED_BYTES ("needed": whether a program can reach a library's code path)."""
    try:
        head = target.read(path, HEAD_BYTES)
        identity = elf_identity_of(head)
        end = dynamic_end(head) if identity else None
        if end is None:
            return {**identity, "needed": []} if identity and identity["interpreter"] is None else identity
        if end <= NEEDED_BYTES:
            needed = linked_libraries(head if end <= len(head) else target.read(path, end))
            if needed is not None:
                identity["needed"] = needed
        return identity
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
