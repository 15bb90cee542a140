"""Which instruction-set paths a side's OpenSSL chose, from the capability vector it prints.

OpenSSL 3 picks its code paths at start from CPUID (x86) or the kernel's HWCAPs (ARM) and prints
the result with `openssl version -a` (or -c): `CPUINFO: OPENSSL_ia32cap=0x...:0x...` on x86,
`CPUINFO: OPENSSL_armcap=0x...` on ARM (Debian bookworm's 3.0 on amd64, arm64 and armhf alike).
A bit there is a path OpenSSL may take, so two sides on one CPU can differ (an older library that
does not know an extension, an OPENSSL_ia32cap override).
"""

from __future__ import annotations

import re

# OPENSSL_ia32cap(3): the first word is CPUID.1 EDX (bits 0-31) and ECX (bits 32-63), as OpenSSL
# adjusted it (bit 20 and 30 are its own; AVX and the like are cleared where the OS does not
# save YMM registers); the second word is CPUID.7 EBX (bits 0-31) and ECX (bits 32-63).
IA32_FIRST = {"sse2": 26, "pclmulqdq": 33, "ssse3": 41, "sse4.1": 51, "aes-ni": 57, "avx": 60}
IA32_SECOND = {"avx2": 5, "bmi2": 8, "avx512f": 16, "adx": 19, "sha-ni": 29, "vaes": 41, "vpclmulqdq": 42}
# arm_arch.h's bits of OPENSSL_armcap_P. SHA3 (bit 11) came with OpenSSL 3.1: 3.0 never sets it.
ARM = {"neon": 0, "aes": 2, "sha1": 3, "sha256": 4, "pmull": 5, "sha512": 6, "sha3": 11}
# the order users read them in: oldest extension first
X86_ORDER = ("sse2", "ssse3", "sse4.1", "avx", "avx2", "aes-ni", "pclmulqdq", "sha-ni", "avx512f", "vaes",
             "vpclmulqdq", "bmi2", "adx")

_IA32 = re.compile(r"CPUINFO:.*OPENSSL_ia32cap=0x([0-9a-fA-F]+)(?::0x([0-9a-fA-F]+))?")
_ARM = re.compile(r"CPUINFO:.*OPENSSL_armcap=0x([0-9a-fA-F]+)")


def _set(word: int, bits: dict[str, int]) -> set[str]:
    return {name for name, bit in bits.items() if word >> bit & 1}


def openssl_paths(output: str) -> tuple[str, ...]:
    """The paths named in `openssl version -a` output's CPUINFO line; () without one."""
    x86 = _IA32.search(output)
    if x86 is not None:
        found = _set(int(x86[1], 16), IA32_FIRST) | _set(int(x86[2] or "0", 16), IA32_SECOND)
        return tuple(name for name in X86_ORDER if name in found)
    arm = _ARM.search(output)
    if arm is not None:
        found = _set(int(arm[1], 16), ARM)
        return tuple(name for name in ARM if name in found)
    return ()
