"""Kill sweep of the browser family: SIGKILL of `shootout run -c host --aa -w browser` while the
browser workload is being set up (its calibration runs the browser), then of its resumed run
inside a measured trial; after each kill `shootout doctor`, then `run --resume last`. After
each: no process of the run is alive (checked on the process tree: this test is a child
subreaper, so whatever the run left is re-parented here), no work directory of the run on
/dev/shm, no mount of it, no journal of it; the last resumed run completes with every trial once.

The work directory's removal by doctor depends on the host target journalling it.
Needs root (CI runs as root) and Chromium on the host (./install.sh --test).
"""

from __future__ import annotations

import re
import signal
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
from conftest import (
    Shootout,  # at import: inside a test, `conftest` may be another directory's
)
from reaper import subreaper

from shootout.workloads.browser.workload import CHROMIUM

TOML = """
[params.browser]
sets = ["todo"]
frameworks = ["vanilla", "preact"]
heavy_sections = 8
items = 30
todo_target_ms = 200
"""
_PROFILE = re.compile(r"--user-data-dir=(/dev/shm/shootout-[^/]+)/")


class Lines:
    """A stream of the run's output, read as it comes (progress lines say where the run is)."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:  # type: ignore[no-untyped-def]
        for line in stream:
            self.lines.append(line)

    def seen(self, text: str) -> bool:
        return any(text in line for line in self.lines)


def _browser_workdir(pid: int) -> str | None:
    """The host work directory of the run's browser, once one of its Chromium processes runs."""
    for proc in psutil.Process(pid).children(recursive=True):
        try:
            if (found := _PROFILE.search(" ".join(proc.cmdline()))) is not None:
                return found.group(1)
        except psutil.Error:
            continue
    return None


def _journals(home: Path, pid: int) -> list[str]:
    return [p.name for p in (home / "journal").glob(f"{pid}-*.jsonl")]


def _mounts(*paths: str) -> list[str]:
    text = Path("/proc/self/mountinfo").read_text()
    return [line for line in text.splitlines() if any(p in line for p in paths)]


def _killed_at(shootout: Shootout, child, moment: str, tmp_path: Path, left) -> None:  # type: ignore[no-untyped-def]
    """Wait for the moment in this run, SIGKILL it, run doctor: nothing of it is left."""
    assert child.stdout is not None and child.stderr is not None
    progress, errors = Lines(child.stdout), Lines(child.stderr)  # progress: on stdout in a pipe
    deadline = time.monotonic() + 300
    workdir = None
    while time.monotonic() < deadline and child.poll() is None:
        # set-up: the calibration's browser (before the warm-up); trial: a measured round's
        if moment == "trial" and not progress.seen("round 1"):
            time.sleep(0.1)
            continue
        if (workdir := _browser_workdir(child.pid)) is not None:
            break
        time.sleep(0.05)
    assert workdir is not None, "".join(progress.lines + errors.lines)[-2000:]
    if moment == "set-up":
        assert not progress.seen("warm-up"), "too late: the warm-up had begun"
    child.send_signal(signal.SIGKILL)
    child.wait()
    doctor = shootout("doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert left() == []  # not a moment later: at once
    assert not Path(workdir).exists()
    assert _journals(shootout.home, child.pid) == []
    assert _mounts(workdir, str(tmp_path)) == []


def test_sigkill_of_a_browser_run_leaves_nothing_and_resume_completes(require_root, cached_home, tmp_path):
    """Killed while set up, then its resumed run killed inside a trial, then resumed to the end."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed on the host: apt-get install chromium (./install.sh --test)")
    shootout = Shootout(cached_home)  # its npm packages and inputs are cached there
    db = f"sqlite:///{tmp_path / 'results.db'}"
    toml = tmp_path / "browser.toml"
    toml.write_text(TOML)
    with subreaper() as left:
        child = shootout.popen("run", "-f", str(toml), "-c", "host", "--aa", "-w", "browser", "--max-rounds", "6",
                               "--budget", "10m", "--partial", "--db", db)
        _killed_at(shootout, child, "set-up", tmp_path, left)
        resumed = shootout.popen("run", "--resume", "last", "--db", db)
        _killed_at(shootout, resumed, "trial", tmp_path, left)

        resumed = shootout.popen("run", "--resume", "last", "--db", db)
        out, err = resumed.communicate(timeout=900)
        assert resumed.returncode == 0, err[-2000:]
        assert left() == []
        assert _journals(cached_home, resumed.pid) == []
        assert not list(Path("/dev/shm").glob(f"shootout-{resumed.pid}-*"))
    with sqlite3.connect(tmp_path / "results.db") as con:
        status = con.execute("SELECT status FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0]
        done = Counter(con.execute("SELECT round, workload, config FROM trials").fetchall())
    assert status == "complete"
    assert done and max(done.values()) == 1  # no (round, workload, configuration) measured twice
