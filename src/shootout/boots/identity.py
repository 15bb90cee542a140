"""Which boot this is: boot id, kernel release, `uname -m`, command line, a Pi's arm_64bit.

Read from files under a root (the real "/", a remote's mirrored tree, or a fake tree in
tests), like every other probe. The boot id changes at every boot, so two blocks of a run
across boots can be told apart even under the same kernel.
"""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from shootout.arm.board import arm_64bit
from shootout.conditions.fsread import read_text
from shootout.facts import arch
from shootout.model import Config

# Where Raspberry Pi OS (bookworm: /boot/firmware) and older images keep the firmware's config.
CONFIG_TXT = ("/boot/firmware/config.txt", "/boot/config.txt")


@dataclass(frozen=True)
class BootIdentity:
    boot_id: str
    release: str  # uname -r
    machine: str  # uname -m
    cmdline: str
    arm_64bit: str | None = None  # config.txt's arm_64bit, None where there is no such file or line

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BootIdentity:
        return cls(str(data["boot_id"]), str(data["release"]), str(data["machine"]), str(data.get("cmdline", "")),
                   data.get("arm_64bit"))

    def describe(self) -> str:
        pi = f", arm_64bit={self.arm_64bit}" if self.arm_64bit is not None else ""
        return f"{self.release} ({self.machine}{pi}; boot {self.boot_id[:8]})"


def read_boot(root: Path = Path("/")) -> BootIdentity:
    config = next((text for path in CONFIG_TXT if (text := read_text(root, path)) is not None), None)
    return BootIdentity(
        boot_id=read_text(root, "/proc/sys/kernel/random/boot_id") or "unknown",
        release=read_text(root, "/proc/sys/kernel/osrelease") or "unknown",
        machine=arch(root) or "unknown",
        cmdline=read_text(root, "/proc/cmdline") or "",
        arm_64bit=arm_64bit(config) if config is not None else None,
    )


def is_pattern(release: str) -> bool:
    """Whether a KernelWant's release is a shell pattern rather than one exact release."""
    return any(c in release for c in "*?[")


@dataclass(frozen=True)
class KernelWant:
    """What a configuration requires of the running kernel; release is a shell pattern."""

    release: str
    machine: str | None = None
    arm_64bit: str | None = None

    def matches(self, boot: BootIdentity) -> bool:
        return (fnmatch.fnmatchcase(boot.release, self.release)
                and (self.machine is None or boot.machine == self.machine)
                and (self.arm_64bit is None or boot.arm_64bit == self.arm_64bit))

    def describe(self) -> str:
        extra = [x for x in (self.machine, f"arm_64bit={self.arm_64bit}" if self.arm_64bit else None) if x]
        return self.release + (f" ({', '.join(extra)})" if extra else "")


def kernel_want(config: Config) -> KernelWant | None:
    """The kernel a configuration names (option kernel, and optionally machine and arm_64bit)."""
    release = config.option("kernel")
    if not release:
        return None
    return KernelWant(release, config.option("machine"), config.option("arm_64bit"))


def kernel_config(spec: str) -> Config:
    """`kernel:RELEASE[:MACHINE]` -> a host configuration that requires that running kernel."""
    from shootout.errors import UsageError

    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[1]:
        raise UsageError(f"bad kernel configuration {spec!r}",
                         "use kernel:RELEASE[:MACHINE], e.g. kernel:6.1.0-28-amd64 or kernel:'6.6.*-v8':aarch64")
    options = (("kernel", parts[1]),) + ((("machine", parts[2]),) if len(parts) == 3 else ())
    return Config(name=spec, target="host", label=f"kernel {':'.join(parts[1:])}", options=options)
