"""Read `openssl speed` output (machine-readable and table forms) and openssl's hardware paths.

Formats handled (fixtures in tests/fixtures/outputs/openssl/):
  -mr:    "+H:16:64:...", "+F:<n>:<name>:<bytes/s>:..." (bytes per second); with -multi the
          children's lines come back prefixed "Got: ... from <i>" and the parent's sum follows.
  table:  "type  16 bytes  64 bytes ..." then "<name>  123.45k ..." in 1000s of bytes per second;
          OpenSSL 1.x prints values under 10000 bytes/s without the "k" (in bytes per second);
          OpenSSL 3 with -multi prints the row without the header; 1.0.x names the row "evp".
"""

from __future__ import annotations

import re
from typing import Any

ALL_SIZES = (16, 64, 256, 1024, 8192, 16384)

_RUN = re.compile(r"^run (\S+) (\S+)$")
_HEADER = re.compile(r"^type\s+((?:\d+ bytes\s*)+)$")
_ROW = re.compile(r"^(\S.*?)((?:\s+\d+\.\d+k?)+)\s*$")


def _sections(text: str) -> list[tuple[tuple[str, str] | None, list[str]]]:
    """Split on the `run TAG ALG` lines our trial script prints; no marker -> one section."""
    sections: list[tuple[tuple[str, str] | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        if m := _RUN.match(line.strip()):
            sections.append(((m.group(1), m.group(2)), []))
        else:
            sections[-1][1].append(line.rstrip())
    return [s for s in sections if s[0] is not None or any(line.strip() for line in s[1])]


def parse_mr(lines: list[str]) -> tuple[str, dict[int, float]] | None:
    """(name, {size: kB/s}) from the parent's last +H/+F lines, or None."""
    sizes: list[int] | None = None
    found = None
    for line in lines:
        line = line.strip()
        if m := re.match(r"^Got: (\+H:\S*) from \d+$", line):
            line = m.group(1)  # with -multi only the children print the sizes
        if line.startswith("+H:"):
            sizes = [int(x) for x in line[3:].split(":") if x]
        elif line.startswith("+F:") and sizes:
            fields = line.split(":")
            name, numbers = fields[2], [float(x) for x in fields[3:] if x]
            if len(numbers) == len(sizes):
                found = (name.lower(), {s: v / 1000.0 for s, v in zip(sizes, numbers)})
    return found


def _value(token: str) -> float:
    return float(token[:-1]) if token.endswith("k") else float(token) / 1000.0


def parse_table(lines: list[str], default_sizes: tuple[int, ...] = ALL_SIZES) -> tuple[str, dict[int, float]] | None:
    """(name, {size: kB/s}) from the last result row of a human-readable table, or None."""
    sizes: list[int] | None = None
    found = None
    for line in lines:
        if m := _HEADER.match(line.strip()):
            sizes = [int(x) for x in re.findall(r"(\d+) bytes", m.group(1))]
            continue
        if line.startswith(("Doing ", "+", "Got:", "version:", "built on:", "options:", "compiler:")):
            continue
        if m := _ROW.match(line):
            tokens = m.group(2).split()
            cols = sizes if sizes and len(sizes) == len(tokens) else list(default_sizes[: len(tokens)])
            if len(cols) == len(tokens):
                found = (m.group(1).strip().lower(), {s: _value(t) for s, t in zip(cols, tokens)})
    return found


def parse_speed(text: str) -> dict[tuple[str, str], dict[int, float]]:
    """{(tag, algorithm): {block size: kB/s}}; tag "1" (one core) or "mt" (-multi).

    Several sections for the same key (one run per block size) are merged."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for marker, lines in _sections(text):
        got = parse_mr(lines) or parse_table(lines)
        if got is None:
            continue
        name, table = got
        key = marker if marker is not None else ("1", name)
        out.setdefault(key, {}).update(table)
    return out


# -- which hardware paths openssl takes -------------------------------------------------------

# OPENSSL_ia32cap: word 0 = CPUID.1 EDX (low 32) | ECX (high 32); word 1 = CPUID.7 EBX | ECX.
_IA32 = {(0, 32 + 1): "pclmulqdq", (0, 32 + 9): "ssse3", (0, 32 + 25): "aesni", (0, 32 + 28): "avx",
         (1, 5): "avx2", (1, 16): "avx512f", (1, 29): "sha_ni", (1, 32 + 9): "vaes", (1, 32 + 10): "vpclmulqdq"}
# OPENSSL_armcap bits (arm_arch.h)
_ARM = {0: "neon", 2: "aes", 3: "sha1", 4: "sha256", 5: "pmull", 6: "sha512"}
_FLAGS = frozenset("aes pclmulqdq sha_ni avx avx2 avx512f vaes vpclmulqdq ssse3 "
                   "neon asimd pmull sha1 sha2 sha512 aes".split())


def decode_caps(cpuinfo_line: str) -> list[str] | None:
    """Capabilities openssl detected, from `openssl version -a`'s CPUINFO line (OpenSSL >= 3)."""
    if m := re.search(r"OPENSSL_ia32cap=0x([0-9a-fA-F]+):0x([0-9a-fA-F]+)", cpuinfo_line):
        words = (int(m.group(1), 16), int(m.group(2), 16))
        return sorted(name for (w, bit), name in _IA32.items() if words[w] >> bit & 1)
    if m := re.search(r"OPENSSL_armcap=0x([0-9a-fA-F]+)", cpuinfo_line):
        cap = int(m.group(1), 16)
        return sorted(name for bit, name in _ARM.items() if cap >> bit & 1)
    return None


def hw_paths(version_a: str, cpuinfo: str, env: dict[str, str]) -> dict[str, Any]:
    """What decides openssl's code paths on this side: its own detection, CPU flags, overrides."""
    line = next((ln.strip() for ln in version_a.splitlines() if ln.startswith("CPUINFO:")), None)
    flags: set[str] = set()
    for ln in cpuinfo.splitlines():
        key, sep, value = ln.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            flags |= set(value.split()) & _FLAGS
    return {
        "openssl_cpuinfo": line,
        "openssl_caps": decode_caps(line) if line else None,  # None: OpenSSL 1.x does not print it
        "cpu_flags": sorted(flags),
        "env": {k: v for k, v in env.items() if k.startswith("OPENSSL_")},
    }
