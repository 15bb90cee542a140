"""Which boot this is: boot id, kernel release, `uname -m`, command line (and the root device
its root= names), a Pi's arm_64bit; and what a kernel configuration wants of it (a release, or
a Raspberry Pi's kernel image, and for a whole install its root: boots/wholeroot.py), with the
userspace its trials run in.

Read from files under a root (the real "/", a remote's mirrored tree, or a fake tree in
tests), like every other probe. The boot id changes at every boot, so two blocks of a run
across boots can be told apart even under the same kernel.
"""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from shootout.arm.board import arm_64bit, config_reader
from shootout.base.model import Config
from shootout.boots.images import IMAGES, kernel_image
from shootout.boots.roots import cmdline_root, device_of, partuuid_of
from shootout.conditions.machinefacts import arch
from shootout.execution.fsread import read_text, under

# Where Raspberry Pi OS (bookworm: /boot/firmware) and older images keep the firmware's config.
CONFIG_TXT = ("/boot/firmware/config.txt", "/boot/config.txt")


@dataclass(frozen=True)
class BootIdentity:
    boot_id: str
    release: str  # uname -r
    machine: str  # uname -m
    cmdline: str
    arm_64bit: str | None = None  # config.txt's arm_64bit, None where there is no such file or line
    root_device: str | None = None  # the /dev path the command line's root= names, where it exists
    root_partuuid: str | None = None  # that device's PARTUUID, where udev links one

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BootIdentity:
        return cls(str(data["boot_id"]), str(data["release"]), str(data["machine"]), str(data.get("cmdline", "")),
                   data.get("arm_64bit"), data.get("root_device"), data.get("root_partuuid"))

    @property
    def root(self) -> str | None:
        """The command line's root= as the kernel got it."""
        return cmdline_root(self.cmdline)

    def is_root(self, name: str) -> bool:
        """Whether this boot's root is `name` (PARTUUID=… or /dev/…), however the command line named it."""
        key, _, value = name.partition("=")
        partuuid = (self.root_partuuid or "").lower()
        return (name == self.root or (self.root_device is not None and name == self.root_device)
                or (key == "PARTUUID" and bool(partuuid) and value.lower() == partuuid))

    def describe_root(self) -> str:
        names = dict.fromkeys(n for n in (self.root, self.root_device,
                                          self.root_partuuid and f"PARTUUID={self.root_partuuid}") if n)
        return " = ".join(names) or "not named on its command line"

    def describe(self) -> str:
        pi = f", arm_64bit={self.arm_64bit}" if self.arm_64bit is not None else ""
        return f"{self.release} ({self.machine}{pi}; boot {self.boot_id[:8]})"


# The Pi firmware's one-shot flag, as this boot saw it: 1 when it read tryboot.txt instead of config.txt.
TRYBOOT_FLAG = "/proc/device-tree/chosen/bootloader/tryboot"


def tried(root: Path = Path("/")) -> bool:
    """Whether this boot is a tryboot (the firmware read tryboot.txt, not config.txt)."""
    path = under(root, TRYBOOT_FLAG)
    return path.is_file() and int.from_bytes(path.read_bytes()[:4] or b"\0", "big") == 1


def firmware_text(root: Path = Path("/")) -> str | None:
    """The firmware configuration this boot was made with: tryboot.txt in a tryboot, else config.txt."""
    for path in CONFIG_TXT:
        if (text := read_text(root, path)) is not None:
            if tried(root) and (trial := read_text(root, str(Path(path).with_name("tryboot.txt")))) is not None:
                return trial
            return text
    return None


def read_boot(root: Path = Path("/")) -> BootIdentity:
    config = firmware_text(root)
    reader = config_reader(root, tryboot=tried(root))
    cmdline = read_text(root, "/proc/cmdline") or ""
    named = cmdline_root(cmdline)
    device = device_of(named, root) if named else None
    return BootIdentity(
        boot_id=read_text(root, "/proc/sys/kernel/random/boot_id") or "unknown",
        release=read_text(root, "/proc/sys/kernel/osrelease") or "unknown",
        machine=arch(root) or "unknown",
        cmdline=cmdline,
        arm_64bit=arm_64bit(config, reader) if config is not None else None,
        root_device=device,
        root_partuuid=partuuid_of(device, root) if device else None,
    )


@dataclass(frozen=True)
class KernelWant:
    """What a configuration requires of the running kernel; release is a shell pattern."""

    release: str
    machine: str | None = None
    arm_64bit: str | None = None
    image: str | None = None  # a Raspberry Pi's kernel image (kernel8.img): the release must be its flavour
    root: str | None = None  # a whole install's root (PARTUUID=… or /dev/…): the boot's root= must name it

    def matches(self, boot: BootIdentity) -> bool:
        return (fnmatch.fnmatchcase(boot.release, self.release)
                and (self.machine is None or boot.machine == self.machine)
                and (self.arm_64bit is None or boot.arm_64bit == self.arm_64bit)
                and (self.image is None or kernel_image(boot.release) == self.image)
                and (self.root is None or boot.is_root(self.root)))

    def describe(self) -> str:
        extra = [x for x in (self.machine, f"arm_64bit={self.arm_64bit}" if self.arm_64bit else None) if x]
        head = self.image if self.image and self.release == "*" else self.release
        if self.root is not None:  # a whole install: its root, and the kernel image when one is named
            return f"root {self.root}" + (f" with {head}" if head != "*" else "")
        return head + (f" ({', '.join(extra)})" if extra else "")

    def boots(self) -> str:
        """What to boot, as said to the user: the kernel, or the whole install on its root."""
        return ("the install on " if self.root else "kernel ") + self.describe()


def kernel_want(config: Config) -> KernelWant | None:
    """The kernel a configuration names (option kernel, and optionally machine, arm_64bit and a
    Raspberry Pi's kernel_image)."""
    release = config.option("kernel")
    if not release:
        return None
    return KernelWant(release, config.option("machine"), config.option("arm_64bit"), config.option("kernel_image"),
                      config.option("root"))


KERNEL_HINT = ("use kernel:RELEASE[:MACHINE][/USERSPACE], e.g. kernel:6.1.0-28-amd64, kernel:'6.6.*-v8':aarch64, "
               "or on a Raspberry Pi kernel:kernel7l.img/debian:bookworm:armhf")


def kernel_config(spec: str, userspace: Config | None = None) -> Config:
    """`kernel:RELEASE[:MACHINE]` -> a host configuration that requires that running kernel; RELEASE
    may be a Raspberry Pi's kernel image (kernel8.img: its flavour's releases and its uname -m; the
    switch writes arm_64bit to match). With `userspace` (the configuration after a "/"), the trials run in that userspace."""
    from shootout.base.errors import UsageError

    parts = spec.partition("/")[0].split(":")
    if len(parts) not in (2, 3) or not parts[1]:
        raise UsageError(f"bad kernel configuration {spec!r}", KERNEL_HINT)
    image = IMAGES.get(parts[1])
    if image is not None:
        # arm_64bit follows from the image (config.txt may leave it to the firmware's default)
        options: tuple[tuple[str, str], ...] = (("kernel", "*"), ("kernel_image", image.file),
                                                ("machine", image.machine))
    else:
        options = (("kernel", parts[1]),) + ((("machine", parts[2]),) if len(parts) == 3 else ())
    label = f"kernel {':'.join(parts[1:])}"
    if userspace is None:
        return Config(name=spec, target="host", label=label, options=options)
    return replace(userspace, name=spec, label=f"{label}, {userspace.display}",
                   options=(*userspace.options, *options))
