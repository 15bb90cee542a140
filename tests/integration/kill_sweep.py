"""What a SIGKILLed `shootout run` must not leave behind, shared by the kill tests of each family
(test_storage_scratch_runs, test_config_parts, test_net, test_reserved_cpus): the run's work
directories on /dev/shm, its journal files, no task or IRQ left on other CPUs than before (its
reserved CPUs), and, once `run --resume last` has completed it, no (round, workload,
configuration) measured twice.

A run's work directories are found by watching its processes (their TMPDIR and cwd, which the
host target sets to its work directory), never by a name pattern: other runs on this machine
have theirs on /dev/shm too.
"""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

SHM = "/dev/shm/"


def cpu_state() -> dict[str, str]:
    """Every user task's allowed CPUs (by thread id and start time: a reused id is another task),
    every IRQ's affinity and the reservation's lock file, to compare before a run and after its
    undo. Kernel threads are left out: an IRQ's thread follows the CPU the kernel picks for it,
    which may change."""
    from shootout.system import affinity, machinelock

    lock = machinelock.lock_file("reserved-cpus")  # held while reserved, deleted after
    state: dict[str, str] = {str(lock): "there" if lock.exists() else "gone"}
    for tid in affinity.tasks():
        stat, cpus = affinity.task_stat(tid), affinity.allowed(tid)
        if stat is not None and cpus is not None and not stat[0] & affinity.PF_KTHREAD:
            state[f"task {tid} started {stat[1]}"] = affinity.format_cpulist(cpus)
    for path in [Path("/proc/irq/default_smp_affinity"), *Path("/proc/irq").glob("*/smp_affinity")]:
        try:
            state[str(path)] = path.read_text().strip()
        except OSError:
            continue
    return state


def cpus_changed(before: dict[str, str]) -> dict[str, tuple[str, str]]:
    """What runs on other CPUs than before (of what is still there): empty once all is undone.
    An IRQ that gained CPUs is left out: a reservation only narrows IRQs, and this VM's kernel
    was seen widening a virtio queue's IRQ (vsock's tx, "1" to "3") mid-test on its own."""
    from shootout.system.affinity import parse_mask

    after = cpu_state()
    changed = {key: (was, after[key]) for key, was in before.items() if key in after and after[key] != was}
    return {key: (was, now) for key, (was, now) in changed.items()
            if not (key.endswith("/smp_affinity") and parse_mask(now) > parse_mask(was))}


def _workdir(path: str | None) -> str | None:
    """/dev/shm/shootout-X of a path at or under it."""
    if not path or not path.startswith(SHM + "shootout-"):
        return None
    return SHM + path[len(SHM):].split("/")[0]


class Watched:
    """A `shootout run` started by the test, and every work directory its processes were seen using."""

    def __init__(self, child: subprocess.Popen[str]) -> None:
        self.child = child
        self.workdirs: set[str] = set()
        self.said = ""  # its stderr, once killed

    def look(self) -> None:
        try:
            processes = psutil.Process(self.child.pid).children(recursive=True)
        except psutil.Error:
            return
        for proc in processes:
            try:
                found = [_workdir(proc.cwd()), _workdir(proc.environ().get("TMPDIR"))]
            except psutil.Error:
                continue
            self.workdirs |= {d for d in found if d}
        self.workdirs |= {str(p) for p in Path(SHM).glob(f"shootout-{self.child.pid}-*")}

    def until(self, done: Callable[[], bool], what: str, timeout: float = 300) -> None:
        """Watch until done() holds; the run must still be running then."""
        deadline = time.monotonic() + timeout
        while True:
            self.look()
            if done():
                return
            if self.child.poll() is not None:
                raise AssertionError(f"the run ended before {what}: {self.child.communicate()[1][-2000:]}")
            assert time.monotonic() < deadline, f"never saw {what}"
            time.sleep(0.05)

    def kill(self) -> None:
        self.look()
        self.child.send_signal(signal.SIGKILL)
        self.said = self.child.communicate(timeout=60)[1] or ""

    def finish(self, timeout: float = 900) -> str:
        """Watch until the run exits; its stderr (it must exit 0)."""
        deadline = time.monotonic() + timeout
        while self.child.poll() is None:
            self.look()
            assert time.monotonic() < deadline, "the run did not finish"
            time.sleep(0.05)
        _, stderr = self.child.communicate()
        assert self.child.returncode == 0, stderr[-3000:]
        return stderr

    def workdirs_left(self) -> list[str]:
        return sorted(d for d in self.workdirs if Path(d).exists())


_started: list[Watched] = []


def start(shootout, *args: str) -> Watched:  # noqa: ANN001  (conftest's Shootout)
    watched = Watched(shootout.popen(*args))
    _started.append(watched)
    return watched


@contextmanager
def cleaning_up(shootout) -> Iterator[None]:  # noqa: ANN001
    """However the test ends, what its runs left is undone (doctor) and the work directories they
    were seen using are removed, so that a failing test leaves nothing on the shared machine."""
    _started.clear()
    try:
        yield
    finally:
        for watched in _started:
            if watched.child.poll() is None:
                watched.kill()
        shootout("doctor")
        for watched in _started:
            for path in watched.workdirs:
                shutil.rmtree(path, ignore_errors=True)
        _started.clear()


def journals(shootout) -> list[Path]:  # noqa: ANN001
    return sorted((shootout.home / "journal").glob("*.jsonl"))


def trial_keys(db: Path) -> list[tuple[int, str, str]]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("select round, workload, config from trials").fetchall()
    except sqlite3.OperationalError:  # the schema is not made yet
        return []


def resumed(shootout) -> Watched:  # noqa: ANN001
    """`run --resume last`, started (a test may kill it too)."""
    return start(shootout, "run", "--resume", "last", "--db", shootout.db)


def resume(shootout) -> tuple[Watched, str]:  # noqa: ANN001
    """`run --resume last` to its end: it completes, measures no trial twice, leaves no journal."""
    before = trial_keys(shootout.home / "results.db")
    watched = resumed(shootout)
    stderr = watched.finish()
    after = trial_keys(shootout.home / "results.db")
    twice = [key for key, n in Counter(after).items() if n > 1]
    assert twice == [], f"measured twice: {twice}"
    assert set(before) <= set(after) and len(after) > len(before)
    with sqlite3.connect(shootout.home / "results.db") as conn:
        assert conn.execute("select status from runs order by id desc limit 1").fetchone()[0] == "complete"
    assert journals(shootout) == []
    assert watched.workdirs_left() == []
    return watched, stderr
