"""The size of the code that ran: a binary's loadable segments and those of every library the
dynamic loader maps with it, read through the place the side ran in.

Two sides that run "the same" program may map very different amounts of code (a 32-bit build,
a static one, a distribution's extra libraries); that is one reason their caches behave apart.
"""

from __future__ import annotations

import io
from typing import Any

from shootout.base.errors import TargetError
from shootout.execution.elf import HEAD_BYTES, dynamic_end, elf_identity_of, linked_libraries
from shootout.execution.place import Place

PF_X, PF_W = 1, 2
# Debian's multiarch names, by the ELF identity's (class, machine)
MULTIARCH = {(64, "x86-64"): "x86_64-linux-gnu", (32, "x86"): "i386-linux-gnu",
             (64, "aarch64"): "aarch64-linux-gnu", (32, "arm"): "arm-linux-gnueabihf"}
# where 32- and 64-bit libraries live outside the multiarch folders (biarch and others' layouts)
BIARCH = {32: ("/lib32", "/usr/lib32"), 64: ("/lib64", "/usr/lib64")}


def _load_segments(data: bytes) -> list[Any]:
    """The PT_LOAD program headers, read one by one from the first bytes of an ELF file (the
    section table, which pyelftools' segments want, lies at its end, past what was read)."""
    from elftools.common.utils import struct_parse
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(data))
    headers = (struct_parse(elf.structs.Elf_Phdr, elf.stream, elf["e_phoff"] + i * elf["e_phentsize"])
               for i in range(elf["e_phnum"]))
    return [h for h in headers if h["p_type"] == "PT_LOAD"]


def segment_sizes(data: bytes) -> tuple[int, int]:
    """(text, data): the bytes an ELF file maps executable and writable (p_memsz, so .bss too);
    its first HEAD_BYTES are enough. (0, 0) for bytes that are not ELF."""
    from elftools.common.exceptions import ELFError

    try:
        loads = _load_segments(data)
    except (ELFError, ValueError, EOFError):
        return 0, 0
    text = sum(int(h["p_memsz"]) for h in loads if h["p_flags"] & PF_X)
    written = sum(int(h["p_memsz"]) for h in loads if h["p_flags"] & PF_W)
    return text, written


def _search_dirs(identity: dict[str, Any]) -> list[str]:
    """The loader's standard folders for a binary of this identity, its own ABI's first."""
    arch = MULTIARCH.get((identity.get("elf_class"), identity.get("machine")))
    own = [f"/lib/{arch}", f"/usr/lib/{arch}"] if arch else []
    return [*own, *BIARCH.get(identity.get("elf_class", 0), ()), "/lib", "/usr/lib"]


def _read_elf(place: Place, path: str) -> tuple[bytes, list[str]] | None:
    """(head, DT_NEEDED) of an ELF file in the place; None if it cannot be read or is not ELF."""
    try:
        head = place.read(path, HEAD_BYTES)
        end = dynamic_end(head)
        whole = head if end is None or end <= len(head) else place.read(path, end)
    except TargetError:
        return None
    needed = linked_libraries(whole)
    return (head, needed or []) if elf_identity_of(head) else None


def _library(place: Place, name: str, identity: dict[str, Any]) -> tuple[bytes, list[str]] | None:
    """The first library called `name` in the search folders whose ELF class and machine are the
    binary's (a 64-bit libc in /lib is not a 32-bit program's)."""
    for folder in _search_dirs(identity):
        found = _read_elf(place, f"{folder}/{name}")
        if found is not None:
            own = elf_identity_of(found[0])
            if (own["elf_class"], own["machine"]) == (identity["elf_class"], identity["machine"]):
                return found
    return None


def _resolve(place: Place, binary: str) -> str | None:
    """The ELF file that runs for `binary` in the place: a script's interpreter for a script."""
    path = place.which(binary) if "/" not in binary else binary
    if path is None:
        return None
    try:
        first = place.read(path, 256).split(b"\n", 1)[0]
    except TargetError:
        return None
    if first.startswith(b"#!") and first[2:].split():
        return first[2:].split()[0].decode(errors="replace")
    return path


def code_size(place: Place, binary: str) -> dict[str, int]:
    """{"text_bytes", "data_bytes", "libraries"} of `binary` as the place resolves it: its own
    segments, its interpreter's (the dynamic loader, counted as a library) and those of every library it links,
    transitively (DT_NEEDED). What the loader maps at start: modules opened later with dlopen
    (OpenSSL's providers, Python's extension modules) are not counted. {} if it is not found."""
    path = _resolve(place, binary)
    main = _read_elf(place, path) if path else None
    if main is None:
        return {}
    identity = elf_identity_of(main[0])
    text, data = segment_sizes(main[0])
    seen: set[str] = set()
    mapped = 0
    pending = list(main[1])
    interpreter = identity.get("interpreter")
    if interpreter:
        pending.append(interpreter)  # mapped by the kernel with the binary; a full path
    while pending:
        name = pending.pop(0)
        if name.rsplit("/", 1)[-1] in seen:
            continue
        found = _read_elf(place, name) if name.startswith("/") else _library(place, name, identity)
        seen.add(name.rsplit("/", 1)[-1])
        if found is not None:  # one the place lacks is not mapped either: the program would not start
            mapped += 1
            more_text, more_data = segment_sizes(found[0])
            text, data = text + more_text, data + more_data
            pending.extend(found[1])
    return {"text_bytes": text, "data_bytes": data, "libraries": mapped}
