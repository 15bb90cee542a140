"""The instruction-set paths OpenSSL chose, decoded from the capability vector it prints."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from shootout.counters.codepaths import X86_ORDER, openssl_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "counters"
ALL_X86 = ("sse2", "ssse3", "sse4.1", "avx", "avx2", "aes-ni", "pclmulqdq", "sha-ni", "avx512f", "vaes",
           "vpclmulqdq", "bmi2", "adx")


def recorded(name: str) -> str:
    return (FIXTURES / f"openssl-version-{name}.txt").read_text()


@pytest.mark.parametrize("name, paths", [
    ("amd64-host", ALL_X86),
    ("amd64-masked", tuple(p for p in ALL_X86 if p not in ("aes-ni", "avx2"))),
    # OpenSSL 3.0 knows no SHA3 bit; bit 7 (0x80, "CPUID") and 1 (timer) are not paths
    ("arm64-qemu-max", ("neon", "aes", "sha1", "sha256", "pmull", "sha512")),
    ("arm64-qemu-a72", ("neon", "aes", "sha1", "sha256", "pmull")),
    ("armhf-qemu-max", ("neon", "aes", "sha1", "sha256", "pmull")),
    ("armhf-qemu-a7", ("neon",)),
])
def test_recorded_outputs_decode_to_the_paths_users_know(name: str, paths: tuple[str, ...]) -> None:
    assert openssl_paths(recorded(name)) == paths


def test_single_bits_land_where_openssls_page_puts_them() -> None:
    # OPENSSL_ia32cap(3): bit 26 SSE2, 33 PCLMULQDQ, 57 AES-NI; second word 64+29 SHA, 64+42 VPCLMULQDQ
    assert openssl_paths("CPUINFO: OPENSSL_ia32cap=0x4000000:0x0") == ("sse2",)
    assert openssl_paths("CPUINFO: OPENSSL_ia32cap=0x200000200000000:0x0") == ("aes-ni", "pclmulqdq")
    assert openssl_paths("CPUINFO: OPENSSL_ia32cap=0x0:0x40020000000") == ("sha-ni", "vpclmulqdq")
    assert openssl_paths("CPUINFO: OPENSSL_armcap=0x840") == ("sha512", "sha3")


def test_output_without_cpuinfo_has_no_paths() -> None:
    assert openssl_paths("OpenSSL 1.1.1w  11 Sep 2023\nplatform: debian-amd64\n") == ()
    assert openssl_paths("") == ()


def test_this_machines_openssl_agrees_with_its_cpu_flags() -> None:
    """Bit positions checked against the kernel's own reading of CPUID."""
    flags_line = next((l for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("flags")), None)
    if flags_line is None or shutil.which("openssl") is None:
        pytest.skip("not an x86 machine with openssl")
    flags = set(flags_line.split(":", 1)[1].split())
    kernel = {"sse4.1": "sse4_1", "aes-ni": "aes", "sha-ni": "sha_ni"}
    out = subprocess.run(["openssl", "version", "-c"], capture_output=True, text=True, check=True).stdout
    assert re.search(r"OPENSSL_ia32cap=", out)
    assert set(openssl_paths(out)) == {p for p in X86_ORDER if kernel.get(p, p) in flags}
