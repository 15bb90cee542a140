"""Identity of a binary from its ELF header: the ABI that actually ran, not the label's."""

from __future__ import annotations

import io
from collections.abc import Callable
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


# e_flags of a 32-bit ARM EABI binary: which float ABI its calls use (ELF for the Arm Architecture, 5.2)
EF_ARM_ABI_FLOAT_SOFT, EF_ARM_ABI_FLOAT_HARD = 0x200, 0x400
# .ARM.attributes tags said in the facts, by pyelftools' names -> the facts' keys
ARM_TAGS = {"TAG_CPU_NAME": "cpu_name", "TAG_CPU_ARCH": "cpu_arch", "TAG_CPU_ARCH_PROFILE": "profile",
            "TAG_FP_ARCH": "fp_arch", "TAG_ADVANCED_SIMD_ARCH": "simd_arch", "TAG_THUMB_ISA_USE": "thumb",
            "TAG_ABI_VFP_ARGS": "vfp_args"}
BLOCK = 64 * 1024  # what one read of a file in a place fetches, as pyelftools seeks through it


class _Pieces(io.RawIOBase):
    """A file read in pieces as pyelftools seeks through it (`fetch(offset, length)`): a binary's
    section table and attributes lie at its end, past its code, which is never read."""

    def __init__(self, fetch: Callable[[int, int], bytes], head: bytes, size: int) -> None:
        self._fetch, self._blocks, self._size, self._pos = fetch, {0: head[:BLOCK]}, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        self._pos = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence] + pos
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer: Any) -> int:
        block, within = divmod(self._pos, BLOCK)
        if block not in self._blocks:
            self._blocks[block] = self._fetch(block * BLOCK, BLOCK)
        piece = self._blocks[block][within:within + len(buffer)]
        buffer[:len(piece)] = piece
        self._pos += len(piece)
        return len(piece)


def arm_build(fetch: Callable[[int, int], bytes], head: bytes) -> dict[str, Any]:
    """What a 32-bit ARM binary says it was built for: its float ABI (e_flags) and its
    .ARM.attributes (the architecture, FP unit, NEON and Thumb the compiler and linker assumed),
    in readelf -A's words; only the float ABI where the binary has no section table left."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.descriptions import describe_attr_tag_arm
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import ARMAttributesSection

    elf = ELFFile(io.BytesIO(head))
    flags = elf["e_flags"]
    float_abi = "hard" if flags & EF_ARM_ABI_FLOAT_HARD else "soft" if flags & EF_ARM_ABI_FLOAT_SOFT else None
    found: dict[str, Any] = {"float_abi": float_abi} if float_abi else {}
    if not elf["e_shoff"] or not elf["e_shnum"]:
        return found
    # the section table ends the file (as linkers lay it out): its end is the size pyelftools needs
    end = max(len(head), elf["e_shoff"] + elf["e_shnum"] * elf["e_shentsize"])
    try:
        whole = ELFFile(io.BufferedReader(_Pieces(fetch, head, end), BLOCK))
        section = next((s for s in whole.iter_sections() if isinstance(s, ARMAttributesSection)), None)
        if section is None:
            return found
        for sub in section.iter_subsections("aeabi"):
            for subsub in sub.iter_subsubsections():
                for attr in subsub.iter_attributes():
                    if attr.tag in ARM_TAGS:
                        said = describe_attr_tag_arm(attr.tag, attr.value, attr.extra)
                        found[ARM_TAGS[attr.tag]] = said.split(": ", 1)[-1].strip().strip('"')
    except (ELFError, ValueError, EOFError, KeyError, IndexError):
        pass  # a section table cut or odd: the float ABI is still what the header says
    return found


def elf_identity_of(data: bytes) -> dict[str, Any]:
    """{'elf_class': 32|64, 'machine': ..., 'interpreter': ...} from the first bytes of a
    binary (HEAD_BYTES are enough); {} if they are not ELF (a script)."""
    from elftools.common.exceptions import ELFError

    try:
        return _identity(io.BytesIO(data))
    except (ELFError, ValueError, EOFError):  # not ELF, or cut before what was needed
        return {}


def with_build(identity: dict[str, Any], fetch: Callable[[int, int], bytes], head: bytes) -> dict[str, Any]:
    """identity with what a 32-bit ARM binary says it was built for ("arm": arm_build) added:
    the ELF machine alone does not tell ARMv5, ARMv6 with VFPv2 and ARMv7 apart."""
    if identity.get("machine") == "arm" and identity.get("elf_class") == 32:
        return {**identity, "arm": arm_build(fetch, head)}
    return identity


def elf_identity(path: Path) -> dict[str, Any]:
    """elf_identity_of the file at path on this machine, with_build; {} if it is not ELF."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)

            def fetch(offset: int, length: int) -> bytes:
                fh.seek(offset)
                return fh.read(length)

            return with_build(elf_identity_of(head), fetch, head)
    except OSError:
        return {}


def place_identity(target: Place, path: str, head: bytes) -> dict[str, Any]:
    """elf_identity_of a file in a place from its first bytes, with_build (read through the place)."""
    return with_build(elf_identity_of(head), lambda offset, length: target.read(path, length, offset), head)


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
        identity = place_identity(target, path, head)
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
