"""The libraries a binary links, from its dynamic section (DT_NEEDED), read through a place: what
says whether a program can reach a crypto library's hardware code path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shootout.arm.aarch32 import tiny_armhf
from shootout.execution.elf import HEAD_BYTES, dynamic_end, linked_libraries, tool_elf


class Files:
    """A place that reads this machine's files and counts the bytes it was asked for."""

    def __init__(self, extra: dict[str, str] | None = None) -> None:
        self.extra, self.asked = extra or {}, 0

    def which(self, tool: str) -> str | None:
        return self.extra.get(tool) or shutil.which(tool)

    def read(self, path: str, limit: int | None = None, offset: int = 0) -> bytes:
        data = Path(path).read_bytes()[offset:None if limit is None else offset + limit]
        self.asked += len(data)
        return data


@pytest.mark.parametrize("tool, linked", [("sha1sum", ["libc.so.6"]), ("openssl", ["libssl.so.3", "libcrypto.so.3",
                                                                                  "libc.so.6"])])
def test_a_tools_linked_libraries_are_read_through_the_place(tool: str, linked: list[str]) -> None:
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed (coreutils, openssl)")
    found = tool_elf(Files(), tool)  # type: ignore[arg-type]
    # arm64's binaries also name their dynamic loader (ld-linux-aarch64.so.1); amd64's do not
    libraries = [n for n in found["needed"] if not n.startswith("ld-linux")]
    assert libraries == linked and found["elf_class"] == 64


def test_a_dynamic_section_past_the_head_is_read_up_to_its_end_only() -> None:
    binary = Path(shutil.which("openssl") or "")
    end = dynamic_end(binary.read_bytes()[:HEAD_BYTES])
    assert end is not None and HEAD_BYTES < end < binary.stat().st_size
    place = Files()
    assert "libcrypto.so.3" in tool_elf(place, "openssl")["needed"]  # type: ignore[index, arg-type]
    assert place.asked == HEAD_BYTES + end


def test_a_static_binary_links_nothing_and_a_script_is_not_elf(tmp_path: Path) -> None:
    static = tmp_path / "static"
    static.write_bytes(tiny_armhf())
    assert dynamic_end(tiny_armhf()) is None and linked_libraries(tiny_armhf()) == []
    assert tool_elf(Files({"tiny": str(static)}), "tiny")["needed"] == []  # type: ignore[arg-type]
    assert linked_libraries(b"#!/bin/sh\n") is None
