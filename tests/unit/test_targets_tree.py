"""A command returns only once everything it started has exited, also what left its process
group: a process in a session of its own (as Chromium and its crash handlers start) and that
session's group, found by the command's environment marker (execution.tree)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil

from shootout.execution.process import Background, run_process
from shootout.system.journal import recover

SRC = Path(__file__).resolve().parents[2] / "src"

ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
# A daemon in a session of its own (setsid), with a child in that session's group that
# clears its environment (env -i), as a Chromium zygote overwrites its own: found by its group.
ESCAPE = ("setsid sh -c 'env -i sleep 300 & exec sleep 300' </dev/null >/dev/null 2>&1 & "
          "sleep 0.3; echo \"$!\"")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _session(leader: int) -> list[int]:
    """Live processes of the session a leader started (it may be gone; its members keep its id)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if os.getsid(proc.pid) == leader and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except (ProcessLookupError, psutil.Error):
            continue
    return found


def test_a_command_returns_after_what_it_started_in_another_session_has_exited():
    t0 = time.monotonic()
    done = run_process(["sh", "-c", ESCAPE], env=ENV, timeout=60)
    leader = int(done.stdout.strip())
    assert _session(leader) == [] and not _alive(leader)
    assert time.monotonic() - t0 < 30  # killed, not waited out


def test_a_timed_out_command_takes_what_it_started_in_another_session_along():
    done = run_process(["sh", "-c", ESCAPE + "; sleep 300"], env=ENV, timeout=2)
    assert done.timed_out
    assert _session(int(done.stdout.strip())) == []


def test_a_stopped_background_command_takes_its_escaped_daemon_along():
    bg = Background(["sh", "-c", ESCAPE + "; sleep 300"], env=ENV)
    time.sleep(1.0)
    result = bg.stop(grace_s=0.5)
    assert _session(int(result.stdout.strip())) == []


def test_an_unrelated_process_with_another_marker_is_left_alone():
    other = Background(["sleep", "300"], env=ENV)
    try:
        run_process(["sh", "-c", ESCAPE], env=ENV, timeout=60)
        assert other.alive()
    finally:
        other.stop(grace_s=0.1)


def test_doctor_ends_what_the_commands_of_a_killed_run_left_running(tmp_path):
    """A run journals its marker prefix; SIGKILLed while a command (and a daemon it started in a
    session of its own) runs, recover() (what `shootout doctor` does) ends them all."""
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from shootout.system.journal import Journal
        from shootout.execution.tree import run_prefix
        from shootout.execution.process import Background
        Journal(Path({str(tmp_path)!r})).record("the run's commands", {{"end_marked": run_prefix()}})
        bg = Background(["sh", "-c", {ESCAPE + "; sleep 300"!r}], env={ENV!r})
        print(bg.pid, flush=True)
        time.sleep(300)
    """)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    child = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    command = int(child.stdout.readline())
    time.sleep(1.0)  # the daemon's own session is up
    sessions = {os.getsid(p.pid) for p in psutil.Process(command).children(recursive=True)}
    assert len(sessions) == 2  # the command's, and the daemon's own
    child.kill()
    child.wait()
    assert _alive(command)  # a SIGKILLed run stops nothing by itself
    undone, errors = recover(tmp_path)
    assert errors == [] and undone == ["the run's commands"]
    assert not _alive(command)
    assert all(_session(s) == [] for s in sessions), sessions
