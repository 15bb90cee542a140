"""Real debootstrap userspaces: amd64 and i386 bookworm, and armhf under qemu.

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
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from hashlib import sha1
from pathlib import Path

import psutil
import pytest

from shootout.elf import elf_identity
from shootout.errors import ShootoutError, TargetError, UsageError
from shootout.model import Config
from shootout.system.journal import journal, recover
from shootout.targets.chroot import ChrootTarget
from shootout.userspace import (
    WORKLOAD_PACKAGES,
    create_userspace,
    list_userspaces,
    named_userspace_config,
    package_versions,
    update_userspace,
    userspace_config,
    verify_abi,
    version_confounders,
)
from shootout.userspace.registry import (
    INCOMPLETE,
    META,
    find,
    userspaces_dir,
    write_meta,
)
from shootout.workloads.registry import workload

SRC = Path(__file__).resolve().parents[2] / "src"
RELEASE = "bookworm"
AMD64, I386, ARMHF = f"debian-{RELEASE}-amd64", f"debian-{RELEASE}-i386", "test-armhf"
WANTED = [(AMD64, "amd64", WORKLOAD_PACKAGES), (I386, "i386", WORKLOAD_PACKAGES), (ARMHF, "armhf", ("gcc", "libc6-dev"))]

PTR_SIZE_C = '#include <stdio.h>\nint main(void) { printf("%zu\\n", sizeof(void *)); return 0; }\n'


@dataclass
class Spaces:
    home: Path
    seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, BaseException] = field(default_factory=dict)

    def need(self, name: str) -> None:
        if name in self.errors:
            raise self.errors[name]


def _ready(name: str) -> bool:
    return any(u.state == "ready" for u in find(name))


def _timed_create(name: str, arch: str, packages: tuple[str, ...], j) -> float:
    t0 = time.monotonic()
    create_userspace(name, arch, RELEASE, packages=packages, journal=j)
    return time.monotonic() - t0


@pytest.fixture(scope="module")
def spaces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spaces]:
    if os.geteuid() != 0:
        pytest.fail("userspace tests need root (CI runs as root)")
    home = Path(os.environ.get("SHOOTOUT_TEST_HOME") or tmp_path_factory.mktemp("userspaces"))
    home.mkdir(parents=True, exist_ok=True)
    saved = os.environ.get("SHOOTOUT_HOME")
    os.environ["SHOOTOUT_HOME"] = str(home)
    found = Spaces(home)
    try:
        with journal() as j, ThreadPoolExecutor(max_workers=len(WANTED)) as pool:
            futures = {n: pool.submit(_timed_create, n, a, p, j) for n, a, p in WANTED if not _ready(n)}
            for name, future in futures.items():
                try:
                    found.seconds[name] = future.result()
                except BaseException as exc:  # noqa: BLE001 (each test that needs it fails with this)
                    found.errors[name] = exc
        if artifacts := os.environ.get("SHOOTOUT_ARTIFACTS"):
            Path(artifacts).mkdir(parents=True, exist_ok=True)
            (Path(artifacts) / "userspace-create-seconds.json").write_text(json.dumps(found.seconds, indent=2))
        yield found
    finally:
        if saved is None:
            os.environ.pop("SHOOTOUT_HOME", None)
        else:
            os.environ["SHOOTOUT_HOME"] = saved


def _mounts_under(path: Path) -> list[str]:
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True, check=True).stdout
    return [m for m in out.splitlines() if m == str(path) or m.startswith(f"{path}/")]


# -- the native pair ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "arch", "bits", "machine"),
                         [(AMD64, "amd64", 64, "x86-64"), (I386, "i386", 32, "x86")])
def test_native_kernels_build_and_run_inside(spaces: Spaces, name: str, arch: str, bits: int, machine: str) -> None:
    spaces.need(name)
    config = userspace_config(RELEASE, arch)
    assert config.userspace == name and config.target == "chroot"
    with journal() as j:
        target = ChrootTarget(config, j)
        target.open()
        try:
            (target.workdir / "p.c").write_text(PTR_SIZE_C)
            built = target.run(["cc", "-O2", "-o", "p", "p.c"], timeout=120)
            assert built.exit_status == 0, built.stderr
            ran = target.run(["./p"])
            assert ran.stdout.strip() == str(bits // 8)
            elf = elf_identity(target.workdir / "p")
            assert (elf["elf_class"], elf["machine"]) == (bits, machine)
            verify_abi(config, elf)
            other = Config(name="debian:bookworm:x", target="chroot", userspace=I386 if bits == 64 else AMD64)
            with pytest.raises(TargetError, match="should run"):
                verify_abi(other, elf)
            for kernel in ("intmix", "ptrtree"):  # the project's own kernels, built by the userspace's gcc
                w = workload(kernel)
                params = w.default_params()
                prepared = w.prepare(target, params)
                assert prepared.facts["binary"]["elf_class"] == bits
                verify_abi(config, prepared.facts["binary"])
                result = target.run(w.argv(prepared, params), timeout=300)
                assert result.exit_status == 0, result.stderr
                assert all(v > 0 for v in w.parse(result, params).values())
            facts = target.facts()
            assert facts["arch"] == arch and facts["emulated"] is False
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
        for name in (AMD64, I386):
            spaces.need(name)
            target = ChrootTarget(named_userspace_config(name), j)
            target.open()
            (target.workdir / "input.bin").write_bytes(data)
            done = target.run(["openssl", "sha1", "input.bin"])
            assert done.exit_status == 0, done.stderr
            digests[name] = done.stdout.split("=")[-1].strip()
            tool = target.which("openssl")
            assert tool is not None
            identity = elf_identity(target.host_path(tool))
            assert identity["elf_class"] == (64 if name == AMD64 else 32)
            target.close()
    assert set(digests.values()) == {sha1(data).hexdigest()}
    assert _mounts_under(spaces.home) == []


def test_versions_recorded_and_equal(spaces: Spaces) -> None:
    spaces.need(AMD64)
    spaces.need(I386)
    for name in (AMD64, I386):
        versions = package_versions(name)
        assert set(WORKLOAD_PACKAGES) <= set(versions)
        assert versions["libc6"]
    assert version_confounders([AMD64, I386]) == []
    assert version_confounders([AMD64, I386], WORKLOAD_PACKAGES) == []


def test_a_differing_version_is_a_confounder(spaces: Spaces) -> None:
    spaces.need(I386)
    real = userspaces_dir() / I386
    copy = userspaces_dir() / "tampered-i386"
    shutil.rmtree(copy, ignore_errors=True)
    (copy / "root").mkdir(parents=True)
    meta = json.loads((real / META).read_text())
    true_version = meta["packages"]["openssl"]
    meta["packages"]["openssl"] = "3.0.0-0tampered"
    write_meta(copy, meta)
    try:
        lines = version_confounders([AMD64, "tampered-i386"])
        assert lines == [f"openssl: {true_version} ({AMD64}) vs 3.0.0-0tampered (tampered-i386)"]
    finally:
        shutil.rmtree(copy)


def test_update_rerecords_versions_and_unmounts(spaces: Spaces) -> None:
    spaces.need(I386)
    before = package_versions(I386)
    changed = update_userspace(I386)
    after = package_versions(I386)
    assert {p: (before.get(p), after.get(p)) for p in set(before) | set(after) if before.get(p) != after.get(p)} == changed
    assert json.loads((userspaces_dir() / I386 / META).read_text())["updated_at"] > 0
    assert [u.state for u in find(I386)] == ["ready"]
    assert _mounts_under(spaces.home) == []


# -- kills --------------------------------------------------------------------------------------

_CHILD_TRIAL = """
import sys
from shootout.system.journal import Journal
from shootout.targets.chroot import ChrootTarget
from shootout.userspace import named_userspace_config
t = ChrootTarget(named_userspace_config(sys.argv[1]), Journal())
t.open()
print("open", flush=True)
t.run(["sleep", "61.25"])
"""


def _child_env(home: Path) -> dict[str, str]:
    return {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": str(SRC)}


def _kill_strays(argv: list[str]) -> int:
    killed = 0
    for proc in psutil.process_iter(["cmdline"]):
        if proc.info["cmdline"] == argv:
            proc.kill()
            killed += 1
    return killed


def test_sigkill_during_a_trial_then_recover_leaves_no_mount(spaces: Spaces) -> None:
    spaces.need(I386)
    child = subprocess.Popen([sys.executable, "-c", _CHILD_TRIAL, I386], env=_child_env(spaces.home),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "open", child.stderr.read()
        deadline = time.monotonic() + 30
        while not any(p.info["cmdline"] == ["sleep", "61.25"] for p in psutil.process_iter(["cmdline"])):
            assert time.monotonic() < deadline, "the trial never started"
            time.sleep(0.05)
        assert len(_mounts_under(spaces.home)) >= 7
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    undone, errors = recover()
    assert errors == []
    assert any("proc" in u for u in undone) and any("work directory" in u for u in undone)
    assert _mounts_under(spaces.home) == []
    assert _kill_strays(["sleep", "61.25"]) == 1  # the orphaned trial, in a detached mount
    assert list((userspaces_dir() / ".sessions").iterdir()) == []


_CHILD_CREATE = """
import sys
from shootout.userspace import create_userspace
create_userspace(sys.argv[1], "i386", "bookworm", packages=("make",), progress=lambda m: print(m, flush=True))
"""


def test_killed_create_is_incomplete_and_removable(spaces: Spaces) -> None:
    spaces.need(I386)  # its download cache makes this quick
    name = "killed-i386"
    child = subprocess.Popen([sys.executable, "-c", _CHILD_CREATE, name], env=_child_env(spaces.home),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if "Extracting" in line:
                break
        else:
            pytest.fail(f"create never got to extracting: {child.stderr.read()}")
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


# -- armhf under qemu -----------------------------------------------------------------------------


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
            params = {**w.default_params(), "iterations": 200_000}
            prepared = w.prepare(target, params)
            assert (prepared.facts["binary"]["elf_class"], prepared.facts["binary"]["machine"]) == (32, "arm")
            verify_abi(config, prepared.facts["binary"])
            result = target.run(w.argv(prepared, params), timeout=300)
            assert result.exit_status == 0, result.stderr
            assert w.parse(result, params)["iterations"] > 0
            facts = target.facts()
            assert facts["emulated"] is True and facts["arch"] == "armhf" and facts["uname_m"] == "armv7l"
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
        create_userspace("bogus", "i386", "bogusrelease")
    with pytest.raises(TargetError, match="cannot reach the mirror"):
        create_userspace("nonet", "i386", RELEASE, mirror="http://127.0.0.1:9/debian")
    done = _cli(tmp_path, "create", "bogus", "--arch", "i386", "--release", "bogusrelease")
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
                create_userspace("x", "i386", RELEASE)
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
            filled.append(message)  # the moment debootstrap starts, the disk fills up
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
            create_userspace("full", "i386", RELEASE, packages=("make",), progress=fill_disk)
        assert filled, err.value
        assert "no space left on device" in err.value.message
        assert list_userspaces() == []
        assert not (userspaces_dir() / f"{INCOMPLETE}full").exists()
        assert _mounts_under(small) == [str(small)]  # only the test's own small filesystem
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def test_creating_twice_is_refused(spaces: Spaces) -> None:
    spaces.need(I386)
    with pytest.raises(UsageError, match="already exists"):
        create_userspace(I386, "i386", RELEASE)


# -- the catalogue in a 32-bit userspace ---------------------------------------------------------


def test_every_workload_runs_at_quick_size_in_the_i386_userspace(spaces: Spaces, workload_packages) -> None:
    """Each workload prepares, calibrates and runs one real trial inside i386, with its
    binaries verified 32-bit; a missing tool would fail here, naming its package."""
    from shootout.runner import verify_binaries
    from shootout.workloads.registry import REGISTRY

    spaces.need(I386)
    workload_packages([I386])
    config = userspace_config(RELEASE, "i386")
    failures: dict[str, str] = {}
    with journal() as j:
        target = ChrootTarget(config, j)
        target.open()
        try:
            for name, cls in REGISTRY.items():
                w = cls()
                try:
                    params = cls.quick_params()
                    prepared = w.prepare(target, dict(params))
                    verify_binaries(config, target, w, prepared)
                    params = w.calibrate(target, prepared, dict(params))
                    result = target.run(w.argv(prepared, params), timeout=600)
                    assert result.exit_status == 0, result.stderr_tail(3)
                    values = w.parse(result, params)
                    assert values and all(v > 0 for v in values.values()), values
                    assert all(e.get("elf_class") in (None, 32) for e in prepared.facts["elf"].values()), prepared.facts["elf"]
                except (ShootoutError, AssertionError) as exc:
                    failures[name] = str(exc)[:300]
        finally:
            target.close()
    assert failures == {}
