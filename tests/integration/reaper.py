"""The test process as a child subreaper (prctl PR_SET_CHILD_SUBREAPER): every process that a
command under test starts and leaves behind is re-parented to the test instead of init, so
"nothing of it is alive" is checked on the process tree itself, not by a name pattern over
the machine (other jobs may run Chromium or qemu too).
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psutil

_PR_SET_CHILD_SUBREAPER = 36


def _set(on: bool) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _children() -> list[psutil.Process]:
    return psutil.Process().children(recursive=True)


def describe(proc: psutil.Process) -> str:
    try:
        return f"{proc.pid} {' '.join(proc.cmdline())[:160]}"
    except psutil.Error:
        return f"{proc.pid} (gone)"


@contextmanager
def subreaper() -> Iterator[Callable[[], list[str]]]:
    """Yields left(): the live (not zombie) descendants of this process that were not there
    when the block began — call it when the commands the test started have returned. On
    leaving, what is left is killed and every orphan reaped."""
    before = {p.pid for p in _children()}
    _set(True)

    def left() -> list[str]:
        found = []
        for proc in _children():
            try:
                if proc.pid not in before and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(describe(proc))
            except psutil.NoSuchProcess:
                pass
        return found

    try:
        yield left
    finally:
        _set(False)
        for proc in _children():
            if proc.pid not in before:
                try:
                    proc.send_signal(signal.SIGKILL)
                except psutil.NoSuchProcess:
                    pass
        for proc in psutil.Process().children():  # orphans re-parented here: reap them
            if proc.pid not in before:
                try:
                    os.waitpid(proc.pid, 0)
                except ChildProcessError:
                    pass  # a child the test waited for itself
