"""What a side's binaries were built for, read from real binaries of Debian's ports: hello of
bookworm for armhf, armel, arm64, i386 and amd64 (downloaded from Debian's mirror, extracted
with dpkg-deb), and for Raspberry Pi OS 32-bit's ARMv6 with VFPv2, whose own packages are not on
Debian's mirror, a program built here by clang with Raspbian's flags.

The words come from the binary alone (no dpkg architecture is passed), read both from a file on
this machine and through a place, as a side's facts are. Needs root and Debian's mirror (apt in a
private directory: debian_debs.py), clang and the armhf binutils (install.sh --test): fails, never
skips, without them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from debian_debs import DebianDebs

from shootout.counters.baseline import baseline
from shootout.execution.elf import HEAD_BYTES, elf_identity, place_identity

pytestmark = pytest.mark.root

ARCHES = ("amd64", "i386", "armhf", "armel", "arm64")
# hello (linked to libc, so its attributes are its own code's: what the port's compiler assumes), and what
# each port's build of it says
HELLO = "usr/bin/hello"
EXPECTED = {
    "armhf": ("arm", 32, "ARMv7-A, VFPv3-D16, hard float, Thumb-2, NEON not assumed"),
    "armel": ("arm", 32, "ARMv5TE, soft float (no FP unit assumed), Thumb-1, NEON not assumed"),
    "arm64": ("aarch64", 64, "ARMv8-A: NEON, 31 general registers (AES/SHA only where a library checks the CPU)"),
    "i386": ("x86", 32, "i686: x87 floating point (SSE2 not assumed), 8 general registers"),
    "amd64": ("x86-64", 64, "x86-64: SSE2, 16 general registers"),
}
# Raspberry Pi OS 32-bit builds for the Pi 1's ARM1176JZF-S: gcc's --with-arch=armv6 --with-fpu=vfp
# --with-float=hard; clang's flags for the same. Linked without libc: Debian's armhf libc is ARMv7 and
# would raise the attributes.
RASPBIAN_FLAGS = ("--target=arm-linux-gnueabihf", "-march=armv6", "-mfpu=vfp", "-mfloat-abi=hard", "-marm")
PROGRAM = """
double scale(double x, double y) { return x * y + 1.0; }
void _start(void) {
    volatile double r = scale(2.0, 3.0);
    register int code asm("r0") = (int)r;
    register int nr asm("r7") = 1;
    asm volatile("svc #0" :: "r"(code), "r"(nr));
    for (;;) {}
}
"""


class Files:
    """A place over this machine's files that reads only what it is asked, counting it."""

    def __init__(self) -> None:
        self.asked = 0

    def read(self, path: str, limit: int | None = None, offset: int = 0) -> bytes:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read() if limit is None else fh.read(limit)
        self.asked += len(data)
        return data


@pytest.fixture(scope="module")
def debs(tmp_path_factory: pytest.TempPathFactory) -> DebianDebs:
    return DebianDebs(tmp_path_factory.mktemp("debian-debs"), ARCHES)


def _through_a_place(path: Path) -> tuple[dict[str, Any], int]:
    files = Files()
    head = files.read(str(path), HEAD_BYTES)
    return place_identity(files, str(path), head), files.asked  # type: ignore[arg-type]


@pytest.mark.parametrize("arch", ARCHES)
def test_a_debian_ports_binary_says_what_it_was_built_for(debs: DebianDebs, arch: str, require_root: None) -> None:
    binary = debs.extracted("hello", arch) / HELLO
    machine, bits, said = EXPECTED[arch]
    local = elf_identity(binary)
    assert (local["machine"], local["elf_class"]) == (machine, bits)
    assert baseline(local) == said
    placed, _ = _through_a_place(binary)
    assert placed == local


def test_debian_armhf_and_armel_differ_in_their_attributes_where_the_elf_machine_does_not(debs: DebianDebs,
                                                                                           require_root: None) -> None:
    hf = elf_identity(debs.extracted("hello", "armhf") / HELLO)
    el = elf_identity(debs.extracted("hello", "armel") / HELLO)
    assert (hf["machine"], hf["elf_class"]) == (el["machine"], el["elf_class"]) == ("arm", 32)
    assert hf["arm"]["float_abi"] == "hard" and el["arm"]["float_abi"] == "soft"
    assert (hf["arm"]["cpu_arch"], hf["arm"]["fp_arch"], hf["arm"]["thumb"]) == ("v7", "VFPv3-D16", "Thumb-2")
    assert el["arm"]["cpu_arch"] == "v5TE" and el["arm"].get("fp_arch", "No") == "No"


def test_a_large_binarys_attributes_are_read_at_its_end_without_its_code(debs: DebianDebs, require_root: None) -> None:
    binary = debs.extracted("busybox-static", "armhf") / "bin/busybox"
    placed, asked = _through_a_place(binary)
    assert placed["arm"]["cpu_arch"] == "v7"
    # a static binary's attributes merge libc's: glibc's NEON string functions, chosen at run time
    assert placed["arm"]["simd_arch"] == "NEONv1"
    assert asked < binary.stat().st_size / 4, (asked, binary.stat().st_size)


def test_a_raspbian_build_reads_as_armv6_with_vfpv2(tmp_path: Path) -> None:
    # clang (install.sh) links with the armhf binutils (binutils-arm-linux-gnueabihf: install.sh --test)
    cc, ld = shutil.which("clang"), shutil.which("arm-linux-gnueabihf-ld")
    if cc is None or ld is None:
        pytest.fail("clang or arm-linux-gnueabihf-ld is missing (clang, binutils-arm-linux-gnueabihf: install.sh --test)")
    (tmp_path / "v6.c").write_text(PROGRAM)
    binary = tmp_path / "v6"
    subprocess.run([cc, "-O2", *RASPBIAN_FLAGS, "-nostdlib", "-static", "-ffreestanding", "-o", str(binary),
                    str(tmp_path / "v6.c")], check=True, capture_output=True, timeout=120)
    found = elf_identity(binary)
    assert found["arm"] == {**found["arm"], "float_abi": "hard", "cpu_arch": "v6", "fp_arch": "VFPv2"}
    assert baseline(found) == "ARMv6, VFPv2, hard float, Thumb-1, NEON not assumed"
    placed, _ = _through_a_place(binary)
    assert baseline(placed) == baseline(found)
