"""Child processes that must not outlive shootout (an ssh control master, a VM).

The kernel delivers SIGTERM to such a child the moment its parent thread dies, also when
shootout is SIGKILLed; the change journal is the second line, for whatever survives.
Start them from the main thread: the signal follows the thread that forked, not the process.
"""

from __future__ import annotations

import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn for subprocess.Popen: ask the kernel to SIGTERM the child when we die."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
