"""One network namespace, held by a process (holder.py), never pinned unless asked.

Journalled: the namespace itself (undo: stop its holder) and every change made in it through
change() (a veth pair, a qdisc, an nft table, an XDP program; undo: the command that removes
it, run inside the namespace). The holder empties its namespace by itself when shootout dies,
so after a SIGKILL the kernel has usually freed everything before `shootout doctor` runs;
each undo is guarded to act only while the namespace it names still exists (its holder's
/proc/PID/ns/net still reads the recorded inode), never on a process that reused the PID.

Host-side commands (ip, ethtool, nft, tc: the machine's tools, which configure the kernel)
run inside it with `nsenter --net=/proc/PID/ns/net`. Programs of a configuration's userspace
enter it the same way from inside the target (see `enter()`): a chroot target's /proc is the
kernel's procfs of shootout's own PID namespace, so the holder's /proc/PID is there even though
every chroot command runs in a PID namespace of its own.
"""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from shootout.base.errors import TargetError, UsageError, require_root
from shootout.execution.tools import host_tool
from shootout.system.journal import Journal
from shootout.system.mountns import in_host_mounts

HOLDER = Path(__file__).with_name("holder.py")
PIN_DIR = Path("/run/netns")
START_TIMEOUT_S = 10.0


def enter(path: str) -> str:
    """Shell prefix that runs a command of the target's userspace inside the namespace at path.

    nsenter is the userspace's own (util-linux, Essential in Debian).
    """
    return f"nsenter --net={path} --"


# sh -c GUARD guard PID INODE ARGV...: run ARGV only while the holder PID holds namespace INODE
_GUARD = ('p=$1 i=$2; shift 2; [ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$i" ] || exit 0; '
          'grep -qa holder.py /proc/$p/cmdline || exit 0; exec "$@"')


class NetNamespace:
    def __init__(self, label: str, journal: Journal) -> None:
        self.label = label  # for messages: "tcp-veth a"
        self.journal = journal
        self._proc: subprocess.Popen[bytes] | None = None
        self.inode = ""  # "net:[4026532178]": identifies it while it lives
        self._entries: list[int] = []  # journal entries of this namespace, oldest first

    @property
    def pid(self) -> int:
        assert self._proc is not None, "namespace not started"
        return self._proc.pid

    @property
    def path(self) -> str:
        return f"/proc/{self.pid}/ns/net"

    def start(self) -> NetNamespace:
        require_root("creating a network namespace", "run shootout as root (network namespaces, veth, nft, tc, XDP)")
        unshare = host_tool("unshare", "util-linux")
        host_tool("nsenter", "util-linux")
        # Its own session: Ctrl-C in the terminal must not reach it before shootout cleans up.
        self._proc = subprocess.Popen([unshare, "--net", "--", sys.executable, "-I", "-S", str(HOLDER)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      start_new_session=True)
        ready, _, _ = select.select([self._proc.stdout], [], [], START_TIMEOUT_S)
        line = self._proc.stdout.readline().decode().split() if ready and self._proc.stdout else []
        if not line or line[0] != "ready":
            reason = self._failure()
            self.close()
            raise TargetError(f"cannot create the network namespace for {self.label}: {reason}",
                              "check that this kernel has network namespaces (CONFIG_NET_NS)")
        self.inode = line[1]
        # Written down once it exists (its PID and inode name it); until then, and after a
        # SIGKILL anyway, the holder's pipe is what removes it.
        self._entries.append(self.journal.record(
            f"network namespace for {self.label} ({self.inode}, held by pid {self.pid})",
            self._guarded(["kill", str(self.pid)])))
        return self

    def _guarded(self, argv: Sequence[str]) -> dict[str, object]:
        """An undo step that runs argv only while this namespace still exists."""
        return {"argv": ["sh", "-c", _GUARD, "guard", str(self.pid), self.inode, *argv], "tolerate_failure": True}

    def change(self, argv: Sequence[str], undo: Sequence[str], what: str, *, stdin: str | None = None) -> None:
        """Make a change inside the namespace (a host tool's command), journalled with the
        command that undoes it (also run inside, by the host's nsenter)."""
        nsenter = host_tool("nsenter", "util-linux")
        entry = self.journal.record(f"{what} in the {self.label} namespace ({self.inode})",
                                    self._guarded([nsenter, f"--net={self.path}", "--", *undo]))
        self._entries.append(entry)
        try:
            self.run(argv, what, stdin=stdin)
        except BaseException:
            self._entries.remove(entry)
            self.journal.undo_entry(entry)
            raise

    def _failure(self) -> str:
        proc = self._proc
        if proc is None or proc.stderr is None or proc.poll() is None:
            return "the holder process did not start in time"
        lines = proc.stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"the holder exited with status {proc.returncode}"

    def run(self, argv: Sequence[str], what: str, *, stdin: str | None = None, check: bool = True) -> str:
        """Run a host tool inside the namespace; a failure is a one-line TargetError."""
        command = [host_tool("nsenter", "util-linux"), f"--net={self.path}", "--", *argv]
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            reason = (done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").splitlines()[-1]
            raise TargetError(f"{what} failed in the {self.label} namespace: {reason}",
                              f"run by hand to see more: {' '.join(argv)}"[:240])
        return done.stdout

    def pin(self, name: str) -> None:
        """Name it under /run/netns (for `ip netns exec` while a run is on); undone via the journal."""
        if (PIN_DIR / name).exists():
            raise UsageError(f"a network namespace named {name!r} already exists",
                             f"choose another pin name, or remove it: ip netns delete {name}")
        ip = host_tool("ip", "iproute2")
        # In the mount namespace shootout started in, so that others see the name too
        undo = {"argv": [ip, "netns", "delete", name], "tolerate_failure": True, "host_mounts": True}
        try:
            entry = in_host_mounts(lambda: self.journal.run(f"network namespace pinned as {name}",
                                                            [ip, "netns", "attach", name, str(self.pid)], undo))
        except subprocess.CalledProcessError as exc:
            raise TargetError(f"cannot pin the {self.label} namespace as {name}: {exc.stderr.strip()}",
                              "check /run/netns") from None
        self._entries.append(entry)

    def close(self) -> list[str]:
        """Undo what was made inside (newest first), unpin, then close the holder's pipe: it
        kills what is left inside, exits, and the kernel frees the rest (the last entry's
        guarded kill then finds nothing to do). Returns what could not be undone."""
        first, *inside = self._entries or [0]
        errors = [error for entry in reversed(inside) for error in self.journal.undo_entry(entry)]
        proc, self._proc = self._proc, None
        if proc is not None:
            self._stop(proc)
        if self._entries:
            errors += self.journal.undo_entry(first)
        self._entries = []
        return errors

    @staticmethod
    def _stop(proc: subprocess.Popen[bytes]) -> None:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
