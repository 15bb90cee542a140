"""A target's file operations: the generic ones (through run(), as a remote target has them)
and the direct ones of a local target must behave the same; background processes stop."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from shootout.base.errors import TargetError, UsageError
from shootout.base.model import Config
from shootout.execution.process import Background, ProcResult, Stdin, run_process
from shootout.places.host import HostTarget
from shootout.places.target import Target


class CommandsOnly(Target):
    """Runs on this machine, but every file operation goes through run() (Target's own)."""

    def __init__(self) -> None:
        super().__init__(Config(name="commands-only"))
        self.dir = tempfile.mkdtemp(prefix="shootout-test-")
        self.commands: list[str] = []

    def workdir(self) -> str:
        return self.dir

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        super().close()

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
            timeout: float = 3600.0, stdin: Stdin = None, wrap: Sequence[str] = ()) -> ProcResult:
        self.commands.append(argv[0])
        return run_process([*wrap, *argv], env=self.environment(env), cwd=cwd or self.dir, timeout=timeout, stdin=stdin)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> Background:
        return Background(argv, env=self.environment(env), cwd=cwd or self.dir)


@pytest.fixture(params=["through-run", "local"])
def target(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Target]:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    t: Target = CommandsOnly() if request.param == "through-run" else HostTarget(Config(name="host"))
    yield t
    t.close()


def test_put_read_exists_remove(target: Target, tmp_path: Path) -> None:
    base = target.workdir()
    data = bytes(range(256)) * 1000  # binary, with NULs and invalid UTF-8
    assert target.put(data, f"{base}/a/b/blob") == f"{base}/a/b/blob"  # parents made
    assert target.read(f"{base}/a/b/blob") == data
    assert target.read(f"{base}/a/b/blob", 300) == data[:300]
    source = tmp_path / "src.bin"
    source.write_bytes(b"from a host file\n")
    target.put(source, f"{base}/copy")
    assert target.read(f"{base}/copy") == b"from a host file\n"
    assert target.exists(f"{base}/copy") and not target.exists(f"{base}/nothing")
    assert not target.exists(f"{base}/copy.part")  # written atomically
    target.remove(f"{base}/a")
    assert not target.exists(f"{base}/a/b/blob")
    with pytest.raises(TargetError) as err:
        target.read(f"{base}/nothing")
    assert "nothing" in str(err.value) and "\n" not in str(err.value)


def test_put_tree_copies_and_replaces(target: Target, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "f.txt").write_text("one")
    os.symlink("sub/f.txt", tree / "link")
    dest = f"{target.workdir()}/t"
    target.put_tree(tree, dest)
    assert target.read(f"{dest}/link") == b"one"
    assert target.run(["test", "-L", f"{dest}/link"]).exit_status == 0  # a link stays a link
    (tree / "sub" / "f.txt").write_text("two")
    (tree / "new").write_text("n")
    target.put_tree(tree, dest)
    assert target.read(f"{dest}/sub/f.txt") == b"two" and target.exists(f"{dest}/new")


def test_mkdir_which_and_scratch(target: Target) -> None:
    assert target.mkdir(f"{target.workdir()}/x/y") == f"{target.workdir()}/x/y"
    assert target.exists(f"{target.workdir()}/x/y")
    assert target.which("sh") in ("/bin/sh", "/usr/bin/sh")
    assert target.which("no-such-tool-here") is None
    tmpfs = target.scratch("tmpfs")
    assert tmpfs.startswith(target.workdir()) and target.exists(tmpfs)
    with pytest.raises(UsageError, match="unknown scratch kind"):
        target.scratch("floppy")


def test_generic_operations_really_go_through_run() -> None:
    t = CommandsOnly()
    try:
        t.put(b"x", f"{t.dir}/f")
        t.read(f"{t.dir}/f")
        t.exists(f"{t.dir}/f")
        assert t.commands == ["sh", "sh", "test"]
        with pytest.raises(TargetError, match="cannot use scratch storage"):
            t.scratch("disk")  # a target not on this machine has no host directory to offer
    finally:
        t.close()


def test_a_failed_command_is_one_line_with_its_last_stderr_line() -> None:
    """Run-or-raise, one way (ProcResult.check): a file operation's TargetError and a workload's
    preparation WorkloadError both quote the command's last line of stderr, else its exit status."""
    from shootout.base.errors import WorkloadError
    from shootout.workloads.shell import run_checked

    t = CommandsOnly()
    try:
        (Path(t.dir) / "file").write_text("x")
        with pytest.raises(TargetError) as refused:
            t.mkdir(f"{t.dir}/file/sub")  # a directory under a file
        assert str(refused.value).startswith(f"cannot make directory {t.dir}/file/sub in commands-only: mkdir: ")
        assert "\n" not in str(refused.value) and str(refused.value).endswith(
            "(check the free space and permissions inside the target)")
        argv = ["sh", "-c", "echo first >&2; echo " + "y" * 300 + " >&2; exit 3"]
        with pytest.raises(WorkloadError) as failed:
            run_checked(t, argv, "step")
        assert str(failed.value) == (f"step failed in commands-only: {'y' * 200} "  # both cut to 200 characters
                                     f"(run the command by hand: {' '.join(argv)[:200]})")
        with pytest.raises(WorkloadError, match="^step failed in commands-only: exit 4 "):
            run_checked(t, ["sh", "-c", "exit 4"], "step")
        assert run_checked(t, ["sh", "-c", "echo ok"], "step").stdout == "ok\n"
    finally:
        t.close()


def test_disk_scratch_of_the_host_is_made_lazily_and_removed_on_close(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    host = HostTarget(Config(name="host"))
    try:
        assert host.scratch_facts() is None  # nothing made until asked
        path = host.scratch("disk")
        assert host.scratch("disk") == path and Path(path).is_dir() and path.startswith("/var/tmp/")
        host.put(b"data", f"{path}/file")
    finally:
        host.close()
    assert not Path(path).exists()
    assert list((tmp_path / "home" / "journal").glob("*.jsonl")) == []  # undone, nothing pending


def test_stdin_reaches_the_command(target: Target, tmp_path: Path) -> None:
    assert target.run(["wc", "-c"], stdin=b"12345").stdout.strip() == "5"
    big = tmp_path / "big"
    big.write_bytes(b"z" * 3_000_000)
    assert target.run(["wc", "-c"], stdin=big).stdout.strip() == "3000000"


def test_spawn_runs_in_the_background_and_stop_ends_its_group(target: Target) -> None:
    flag = f"{target.workdir()}/started"
    bg = target.spawn(["sh", "-c", f"sleep 30 & echo up; touch {flag}; wait"])
    deadline = time.monotonic() + 10
    while not target.exists(flag):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert bg.alive()
    t0 = time.monotonic()
    result = bg.stop()
    assert time.monotonic() - t0 < 5 and not bg.alive()
    assert "up" in result.stdout and result.exit_status != 0
    assert bg.stop() is result


_KILLED = """
import sys, time
from pathlib import Path
from shootout.base.model import Config
from shootout.places.target import Target
from shootout.places.host import HostTarget

class UploadBlocks(HostTarget):
    put_tree = Target.put_tree  # the generic one (through a command), as a VM or ssh target has it

    def _checked(self, argv, what, stdin=None, timeout=600.0):
        if isinstance(stdin, Path):  # the tree's tar, on its way: report it and be killed here
            print(stdin, flush=True)
            time.sleep(600)
        return super()._checked(argv, what, stdin, timeout)

target = UploadBlocks(Config(name="host"))
print(target.workdir(), flush=True)
tree = Path(sys.argv[1])
target.put_tree(tree, target.workdir() + "/t")
"""


def test_a_killed_target_leaves_its_work_directory_and_upload_only_until_recover(tmp_path: Path) -> None:
    """The host's work directory (on /dev/shm) and the tar a generic put_tree uploads go through
    the journal: after SIGKILL, recover() (doctor, the next run) removes them."""
    import signal
    import subprocess
    import sys

    from shootout.system.journal import recover

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "f").write_bytes(b"x" * 100_000)
    home = tmp_path / "home"
    env = {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    child = subprocess.Popen([sys.executable, "-c", _KILLED, str(tree)], env=env, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    workdir, packed = Path(child.stdout.readline().strip()), Path(child.stdout.readline().strip())
    # A child that died before printing gives Path("") == ".": the cleanup below would delete the
    # current directory (the checkout the tests run from).
    assert workdir.is_absolute() and packed.is_absolute(), "the child printed no paths (see its stderr)"
    try:
        assert workdir.is_dir() and packed.stat().st_size > 100_000
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert workdir.is_dir() and packed.exists()  # a kill undoes nothing by itself
        os.environ["SHOOTOUT_HOME"], saved = str(home), os.environ.get("SHOOTOUT_HOME")
        try:
            undone, errors = recover()
        finally:
            os.environ.pop("SHOOTOUT_HOME") if saved is None else os.environ.__setitem__("SHOOTOUT_HOME", saved)
        assert errors == [] and any(u.startswith("create the work directory") for u in undone), undone
        assert not workdir.exists() and not packed.exists()
        assert list((home / "journal").glob("*.jsonl")) == []
    finally:
        if child.poll() is None:
            child.kill()
        shutil.rmtree(workdir, ignore_errors=True)
        packed.unlink(missing_ok=True)
