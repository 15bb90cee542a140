"""Boot a VM image with qemu-system, reach it over SSH, shut it down.

Every VM of a run gets the same shape (vCPUs, memory, CPU model: `host` under KVM, `max`
under TCG; arm guests on qemu's `virt` board with qemu-system-aarch64, which runs 32-bit arm
kernels too), pinned to the same host cores where there are cores to spare, and its full
command line is recorded in the facts. The disk is opened with
snapshot=on: the guest writes to a temporary overlay that qemu deletes itself, so the
cached image never changes and a killed VM leaves no file. qemu dies with shootout
(parent-death signal) and its pid is in the journal, so `doctor` kills a survivor.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from shootout.base.errors import TargetError, ToolMissing
from shootout.base.paths import kept_log
from shootout.execution.tools import find_tool
from shootout.system.children import die_with_parent
from shootout.system.journal import Journal
from shootout.vm.image import VmImage
from shootout.vm.kvm import GUEST_FAMILY, Accel

# console lines that say why a guest's boot failed (initramfs-tools' and the kernel's words)
_ALARM = re.compile(r"ALERT!|Kernel panic|Gave up waiting|Unable to mount|No working init|not syncing")

# qemu binary and its Debian package for a kernel's architecture
QEMU = {"x86": ("qemu-system-x86_64", "qemu-system-x86"), "arm": ("qemu-system-aarch64", "qemu-system-arm")}


@dataclass(frozen=True)
class VmShape:
    """The same for every VM of a run, so that only the kernel and userspace differ."""

    vcpus: int = 2
    # The guest's /dev/shm (the work directory) is half of it: flac's default 23.5-minute
    # track with its FLAC, decoded WAV and second FLAC needs about 0.9 GB there.
    memory_mib: int = 3072


def pinned_cores(shape: VmShape, cores: int | None) -> list[int] | None:
    """Host cores for every VM of a run: the last `vcpus` ones, when at least one more core
    is left for shootout, ssh and the host; None when the cores do not allow it."""
    if cores is None or cores <= shape.vcpus:
        return None
    return list(range(cores - shape.vcpus, cores))


def family(image: VmImage) -> str:
    return GUEST_FAMILY.get(str(image.meta.get("arch")), "x86")


def arm32_kernel(image: VmImage) -> bool:
    return family(image) == "arm" and str(image.meta.get("flavour", "")).startswith("armmp")


def cpu_model(image: VmImage, accel: Accel) -> str:
    """The same CPU for every VM of a family: the host's under KVM, qemu's `max` under TCG; a
    32-bit arm kernel (armmp) needs a 32-bit CPU (a 64-bit one in AArch32 mode under KVM)."""
    if arm32_kernel(image):
        return "host,aarch64=off" if accel.name == "kvm" else "cortex-a15"
    return "host" if accel.name == "kvm" else "max"


def machine(image: VmImage) -> str:
    """qemu's board. For an LPAE-capable CPU the `virt` board puts its PCIe configuration space
    above 4 GiB, which armmp's kernel cannot reach: it never finds the virtio disk ("/dev/vda
    does not exist"). highmem=off keeps every device below 4 GiB, and the 3 GiB of RAM fit."""
    if family(image) != "arm":
        return "q35"
    return "virt,highmem=off" if arm32_kernel(image) else "virt"


def qemu_argv(image: VmImage, shape: VmShape, accel: Accel, port: int, serial_log: Path) -> list[str]:
    """The qemu command line; user-mode networking forwards 127.0.0.1:port to the guest's sshd.
    `quiet`: an emulated serial port is slow, and the boot log is not needed on it."""
    binary, package = QEMU[family(image)]
    found = find_tool(binary)
    if found is None:
        raise ToolMissing(binary, package)
    arm = family(image) == "arm"
    console = "ttyAMA0" if arm else "ttyS0"
    pin = pinned_cores(shape, os.cpu_count())
    taskset = ["taskset", "-c", ",".join(map(str, pin))] if pin else []  # qemu's threads, vCPUs included
    return [
        *taskset, found, "-machine", machine(image), "-accel", accel.name,
        "-cpu", cpu_model(image, accel), "-smp", str(shape.vcpus), "-m", str(shape.memory_mib),
        "-nodefaults", "-display", "none", "-no-reboot", "-serial", f"file:{serial_log}",
        "-drive", f"file={image.disk},format=raw,if=virtio,snapshot=on",
        "-netdev", f"user,id=net0,hostfwd=tcp:127.0.0.1:{port}-:22", "-device", "virtio-net-pci,netdev=net0",
        "-device", "virtio-rng-pci",
        "-kernel", str(image.kernel), "-initrd", str(image.initrd),
        "-append", f"root=/dev/vda rw console={console} init=/sbin/shootout-init panic=-1 quiet",
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningVm:
    image: VmImage
    argv: list[str]
    port: int
    dir: Path  # serial log and known_hosts
    proc: subprocess.Popen[bytes]
    entry: int
    started: float = field(default_factory=time.monotonic)

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def serial_log(self) -> Path:
        return self.dir / "serial.log"

    def console_reason(self) -> str:
        """The console line that says why a boot went wrong: the last alarm (a panic, a root
        never found), else the last line."""
        try:
            lines = [line for line in self.serial_log.read_text(errors="replace").splitlines() if line.strip()]
        except OSError:
            return "no console output"
        alarms = [line for line in lines if _ALARM.search(line)]
        return " ".join((alarms or lines or ["no console output"])[-1].split())[-160:]

    def keep_console(self) -> str:
        """The hint of a failed boot: the console log, copied where it outlives the VM's run
        directory (the journal removes that)."""
        try:
            kept = kept_log(f"boot-{self.image.dir.name}.log", self.serial_log.read_bytes())
        except OSError:
            kept = None
        return f"console log: {kept}" if kept else "the console log was lost with the VM's run directory"


def boot(image: VmImage, shape: VmShape, accel: Accel, journal: Journal, run_dir: Path) -> RunningVm:
    """Start qemu (the guest boots in the background; wait for it with the ssh target)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    argv = qemu_argv(image, shape, accel, port, run_dir / "serial.log")
    (run_dir / "known_hosts").write_text(f"[127.0.0.1]:{port} {image.host_key}\n")
    log = open(run_dir / "qemu.log", "wb")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=die_with_parent)
    log.close()
    try:
        started = psutil.Process(proc.pid).create_time()
    except psutil.Error:
        started = time.time()
    entry = journal.record(f"VM {image.dir.name} (qemu pid {proc.pid})",
                           [{"kill": proc.pid, "started": started}, {"rmtree": str(run_dir)}])
    return RunningVm(image, argv, port, run_dir, proc, entry)


def check_alive(vm: RunningVm) -> None:
    if vm.proc.poll() is not None:
        log = (vm.dir / "qemu.log").read_text(errors="replace").strip().splitlines()
        raise TargetError(f"qemu exited ({vm.proc.returncode}) while booting {vm.image.dir.name}: "
                          f"{(log or [vm.console_reason()])[-1][:200]}", vm.keep_console())


def stop(vm: RunningVm, journal: Journal, timeout: float = 30.0) -> list[str]:
    """Power the VM off (SIGTERM: qemu exits at once; the disk overlay is discarded anyway)."""
    vm.proc.terminate()
    try:
        vm.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        vm.proc.kill()
        vm.proc.wait()
    return journal.undo_entry(vm.entry)
