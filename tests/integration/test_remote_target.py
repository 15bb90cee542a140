"""Targets own their files: a stand-in for a remote machine runs the native suite and the
media workloads end to end through the runner.

Its root is the i386 userspace, seen only inside a mount namespace that a helper process
holds; its /tmp (the work directory) and its cache are private tmpfs there. shootout's own
process cannot see any of its files: every command and every file operation goes through
`nsenter` into that namespace (Target's generic operations, through run()). A workload or
builder that wrote into a target's directories from the host, or handed it a host path,
would fail here.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from shared_spaces import I386, Spaces, mounts_anywhere

from shootout.base.model import Config, RunSettings
from shootout.execution.process import Background, ProcResult, Stdin, run_process
from shootout.execution.tools import CLEAN_PATH
from shootout.measure.runner import Runner, RunRequest
from shootout.places.target import Target
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.catalogue import suite, workload

MOUNT = "/mnt/root"  # where the root is inside the namespace; /mnt itself is a private tmpfs there

# Runs as the namespace's holder: builds the private view, says where it is, then waits.
_HOLDER = f"""
set -e
mount -t tmpfs -o mode=0755 shootout-remote /mnt
mkdir {MOUNT}
mount --bind "$1" {MOUNT}
mount -t proc proc {MOUNT}/proc
mount --bind /sys {MOUNT}/sys
mount --bind /dev {MOUNT}/dev
mount -t tmpfs -o mode=1777 remote-tmp {MOUNT}/tmp
mount -t tmpfs -o mode=0755 remote-cache {MOUNT}/var/cache
echo "ready $$"
exec cat > /dev/null
"""


class PrivateRootTarget(Target):
    """A target reached only by a command prefix, like a machine over SSH; nothing but run()
    and spawn() of its own."""

    def __init__(self, config: Config, root: Path) -> None:
        super().__init__(config)
        self.tag = secrets.token_hex(4)
        # stdin kept open: the holder lives until we close it (or until we die: pdeathsig).
        self.holder = subprocess.Popen(
            ["setpriv", "--pdeathsig", "KILL", "unshare", "--mount", "--propagation", "private", "--fork",
             "--kill-child", "sh", "-c", _HOLDER, "holder", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.holder.stdout is not None
        line = self.holder.stdout.readline().split()
        assert line[:1] == ["ready"], self.holder.stderr.read() if self.holder.stderr else line
        self.pid = int(line[1])
        self.namespace = os.readlink(f"/proc/{self.pid}/ns/mnt")
        self.commands = 0

    def close(self) -> None:
        if self.holder.poll() is None:
            assert self.holder.stdin is not None
            self.holder.stdin.close()
            self.holder.wait(timeout=30)
        super().close()

    def _command(self, argv: Sequence[str], cwd: str | None) -> list[str]:
        self.commands += 1
        return ["nsenter", f"--target={self.pid}", "--mount", "--", "chroot", MOUNT,
                "/usr/bin/env", "-C", cwd or self.workdir(), "--", *argv]

    def workdir(self) -> str:
        return f"/tmp/shootout-remote-{self.tag}"  # exists inside only (made by open())

    def cache_dir(self) -> str:
        return f"/var/cache/shootout-remote-{self.tag}"

    def open(self) -> None:
        result = run_process(self._command(["mkdir", "-p", self.workdir(), self.cache_dir()], "/"),
                             env={"PATH": CLEAN_PATH})
        assert result.exit_status == 0, result.stderr

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
            timeout: float = 3600.0, stdin: Stdin = None, wrap: Sequence[str] = ()) -> ProcResult:
        return run_process([*wrap, *self._command(argv, cwd)], env=self.environment(env), timeout=timeout,
                           stdin=stdin)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> Background:
        return Background(self._command(argv, cwd), env=self.environment(env))


@pytest.fixture(scope="module")
def userspace_root(spaces: Spaces) -> Iterator[Path]:
    spaces.need(I386)
    yield spaces.home / "userspaces" / I386 / "root"


def test_native_suite_and_media_run_in_a_target_whose_files_are_not_here(userspace_root: Path,
                                                                         tmp_path: Path) -> None:
    made: list[PrivateRootTarget] = []

    def factory(config: Config, journal: Journal) -> Target:
        made.append(PrivateRootTarget(config, userspace_root))
        return made[-1]

    names = [*suite("native"), *suite("media")]
    assert set(names) == {"intmix", "ptrtree", "membw", "sha1-sparse", "flac", "lame"}
    # A chroot of the i386 userspace as far as the ABI checks go: its binaries must be 32-bit.
    config = Config(name="remote", target="chroot", userspace=I386, label="private-root stand-in")
    params = {"membw": {"size_mib": 32, "reps": 2}, "sha1-sparse": {"size": 100_000_000},
              "flac": {"minutes": 0.2}, "lame": {"minutes": 0.2}, "ptrtree": {"nodes": 200_000}}
    request = RunRequest([config], [workload(n) for n in names], RunSettings(seed=5, min_rounds=1, max_rounds=1, counters=False),
                         params=params)
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    home_before = sorted(p.name for p in (userspace_root / "var/cache").iterdir())
    run_id = Runner(store, Journal(tmp_path), target_factory=factory).start(request)

    run = store.get_run(run_id)
    trials = store.trials(run_id)
    assert run.status == "complete", [t.error for t in trials if not t.ok]
    assert {t.spec.workload for t in trials if t.ok and t.spec.round == 1} == set(names)
    (target,) = made
    assert target.commands > 50  # everything went through the namespace's door
    facts = run.facts.side("remote")
    assert facts["target"]["dpkg_arch"] == "i386" and facts["target"]["libc"].startswith("glibc")
    for name in ("intmix", "membw"):  # compiled inside, from sources put there, read back as 32-bit
        assert facts["workloads"][name]["binary"]["elf_class"] == 32
        assert facts["workloads"][name]["elf"]["native kernel"]["machine"] == "x86"
    assert facts["workloads"]["flac"]["elf"]["flac"]["elf_class"] == 32
    assert facts["workloads"]["lame"]["versions"]["lame"].startswith("LAME")
    # sized by the target's own facts, probed through it
    assert run.params["membw"]["caches_kib"] and run.params["sha1-sparse"]["size"] == 100_000_000
    # nothing of the target's files is on this filesystem, and a host-side shortcut fails loudly
    assert not Path(target.workdir()).exists() and not Path(target.cache_dir()).exists()
    with pytest.raises(FileNotFoundError):
        Path(target.workdir(), "input.wav").write_bytes(b"")
    assert sorted(p.name for p in (userspace_root / "var/cache").iterdir()) == home_before
    # closing the target ended its namespace and everything mounted in it
    assert target.holder.returncode == 0 and target.namespace not in mounts_anywhere(userspace_root)
