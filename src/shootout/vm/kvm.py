"""Is KVM hardware-backed here? Only then does a VM measure the guest kernel, not an emulator.

/dev/kvm alone proves nothing: under PVM (the kvm_pvm module, software-nested
virtualization inside a cloud VM) guests run through an instruction emulator at about a
million instructions per second, and stock Debian kernels did not reach init in 25
minutes. Hardware KVM needs the CPU's vmx (Intel) or svm (AMD) flag and kvm_intel or
kvm_amd; arm64 KVM needs the kernel to have booted in EL2 (it says so in the log). And a
guest of another architecture family than the host's (an arm64 guest on x86-64) can only
ever be emulated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.execution.fsread import read_text, under

EMULATE_HINT = ("run on a machine with hardware virtualization (vmx/svm), or pass --emulate to check that the "
                "VM works (TCG: results are marked emulated and get no verdicts)")


@dataclass(frozen=True)
class Accel:
    name: str  # "kvm" or "tcg"
    emulated: bool
    why_not_kvm: str | None  # the reason hardware KVM is not used, None under KVM


def _flags(root: Path) -> set[str]:
    for line in (read_text(root, "/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


# Debian architecture of a guest, `uname -m` of a host -> the family KVM can run natively.
GUEST_FAMILY = {"amd64": "x86", "i386": "x86", "arm64": "arm", "armhf": "arm", "armel": "arm"}
HOST_FAMILY = {"x86_64": "x86", "i686": "x86", "i386": "x86", "aarch64": "arm", "armv7l": "arm", "armv8l": "arm"}


def kvm_problem(root: Path = Path("/"), machine: str | None = None, guest: str | None = None) -> str | None:
    """Why hardware KVM cannot run a `guest` (Debian architecture) here, or None when it can."""
    machine = machine or os.uname().machine
    if guest is not None and GUEST_FAMILY.get(guest) != HOST_FAMILY.get(machine):
        return f"an {guest} guest on this {machine} machine can only be emulated"
    if not under(root, "/dev/kvm").exists():
        return "there is no /dev/kvm (the kvm module is not loaded, or this is a container)"
    if under(root, "/sys/module/kvm_pvm").exists():
        return ("/dev/kvm is PVM (the kvm_pvm module: software-nested virtualization with no vmx/svm flag), "
                "so guests run under an instruction emulator")
    if machine in ("x86_64", "i686", "i386"):
        flags = _flags(root)
        if not flags & {"vmx", "svm"}:
            return "the CPU shows no vmx or svm flag, so /dev/kvm is not hardware-backed"
        module = "kvm_intel" if "vmx" in flags else "kvm_amd"
        if not under(root, f"/sys/module/{module}").exists():
            return f"the {module} module is not loaded"
    return None


def choose_accel(emulate: bool, root: Path = Path("/"), machine: str | None = None,
                 guest: str | None = None) -> Accel:
    """KVM where it is hardware-backed; TCG only when the user asked for function only."""
    problem = kvm_problem(root, machine, guest)
    if problem is None:
        return Accel("kvm", emulated=False, why_not_kvm=None)
    if not emulate:
        raise TargetError(f"no hardware KVM here: {problem}; a VM would measure the emulator, not the kernel",
                          EMULATE_HINT)
    return Accel("tcg", emulated=True, why_not_kvm=problem)
