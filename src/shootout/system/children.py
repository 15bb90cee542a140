"""Child processes that must not outlive shootout (an ssh control master, a VM).

The kernel delivers SIGTERM to such a child the moment its parent thread dies, also when
shootout is SIGKILLed; the change journal is the second line, for whatever survives.
The signal follows the thread that forked, not the process: start them from the main thread,
or through popen_dying_with_us(), which forks them from a thread that lasts.
"""

from __future__ import annotations

import ctypes
import queue
import signal
import subprocess
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn for subprocess.Popen: ask the kernel to SIGTERM the child when we die."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


def popen_dying_with_us(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """subprocess.Popen(argv, preexec_fn=die_with_parent, ...), forked by a thread that lives as
    long as the process: the main thread, or, when called from another thread (machines are
    opened in parallel, one thread each, lanes.py), a daemon thread kept for this, since the
    calling thread's end would otherwise end the child with it."""
    if threading.current_thread() is threading.main_thread():
        return subprocess.Popen(argv, preexec_fn=die_with_parent, **kwargs)  # noqa: PLW1509 (prctl only)
    done: Future[subprocess.Popen[bytes]] = Future()
    _forker().put((list(argv), kwargs, done))
    return done.result()


_queue: queue.SimpleQueue[tuple[list[str], dict[str, Any], Future[subprocess.Popen[bytes]]]] | None = None
_started = threading.Lock()


def _forker() -> queue.SimpleQueue[tuple[list[str], dict[str, Any], Future[subprocess.Popen[bytes]]]]:
    global _queue
    with _started:
        if _queue is None:
            _queue = queue.SimpleQueue()
            threading.Thread(target=_fork_forever, args=(_queue,), name="shootout-forker", daemon=True).start()
        return _queue


def _fork_forever(requests: queue.SimpleQueue[tuple[list[str], dict[str, Any], Future[subprocess.Popen[bytes]]]]) -> None:
    while True:
        argv, kwargs, done = requests.get()
        try:
            done.set_result(subprocess.Popen(argv, preexec_fn=die_with_parent, **kwargs))  # noqa: PLW1509 (prctl only)
        except Exception as exc:  # noqa: BLE001 (handed to the caller, who raises it)
            done.set_exception(exc)
