"""Real mmdebstrap userspaces: the native pair (amd64 and i386 bookworm; arm64 and armhf on an
arm64 machine), and on x86-64 armhf under qemu.

Needs root (CI runs as root) and Debian's mirror; fails, never skips, without them. The
three userspaces are created once per module, in parallel; set SHOOTOUT_TEST_HOME to keep
them between test files or runs (existing ready ones are reused).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from hashlib import sha1
from pathlib import Path

import psutil
import pytest
from shared_spaces import (
    ARMHF,
    COMPANION,
    COMPANION_ARCH,
    FOREIGN,
    NATIVE,
    NATIVE_ARCH,
    RELEASE,
    Spaces,
    mounts_anywhere,
)

from shootout.base.errors import ShootoutError, TargetError, UsageError
from shootout.base.model import Config
from shootout.configs.abi import verify_abi
from shootout.counters.baseline import baseline
from shootout.configs.userspaces import userspace_config
from shootout.execution.elf import HEAD_BYTES, elf_identity, elf_identity_of
from shootout.places.chroot import ChrootTarget, named_userspace_config
from shootout.system.emulator import here as emulator_here
from shootout.system.journal import journal, recover
from shootout.userspace.arches import arch as arch_of
from shootout.userspace.create import create_userspace
from shootout.userspace.registry import (
    INCOMPLETE,
    META,
    find,
    list_userspaces,
    package_versions,
    userspaces_dir,
    version_confounders,
    write_meta,
)
from shootout.userspace.update import update_userspace
from shootout.workloads.catalogue import workload
from shootout.workloads.contract import Context
from shootout.workloads.debpackages import workload_packages

SRC = Path(__file__).resolve().parents[2] / "src"
PTR_SIZE_C = '#include <stdio.h>\nint main(void) { printf("%zu\\n", sizeof(void *)); return 0; }\n'


def _mounts_under(path: Path) -> list[str]:
    """Mounts under path in this process's view, but the tmpfs that holds its chroot sessions'
    mount points: it belongs to the process's private mount namespace and ends with it."""
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True, check=True).stdout
    sessions = str(path / "userspaces" / ".sessions")
    return [m for m in out.splitlines() if (m == str(path) or m.startswith(f"{path}/")) and m != sessions]


# -- the native pair ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "arch", "bits", "machine"),
                         [(NATIVE, NATIVE_ARCH, 64, arch_of(NATIVE_ARCH).machine),
                          (COMPANION, COMPANION_ARCH, 32, arch_of(COMPANION_ARCH).machine)])
def test_native_kernels_build_and_run_inside(spaces: Spaces, name: str, arch: str, bits: int, machine: str) -> None:
    spaces.need(name)
    config = userspace_config(RELEASE, arch)
    assert config.userspace == name and config.target == "chroot"
    with journal() as j:
        target = ChrootTarget(config, j)
        target.open()
        try:
            target.put(PTR_SIZE_C.encode(), f"{target.workdir()}/p.c")
            built = target.run(["cc", "-O2", "-o", "p", "p.c"], timeout=120)
            assert built.exit_status == 0, built.stderr
            ran = target.run(["./p"])
            assert ran.stdout.strip() == str(bits // 8)
            elf = elf_identity_of(target.read(f"{target.workdir()}/p", HEAD_BYTES))
            assert (elf["elf_class"], elf["machine"]) == (bits, machine)
            verify_abi(config, elf)
            other = Config(name="debian:bookworm:x", target="chroot", userspace=COMPANION if bits == 64 else NATIVE)
            with pytest.raises(TargetError, match="should run"):
                verify_abi(other, elf)
            for kernel in ("intmix", "ptrtree"):  # the project's own kernels, built by the userspace's gcc
                w = workload(kernel)
                params = w.default_params(target.probe())
                prepared = w.prepare(Context(target, kernel, params))
                assert prepared.facts["binary"]["elf_class"] == bits
                verify_abi(config, prepared.facts["binary"])
                result = target.run(w.argv(prepared, params), timeout=300)
                assert result.exit_status == 0, result.stderr
                assert all(v > 0 for v in w.parse(result, params).values())
            facts = target.facts()
            # natively, but on a machine that is itself emulated (emulated-arm64.sh), where every figure is
            assert facts["arch"] == arch and facts["emulated"] is (emulator_here() is not None)
            assert facts["libc"].startswith("glibc") and "12." in facts["compiler"]
            assert "bookworm" in facts["distro"]
            assert facts["shell_elf"]["elf_class"] == bits
            assert len(_mounts_under(spaces.home)) >= 7  # root, proc, sys, dev, dev/pts, dev/shm, work
        finally:
            target.close()
    assert _mounts_under(spaces.home) == []


def test_openssl_sha1_inside_each(spaces: Spaces) -> None:
    data = os.urandom(3_000_000)
    digests = {}
    with journal() as j:
        for name in (NATIVE, COMPANION):
            spaces.need(name)
            target = ChrootTarget(named_userspace_config(name), j)
            target.open()
            target.put(data, f"{target.workdir()}/input.bin")
            done = target.run(["openssl", "sha1", "input.bin"])
            assert done.exit_status == 0, done.stderr
            digests[name] = done.stdout.split("=")[-1].strip()
            tool = target.which("openssl")
            assert tool is not None
            identity = elf_identity(target.host_path(tool))
            assert identity["elf_class"] == (64 if name == NATIVE else 32)
            target.close()
    assert set(digests.values()) == {sha1(data).hexdigest()}
    assert _mounts_under(spaces.home) == []


def test_versions_recorded_and_equal(spaces: Spaces) -> None:
    spaces.need(NATIVE)
    spaces.need(COMPANION)
    for name in (NATIVE, COMPANION):
        versions = package_versions(name)
        assert set(workload_packages()) <= set(versions)
        assert versions["libc6"]
    assert version_confounders([NATIVE, COMPANION]) == []
    assert version_confounders([NATIVE, COMPANION], workload_packages()) == []


def test_a_differing_version_is_a_confounder(spaces: Spaces) -> None:
    spaces.need(COMPANION)
    real = userspaces_dir() / COMPANION
    copy = userspaces_dir() / f"tampered-{COMPANION_ARCH}"
    shutil.rmtree(copy, ignore_errors=True)
    (copy / "root").mkdir(parents=True)
    meta = json.loads((real / META).read_text())
    true_version = meta["packages"]["openssl"]
    meta["packages"]["openssl"] = "3.0.0-0tampered"
    write_meta(copy, meta)
    try:
        lines = version_confounders([NATIVE, f"tampered-{COMPANION_ARCH}"])
        assert lines == [f"openssl: {true_version} ({NATIVE}) vs 3.0.0-0tampered (tampered-{COMPANION_ARCH})"]
    finally:
        shutil.rmtree(copy)


def test_update_rerecords_versions_and_unmounts(spaces: Spaces) -> None:
    spaces.need(COMPANION)
    before = package_versions(COMPANION)
    changed = update_userspace(COMPANION, ChrootTarget)
    after = package_versions(COMPANION)
    assert {p: (before.get(p), after.get(p)) for p in set(before) | set(after) if before.get(p) != after.get(p)} == changed
    assert json.loads((userspaces_dir() / COMPANION / META).read_text())["updated_at"] > 0
    assert [u.state for u in find(COMPANION)] == ["ready"]
    assert _mounts_under(spaces.home) == []


# -- kills --------------------------------------------------------------------------------------

_CHILD_TRIAL = """
import sys
from shootout.system.journal import Journal
from shootout.places.chroot import ChrootTarget
from shootout.places.chroot import named_userspace_config
t = ChrootTarget(named_userspace_config(sys.argv[1]), Journal())
t.open()
print("open", flush=True)
t.run(["sh", "-c", "sleep 61.25 & sleep 61.25"])
"""


def _child_env(home: Path) -> dict[str, str]:
    return {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": str(SRC)}


def _sleepers(parent: int) -> list[psutil.Process]:
    """The trial's sleeps among the descendants of `parent` (their command lines only: reading
    every process's could wait on a busy machine's memory-heavy processes)."""
    try:
        found = psutil.Process(parent).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for p in found:
        try:
            # its last two arguments: under qemu-user (emulated-arm64.sh) the interpreter and the
            # program's path come first (binfmt_misc's P flag keeps argv[0] after them)
            if p.cmdline()[-2:] == ["sleep", "61.25"]:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def test_sigkill_during_a_trial_leaves_nothing_without_doctor(spaces: Spaces) -> None:
    """The kernel frees the run's mounts: its trial processes die with it (PID namespace), and
    nothing else holds its private mount namespace."""
    spaces.need(COMPANION)
    child = subprocess.Popen([sys.executable, "-c", _CHILD_TRIAL, COMPANION], env=_child_env(spaces.home),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "open", child.stderr.read()
        deadline = time.monotonic() + (30 if emulator_here() is None else 180)  # qemu starts programs slowly
        while len(sleepers := _sleepers(child.pid)) < 2:
            assert time.monotonic() < deadline, "the trial never started"
            time.sleep(0.05)
        namespace = os.readlink(f"/proc/{child.pid}/ns/mnt")
        held = mounts_anywhere(spaces.home)
        assert held.get(namespace, 0) >= 8  # .sessions, root, proc, sys, dev, dev/pts, dev/shm, /tmp
        assert namespace != os.readlink("/proc/self/ns/mnt")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    deadline = time.monotonic() + 10
    while any(p.is_running() for p in sleepers) or namespace in mounts_anywhere(spaces.home):
        assert time.monotonic() < deadline, f"left behind: {sleepers} {mounts_anywhere(spaces.home)}"
        time.sleep(0.05)
    assert list((userspaces_dir() / ".sessions").iterdir()) == []
    # The journal still has the entries; replaying them later is harmless.
    undone, errors = recover()
    assert errors == [] and any("proc" in u for u in undone)
    assert namespace not in mounts_anywhere(spaces.home)


def test_a_create_lists_updates_and_security_and_leaves_nothing_mounted(spaces: Spaces) -> None:
    """What the builder leaves: the release with its -updates and -security suites, no dpkg or
    apt shortcut of its own, no package file, nothing mounted in any namespace, nothing left
    in the journal to undo."""
    spaces.need(COMPANION)  # its download cache makes this quick
    name = f"fresh-{COMPANION_ARCH}"
    with journal() as j:
        made = create_userspace(name, COMPANION_ARCH, RELEASE, packages=("make",), journal=j)
        # every change made while building was undone at once; on a machine that is itself emulated
        # the companion's programs need binfmt_misc, mounted for the rest of the run (binfmt.py)
        assert [p for p in j.pending if p != "mount binfmt_misc" or emulator_here() is None] == []
        records = [json.loads(line) for line in j.path.read_text().splitlines()]
    try:
        mounted = [r["id"] for r in records if f"bind-mount userspace {name}" in r.get("description", "")]
        assert mounted and [r["undone"] for r in records if "undone" in r] == mounted  # journalled, then undone
        root = made.root
        sources = (root / "etc/apt/sources.list").read_text().splitlines()
        assert sources == ["deb http://deb.debian.org/debian bookworm main",
                           "deb http://deb.debian.org/debian bookworm-updates main",
                           "deb http://deb.debian.org/debian-security bookworm-security main"]
        assert not [p for p in (root / "etc/apt/sources.list.d").iterdir()]
        assert not (root / "etc/dpkg/dpkg.cfg.d/99mmdebstrap").exists()
        assert not (root / "etc/apt/apt.conf.d/99mmdebstrap").exists()
        assert not list((root / "var/cache/apt/archives").glob("*.deb"))
        assert [u.state for u in find(name)] == ["ready"] and made.meta["packages"]["make"]
        assert str(made.meta["builder"]).startswith("mmdebstrap ")
        # in no namespace (this process's own holds .sessions, of the chroot targets other tests opened)
        assert mounts_anywhere(made.path) == {}
        assert mounts_anywhere(userspaces_dir() / f"{INCOMPLETE}{name}") == {}
        assert _mounts_under(spaces.home) == []
    finally:
        subprocess.run([sys.executable, "-m", "shootout", "userspace", "remove", name],
                       env=_child_env(spaces.home), capture_output=True, text=True, check=False)


_CHILD_CREATE = """
import sys
from shootout.userspace.create import create_userspace
create_userspace(sys.argv[1], sys.argv[2], "bookworm", packages=("make",), progress=lambda m: print(m, flush=True))
"""


def test_killed_create_is_incomplete_and_removable(spaces: Spaces) -> None:
    spaces.need(COMPANION)  # its download cache makes this quick
    name = f"killed-{COMPANION_ARCH}"
    in_tmp = set(Path("/tmp").glob("mmdebstrap.*"))
    child = subprocess.Popen([sys.executable, "-c", _CHILD_CREATE, name, COMPANION_ARCH], env=_child_env(spaces.home),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        for line in child.stdout:  # killed while dpkg runs in the chroot, with /proc and /dev mounted
            if "installing essential packages" in line:
                break
        else:
            pytest.fail(f"create never got to installing: {child.stderr.read()}")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert [u.state for u in find(name)] == ["incomplete"]
    listing = subprocess.run([sys.executable, "-m", "shootout", "userspace", "list"], env={
        **_child_env(spaces.home), "COLUMNS": "200"}, capture_output=True, text=True, check=False)
    assert listing.returncode == 0 and f"{name}" in listing.stdout and "incomplete" in listing.stdout
    with pytest.raises(TargetError, match="incomplete"):
        named_userspace_config(name)
    time.sleep(0.5)
    root = userspaces_dir() / f"{INCOMPLETE}{name}" / "root"
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(root) in " ".join(p.info["cmdline"] or [])]
    removed = subprocess.run([sys.executable, "-m", "shootout", "userspace", "remove", name],
                             env=_child_env(spaces.home), capture_output=True, text=True, check=False)
    assert removed.returncode == 0, removed.stderr
    assert find(name) == []
    assert _mounts_under(spaces.home) == []
    assert set(Path("/tmp").glob("mmdebstrap.*")) <= in_tmp  # its gpg home went with the half-made one


# -- armhf under qemu -----------------------------------------------------------------------------


@pytest.mark.skipif(FOREIGN is None, reason="an arm64 machine runs armhf natively: the companion's tests are its")
def test_armhf_under_qemu_compiles_and_runs_intmix(spaces: Spaces) -> None:
    spaces.need(ARMHF)
    entry = Path("/proc/sys/fs/binfmt_misc/qemu-arm")
    registered_before = entry.exists()  # the host may register qemu itself (systemd-binfmt)
    config = named_userspace_config(ARMHF)
    with journal() as j:
        target = ChrootTarget(config, j)
        target.open()
        try:
            assert entry.exists()
            w = workload("intmix")
            params = {**w.default_params(target.probe()), "iterations": 200_000}
            prepared = w.prepare(Context(target, "intmix", params))
            assert (prepared.facts["binary"]["elf_class"], prepared.facts["binary"]["machine"]) == (32, "arm")
            verify_abi(config, prepared.facts["binary"])
            result = target.run(w.argv(prepared, params), timeout=300)
            assert result.exit_status == 0, result.stderr
            assert w.parse(result, params)["iterations"] > 0
            facts = target.facts()
            assert facts["emulated"] is True and facts["arch"] == "armhf" and facts["uname_m"] == "armv7l"
            # what Debian's armhf builds for, read from the kernel gcc built there and from the shell
            for elf in (prepared.facts["binary"], facts["shell_elf"]):
                assert baseline(elf) == "ARMv7-A, VFPv3-D16, hard float, Thumb-2, NEON not assumed", elf
        finally:
            target.close()
    assert _mounts_under(spaces.home) == []
    assert entry.exists() == registered_before  # our registration was undone with the journal


# -- bad input ----------------------------------------------------------------------------------


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shootout", "userspace", *args], env=_child_env(home),
                          capture_output=True, text=True, timeout=300, check=False)


def test_unknown_arch_is_one_line(tmp_path: Path) -> None:
    done = _cli(tmp_path, "create", "x", "--arch", "sparc99")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "unknown architecture 'sparc99'" in done.stderr


def test_bogus_release_and_no_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.fail("needs root")
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))
    with pytest.raises(TargetError, match="release 'bogusrelease' is not on the mirror"):
        create_userspace("bogus", COMPANION_ARCH, "bogusrelease", packages=())
    with pytest.raises(TargetError, match="cannot reach the mirror"):
        create_userspace("nonet", COMPANION_ARCH, RELEASE, mirror="http://127.0.0.1:9/debian", packages=())
    done = _cli(tmp_path, "create", "bogus", "--arch", COMPANION_ARCH, "--release", "bogusrelease")
    assert done.returncode == 4 and done.stderr.strip().count("\n") == 0, done.stderr
    assert list_userspaces() == []


def test_not_root_is_refused() -> None:
    if os.geteuid() != 0:
        pytest.fail("needs root to switch to another user")
    nobody = 65534
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child drops root, then asks for a userspace
        try:
            os.setgid(nobody)
            os.setuid(nobody)
            try:
                create_userspace("x", COMPANION_ARCH, RELEASE, packages=())
                answer = "no error"
            except ShootoutError as exc:
                answer = str(exc)
            os.write(write_end, answer.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as fh:
        answer = fh.read()
    os.waitpid(pid, 0)
    assert answer == "creating a userspace needs root (run as root or use host and host+m32)"


def test_disk_full_during_create_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.fail("needs root to mount a small filesystem")
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1050M", "shootout-test-small", str(small)], check=True)
    try:
        monkeypatch.setenv("SHOOTOUT_HOME", str(small))
        filled: list[str] = []

        def fill_disk(message: str) -> None:
            if filled:
                return
            filled.append(message)  # the moment mmdebstrap starts, the disk fills up
            with open(small / "filler", "wb") as fh:
                size = 0
                for step in (16 << 20, 64 << 10):
                    try:
                        while True:
                            os.posix_fallocate(fh.fileno(), size, step)
                            size += step
                    except OSError:
                        pass

        with pytest.raises(ShootoutError) as err:
            create_userspace("full", COMPANION_ARCH, RELEASE, packages=("make",), progress=fill_disk)
        assert filled, err.value
        assert "no space left on device" in err.value.message
        assert list_userspaces() == []
        assert not (userspaces_dir() / f"{INCOMPLETE}full").exists()
        assert _mounts_under(small) == [str(small)]  # only the test's own small filesystem
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def test_creating_twice_is_refused(spaces: Spaces) -> None:
    spaces.need(COMPANION)
    with pytest.raises(UsageError, match="already exists"):
        create_userspace(COMPANION, COMPANION_ARCH, RELEASE, packages=())


# -- the catalogue in a 32-bit userspace ---------------------------------------------------------


def test_every_workload_runs_at_quick_size_in_the_i386_userspace(spaces: Spaces) -> None:
    """Each workload prepares, calibrates and runs one real trial inside i386 (armhf on arm64), with its
    binaries verified 32-bit; a missing tool would fail here, naming its package. (Those
    installed on first use, the browser's, have their own test: test_browser_userspace.py.)"""
    from shootout.measure.runner import verify_binaries
    from shootout.workloads.catalogue import REGISTRY

    spaces.need(COMPANION)
    config = userspace_config(RELEASE, COMPANION_ARCH)
    failures: dict[str, str] = {}
    with journal() as j:
        target = ChrootTarget(config, j)
        target.open()
        try:
            for name, cls in ((n, c) for n, c in REGISTRY.items() if c.preinstalled):
                w = cls()
                try:
                    assert target.provide(w.required_packages(target)) == []  # created with everything
                    w.check_tools(target)
                    ctx = Context(target, name, {**w.default_params(target.probe()), **cls.quick})
                    prepared = w.prepare(ctx)
                    verify_binaries(config, target, w, prepared)
                    params = w.calibrate(ctx, prepared)
                    result = target.run(w.argv(prepared, params), timeout=600)
                    assert result.exit_status == 0, result.stderr_tail(3)
                    values = w.parse(result, params)
                    zero_ok = {m.name for m in w.spec.recorded}  # amounts such as tabs lost may be 0
                    assert values and all(v > 0 or (k in zero_ok and v == 0) for k, v in values.items()), values
                    assert all(e.get("elf_class") in (None, 32) for e in prepared.facts["elf"].values()), prepared.facts["elf"]
                    w.cleanup(ctx, prepared)
                    assert not target.exists(f"{target.workdir()}/{name}")
                except (ShootoutError, AssertionError) as exc:
                    failures[name] = str(exc)[:300]
        finally:
            target.close()
    # qemu-user (7.2) has no io_setup (ENOSYS): fio's libaio engine cannot start on a machine that is
    # itself emulated (emulated-arm64.sh), while every real kernel has it
    expected = {"fio"} if emulator_here() is not None else set()
    # Debian's mirror does not serve iozone3's non-free source tarball (its .dsc only): without the
    # file put in the source cache by hand, iozone-build can only say so, in one line
    if "cannot fetch iozone3_" in failures.get("iozone-build", ""):
        expected.add("iozone-build")
    assert set(failures) == expected, failures
