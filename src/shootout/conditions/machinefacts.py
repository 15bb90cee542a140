"""Environment facts: small probes that each return what they found, or None.

machine_facts() reads files under `root` (a fake /proc and /sys tree in tests); what a
target's userspace is, is asked through the target (shootout.execution.placefacts). A probe never
raises for something absent: facts describe, they do not judge.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shootout.arm.aarch32 import here as aarch32_here
from shootout.arm.aarch32 import page_size
from shootout.arm.board import caches, firmware_config, firmware_state, pi_board
from shootout.conditions.governor import boost_state, governor_summary
from shootout.execution.fsread import read_key_values, read_text, under
from shootout.execution.placefacts import os_release_name
from shootout.execution.tools import find_tool
from shootout.system.emulator import here as emulator_here

# The flags that decide code paths in the workloads (crypto and vector units).
RELEVANT_FLAGS = frozenset(
    "aes pclmulqdq sha_ni vaes vpclmulqdq avx avx2 avx512f bmi2 sse4_2 "  # x86
    "neon vfpv4 asimd sha1 sha2 sha512 sha3 pmull crc32 atomics lpae sve".split()  # arm
)

# Arm Ltd. (implementer 0x41) part numbers for arm64, whose /proc/cpuinfo has no model name.
_ARM_PARTS = {
    "0xd03": "Cortex-A53", "0xd04": "Cortex-A35", "0xd05": "Cortex-A55", "0xd07": "Cortex-A57",
    "0xd08": "Cortex-A72", "0xd09": "Cortex-A73", "0xd0a": "Cortex-A75", "0xd0b": "Cortex-A76",
    "0xd0c": "Neoverse-N1", "0xd0d": "Cortex-A77", "0xd40": "Neoverse-V1", "0xd41": "Cortex-A78",
    "0xd46": "Cortex-A510", "0xd47": "Cortex-A710", "0xd49": "Neoverse-N2", "0xd4f": "Neoverse-V2",
}

# Keyed so the raw machine id (which systemd asks to keep private) never lands in results.
_ID_KEY = b"shootout machine id v1"


def _cpuinfo(root: Path) -> list[tuple[str, str]]:
    pairs = []
    for line in (read_text(root, "/proc/cpuinfo") or "").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            pairs.append((key.strip(), value.strip()))
    return pairs


def _first(pairs: list[tuple[str, str]], *keys: str) -> str | None:
    for key in keys:
        for k, v in pairs:
            if k == key and v:
                return v
    return None


def cpu_model(root: Path = Path("/")) -> str | None:
    info = _cpuinfo(root)
    part = _first(info, "CPU part")
    arm = part is not None and _first(info, "CPU implementer") == "0x41"
    # A 32-bit process reads a generic "ARMv8 Processor rev 3 (v8l)" as model name: the part says which core
    if arm and part in _ARM_PARTS:
        return _ARM_PARTS[part]
    if name := _first(info, "model name", "cpu model", "Processor"):
        return name
    return f"Arm part {part}" if arm else part


def board(root: Path = Path("/")) -> str | None:
    """The machine model: device tree (Raspberry Pi and other boards) or DMI product name."""
    model = read_text(root, "/proc/device-tree/model")
    if model:
        return model.rstrip("\x00")
    return _first(_cpuinfo(root), "Model") or read_text(root, "/sys/class/dmi/id/product_name")


def cpu_flags(root: Path = Path("/")) -> list[str] | None:
    """The workload-relevant subset of the CPU's flags (x86 `flags`, ARM `Features`)."""
    line = _first(_cpuinfo(root), "flags", "Features")
    return sorted(RELEVANT_FLAGS.intersection(line.split())) if line is not None else None


def _all_flags(root: Path) -> set[str]:
    return set((_first(_cpuinfo(root), "flags", "Features") or "").split())


def _parse_cpu_list(text: str) -> int | None:
    """"0-3,6" -> 5."""
    count = 0
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            count += int(hi or lo) - int(lo) + 1
    except ValueError:
        return None
    return count


def cores(root: Path = Path("/")) -> int | None:
    """Online CPUs (logical)."""
    online = read_text(root, "/sys/devices/system/cpu/online")
    if online and (n := _parse_cpu_list(online)):
        return n
    n = sum(1 for k, _ in _cpuinfo(root) if k == "processor")
    return n or None


def memory_bytes(root: Path = Path("/")) -> int | None:
    total = read_key_values(root, "/proc/meminfo").get("MemTotal", "")
    return int(total.split()[0]) * 1024 if total.split() and total.split()[0].isdigit() else None


def kernel_release(root: Path = Path("/")) -> str | None:
    return read_text(root, "/proc/sys/kernel/osrelease")


def arch(root: Path = Path("/")) -> str | None:
    """The kernel's machine name (uname -m)."""
    return read_text(root, "/proc/sys/kernel/arch") or (os.uname().machine if Path(root) == Path("/") else None)


def distro(root: Path = Path("/")) -> str | None:
    text = read_text(root, "/etc/os-release") or read_text(root, "/usr/lib/os-release")
    return os_release_name(text) if text else None


def _detect_virt(kind: str) -> str | None:
    tool = find_tool("systemd-detect-virt")
    if tool is None:
        return None
    try:
        done = subprocess.run([tool, f"--{kind}"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    name = done.stdout.strip()
    return name if done.returncode == 0 and name and name != "none" else None


def virtualization(root: Path = Path("/")) -> dict[str, Any] | None:
    """{"vm": hypervisor or None, "container": engine or None}; None when nothing can tell."""
    real = Path(root) == Path("/")  # systemd-detect-virt describes the real machine only
    vm = _detect_virt("vm") if real else None
    vm = vm or read_text(root, "/sys/hypervisor/type")
    if vm is None and "hypervisor" in _all_flags(root):
        vm = "unknown hypervisor"
    container = _detect_virt("container") if real else None
    if container is None:
        if under(root, "/.dockerenv").exists():
            container = "docker"
        elif under(root, "/run/.containerenv").exists():
            container = "podman"
    if vm is None and container is None and not _cpuinfo(root):
        return None
    return {"vm": vm, "container": container}


def mitigations(root: Path = Path("/")) -> dict[str, str] | None:
    """/sys/devices/system/cpu/vulnerabilities/*: name -> kernel's status line."""
    base = under(root, "/sys/devices/system/cpu/vulnerabilities")
    if not base.is_dir():
        return None
    return {p.name: text for p in sorted(base.iterdir()) if (text := read_text(root, p)) is not None}


def hostname(root: Path = Path("/")) -> str | None:
    return read_text(root, "/proc/sys/kernel/hostname") or read_text(root, "/etc/hostname")


def machine_id(root: Path = Path("/")) -> str | None:
    """A stable, non-reversible id: keyed hash of /etc/machine-id, else of the hostname."""
    for prefix, raw in (("m", read_text(root, "/etc/machine-id")), ("h", hostname(root))):
        if raw:
            return prefix + hmac.new(_ID_KEY, raw.encode(), hashlib.sha256).hexdigest()[:24]
    return None


def _here(root: Path) -> bool:
    return Path(root) == Path("/")


def aarch32_fact(root: Path = Path("/")) -> dict[str, Any] | None:
    """Whether this arm64 machine runs armhf programs natively (probed on the real machine only)."""
    found = aarch32_here() if _here(root) else None
    return found.as_dict() if found else None


def emulator_fact(root: Path = Path("/")) -> str | None:
    """Why this machine runs under qemu-user (an emulated foreign architecture), on the real machine only."""
    return emulator_here() if _here(root) else None


def firmware_state_fact(root: Path = Path("/")) -> dict[str, Any] | None:
    """A Raspberry Pi firmware's clocks, temperature and throttling flags (`vcgencmd`, real machine only)."""
    return firmware_state() if _here(root) else None


_MACHINE_PROBES: dict[str, Callable[[Path], Any]] = {
    "cpu_model": cpu_model,
    "board": board,
    "cpu_flags": cpu_flags,
    "cores": cores,
    "memory_bytes": memory_bytes,
    "arch": arch,
    "kernel": kernel_release,
    "distro": distro,
    "virtualization": virtualization,
    "emulator": emulator_fact,
    "page_size": page_size,
    "aarch32": aarch32_fact,
    "pi": pi_board,
    "firmware": firmware_config,
    "firmware_state": firmware_state_fact,
    "caches": caches,
    "governor": governor_summary,
    "boost": boost_state,
    "mitigations": mitigations,
    "hostname": hostname,
    "machine_id": machine_id,
}


def machine_facts(root: Path = Path("/")) -> dict[str, Any]:
    """Every machine probe's finding (None where it found nothing)."""
    return {name: probe(root) for name, probe in _MACHINE_PROBES.items()}
