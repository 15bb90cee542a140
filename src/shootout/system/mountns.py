"""A private mount namespace for this process, so the kernel frees a run's mounts when it dies.

The first time a process mounts anything (a chroot session, a scratch filesystem), the
calling thread moves into a new mount namespace whose root is a *slave* of the host's:
mounts made by others still appear in it, ours never propagate out. Threads and processes
started from then on inherit it. When the last process in it exits (shootout itself, and
the trials, which die with it: see ChrootTarget), the kernel unmounts everything in it, so
a SIGKILLed run leaves no mount behind even before `shootout doctor` runs. Mounts are
still recorded in the change journal: undoing them early (close(), Ctrl-C) is normal
cleanup, and replaying an old journal in the host's namespace stays correct.

Do this only after replaying leftover journals (journal.recover): their mounts live in the
host's namespace, where their undo must run.
"""

from __future__ import annotations

import ctypes
import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from shootout.base.errors import TargetError

CLONE_FS = 0x00000200
CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_SLAVE = 1 << 19

_lock = threading.Lock()
_namespace: str | None = None  # "mnt:[inode]" of the namespace this process made
_fd: int | None = None  # keeps it open for threads that join later
_host_fd: int | None = None  # the mount namespace this process started in, kept before leaving it
T = TypeVar("T")


def _current() -> str:
    return os.readlink("/proc/thread-self/ns/mnt")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _fail(what: str, err: int | None = None) -> TargetError:
    err = ctypes.get_errno() if err is None else err
    return TargetError(f"cannot {what}: {os.strerror(err)}", "run as root (mounts need CAP_SYS_ADMIN)")


def root_is_mount_point(mountinfo: str) -> bool:
    """Whether a mount sits at / of this process (mountinfo's fifth field is relative to its root)."""
    return any(len(fields) > 4 and fields[4] == "/" for fields in map(str.split, mountinfo.splitlines()))


def slave_failure(err: int, mountinfo: str | None) -> TargetError:
    """Why / could not be made a slave mount: in a chroot into a plain directory there is no mount
    at / to change (EINVAL), and the mount that holds it is out of reach. mountinfo None: unreadable."""
    if err == errno.EINVAL and mountinfo is not None and not root_is_mount_point(mountinfo):
        return TargetError("cannot keep shootout's mounts private: / is not a mount point here (a chroot into a "
                           "directory), so it cannot be made a slave of the host's mounts",
                           "bind-mount the chroot's directory onto itself before entering it: mount --bind DIR DIR; "
                           "or run shootout on the host, in a container or in a VM")
    return _fail("make / a slave mount in the private namespace", err)


def _mountinfo() -> str | None:
    try:
        return Path("/proc/thread-self/mountinfo").read_text()
    except OSError:
        return None  # unreadable (no /proc in the chroot): the kernel's reason, not a guess


def private_mounts() -> str:
    """Put the calling thread in this process's private mount namespace (made on first call).

    Returns the namespace id ("mnt:[...]"). Idempotent; a thread started before the first
    call joins the namespace when it calls this itself.
    """
    global _namespace, _fd, _host_fd
    with _lock:
        if _namespace is not None and _current() == _namespace:
            return _namespace
        libc = _libc()
        if _namespace is None:
            _host_fd = os.open("/proc/thread-self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
            if libc.unshare(CLONE_NEWNS) != 0:
                raise _fail("make a private mount namespace")
            # Without this, mounts under a shared mount would still propagate to the host.
            if libc.mount(None, b"/", None, MS_REC | MS_SLAVE, None) != 0:
                raise slave_failure(ctypes.get_errno(), _mountinfo())
            _namespace = _current()
            _fd = os.open("/proc/thread-self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        else:
            # A thread shares its filesystem context with the others; it must have its own
            # before it can enter another mount namespace.
            if libc.unshare(CLONE_FS) != 0 or libc.setns(_fd, CLONE_NEWNS) != 0:
                raise _fail("join the private mount namespace")
        return _namespace


def in_private_mounts() -> bool:
    """True when the calling thread is in this process's private mount namespace."""
    return _namespace is not None and _current() == _namespace


def in_host_mounts(action: Callable[[], T]) -> T:
    """Run action, and the processes it starts, in the mount namespace this process started in:
    for the few mounts that must be seen outside shootout (a network namespace named under
    /run/netns). A thread of its own enters that namespace and ends with the action."""
    if _host_fd is None:
        return action()  # never left it
    outcome: dict[str, object] = {}

    def enter_and_act() -> None:
        libc = _libc()
        try:
            if libc.unshare(CLONE_FS) != 0 or libc.setns(_host_fd, CLONE_NEWNS) != 0:
                raise _fail("enter the mount namespace shootout started in")
            outcome["value"] = action()
        except BaseException as exc:  # noqa: BLE001 (raised again in the caller's thread)
            outcome["error"] = exc

    worker = threading.Thread(target=enter_and_act, name="host-mounts")
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
