"""A command returns only once everything it started has exited, also what left its process
group: a process in a session of its own (as Chromium and its crash handlers start) and that
session's group, found by the command's environment marker (targets.tree)."""

from __future__ import annotations

import os
import time

import psutil

from shootout.targets.process import Background, run_process

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
