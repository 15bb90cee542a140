"""The PMU's counts of a trial, for real. This machine has no PMU and a Pi cannot run in CI, so
shootout's helper (remote/helper.c, the small parent of every trial) is built for arm64 and run
in Debian 12's arm64 kernel booted under TCG on qemu's `max` CPU, which has a PMUv3:

- with -icount (qemu counts instructions only then): a loop twice as long counts twice the
  instructions; the same loop run by two child processes counts as one of twice the length (the
  counters are inherited); `true`, a small fraction (nothing of the loop's size is added to a
  trial);
- without -icount: cycles counted, instructions not (an event the PMU lacks), never a false 0;
- as a user whom perf_event_paranoid=2 keeps to user space: still counted, scope "user".

Each line the guest prints is read by shootout's own parser (SmallParent.result) into the trial
counters a host's trial records. The guest is an initramfs of Debian's busybox-static and the
helper, linked statically: elsewhere with clang and lld against Debian's arm64 libc, on arm64
with its own cc. A boot takes about 15 s. Needs root (apt in a private directory)
and Debian's mirror; fails, never skips.
"""

from __future__ import annotations

import gzip
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from debian_debs import DebianDebs

from shootout.counters import pertrial
from shootout.execution.process import ProcResult
from shootout.measure.smallparent import SmallParent
from shootout.remote import helper

SYSROOT_PACKAGES = ("libc6-dev", "libc6", "linux-libc-dev", "libgcc-12-dev")
ITERATIONS = 20_000


# /init: each measurement through `helper run` with its own token, then power off; /loop counts to $1
LOOP = 'i=0; while [ $i -lt $1 ]; do i=$((i+1)); done\n'
INIT = f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
/helper run 300 T-one / -- sh /loop {ITERATIONS} 2>&1
/helper run 300 T-two / -- sh /loop {2 * ITERATIONS} 2>&1
/helper run 300 T-children / -- sh -c 'sh /loop {ITERATIONS}; sh /loop {ITERATIONS}' 2>&1
/helper run 300 T-true / -- /bin/true 2>&1
echo 2 > /proc/sys/kernel/perf_event_paranoid
su user -c '/helper run 300 T-user / -- sh /loop {ITERATIONS} 2>&1'
poweroff -f
"""


@pytest.fixture(scope="module")
def guest_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Debian's arm64 kernel and an initramfs with busybox and the helper."""
    for tool, package in (("qemu-system-aarch64", "qemu-system-arm"), ("cpio", "cpio")):
        assert shutil.which(tool), f"{tool} is missing (apt-get install {package})"
    tmp = tmp_path_factory.mktemp("pmu")
    debs = DebianDebs(tmp / "debs", ["arm64"])
    kernel_package = debs.field("linux-image-arm64", "arm64", "Depends").split()[0]
    kernel = next((debs.extracted(kernel_package, "arm64") / "boot").glob("vmlinuz-*"))
    root = tmp / "initramfs"
    (root / "bin").mkdir(parents=True)
    (root / "proc").mkdir()
    (root / "etc").mkdir()
    (root / "etc" / "passwd").write_text("root:x:0:0::/:/bin/sh\nuser:x:1000:1000::/:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\nuser:x:1000:\n")
    shutil.copy(debs.extracted("busybox-static", "arm64") / "bin" / "busybox", root / "bin" / "busybox")
    _build_helper(debs, tmp, root / "helper")
    (root / "init").write_text(INIT)
    (root / "loop").write_text(LOOP)
    (root / "init").chmod(0o755)
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, text=True, check=True).stdout
    archive = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files.encode(),
                             capture_output=True, check=True).stdout
    initrd = tmp / "initrd.gz"
    initrd.write_bytes(gzip.compress(archive, compresslevel=1))
    return kernel, initrd


def _build_helper(debs: DebianDebs, tmp: Path, out: Path) -> None:
    source = tmp / "helper.c"
    source.write_bytes(helper.source())
    if platform.machine() == "aarch64":
        argv = ["cc"]
    else:
        assert shutil.which("ld.lld"), "lld is missing (apt-get install lld)"
        sysroot = tmp / "sysroot"
        for package in SYSROOT_PACKAGES:
            shutil.copytree(debs.extracted(package, "arm64"), sysroot, symlinks=True, dirs_exist_ok=True)
        argv = ["clang", "--target=aarch64-linux-gnu", f"--sysroot={sysroot}", "-fuse-ld=lld"]
    done = subprocess.run([*argv, "-static", "-O2", "-o", str(out), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def boot(kernel: Path, initrd: Path, icount: bool) -> dict[str, ProcResult]:
    """One boot: each measurement's result as shootout reads it from the helper's line."""
    argv = ["qemu-system-aarch64", "-machine", "virt", "-cpu", "max", "-smp", "1", "-m", "512", "-nodefaults",
            "-display", "none", "-no-reboot", "-serial", "stdio", *(["-icount", "shift=0"] if icount else []),
            "-kernel", str(kernel), "-initrd", str(initrd),
            "-append", "console=ttyAMA0 rdinit=/init panic=-1 quiet"]
    console = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout.replace("\r", "")
    lines = re.findall(r"^((T-[a-z]+) status=.*)$", console, re.M)
    assert sorted(token for _, token in lines) == ["T-children", "T-one", "T-true", "T-two", "T-user"], console[-3000:]
    return {token[2:]: SmallParent.result(ProcResult((), 0, "", f"\n{line}\n", 0, 0, 0, 0, 0, 0), token)
            for line, token in lines}


@pytest.fixture(scope="module")
def counted(guest_files: tuple[Path, Path]) -> dict[str, ProcResult]:
    return boot(*guest_files, icount=True)


def test_instructions_and_cycles_count_the_command_and_its_children(counted: dict[str, ProcResult],
                                                                   require_root: None) -> None:
    one, two, children, true = (counted[k] for k in ("one", "two", "children", "true"))
    assert all(r.exit_status == 0 and r.pmu_scope == "all" for r in (one, two, children, true)), counted
    assert one.instructions is not None and one.cycles is not None
    assert one.instructions > 50 * ITERATIONS  # a shell's loop: hundreds of instructions an iteration
    assert two.instructions == pytest.approx(2 * one.instructions, rel=0.1)
    assert children.instructions == pytest.approx(2 * one.instructions, rel=0.1)  # inherited by both children
    assert true.instructions is not None and true.instructions < 0.05 * one.instructions
    assert two.cycles == pytest.approx(2 * one.cycles, rel=0.1)
    trial = pertrial.pmu_of(one)
    assert trial == {"instructions": one.instructions, "cycles": one.cycles, "scope": "all"}


def test_a_user_limited_to_user_space_is_counted_there(counted: dict[str, ProcResult], require_root: None) -> None:
    user, one = counted["user"], counted["one"]
    assert user.exit_status == 0 and user.pmu_scope == "user", user
    assert user.instructions is not None and one.instructions is not None
    assert 0.5 * one.instructions < user.instructions <= one.instructions * 1.05  # the kernel's share left out


def test_without_icount_cycles_count_and_instructions_are_missing_not_zero(
        guest_files: tuple[Path, Path], require_root: None) -> None:
    found = boot(*guest_files, icount=False)
    one = found["one"]
    assert one.exit_status == 0 and one.instructions is None and one.cycles is not None and one.cycles > 0
    assert pertrial.pmu_of(one) == {"cycles": one.cycles, "scope": "all"}
