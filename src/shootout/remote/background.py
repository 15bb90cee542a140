"""A background command on a remote (a server, a browser): started, then stopped on demand.

The command runs under `helper run` over an ssh channel of its own (the run's commands keep
using the serving helper meanwhile). stop() sends that helper SIGTERM through another
command, which it passes on to the command's group; after the grace time SIGUSR1 makes it
kill the group. Either way it still reports the remote rusage on the first channel. The
remote shell prints its pid (which `exec` hands on to env and then to the helper) first.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Sequence

from shootout.base.errors import TargetError
from shootout.execution.process import Background, ProcResult
from shootout.execution.process import (
    _drain as drain,  # the one pipe reader, shared with local runs
)
from shootout.remote import helper
from shootout.remote.channel import SshChannel


class RemoteBackground(Background):
    """Background's interface (pid, alive, stop) for a command on a remote machine."""

    def __init__(self, channel: SshChannel, argv: Sequence[str], command: str, token: str) -> None:
        self.channel = channel
        self.argv = tuple(argv)
        self.token = token
        self.started_at = time.time()
        self._result: ProcResult | None = None
        self._proc = channel.popen(f"echo $$ >&2; {command}")
        assert self._proc.stdout is not None and self._proc.stderr is not None
        first = self._proc.stderr.readline().decode(errors="replace").strip()
        if not first.isdigit():
            self._proc.kill()
            self._proc.wait()
            raise TargetError(f"a background command did not start on {channel.address.destination}: {first[:160]}",
                              "check the connection")
        self._pid = int(first)
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self._readers = [threading.Thread(target=drain, args=(s, sink), daemon=True)
                         for s, sink in ((self._proc.stdout, self._out), (self._proc.stderr, self._err))]
        for r in self._readers:
            r.start()

    @property
    def pid(self) -> int:
        """The remote helper's pid (on the remote machine)."""
        return self._pid

    def alive(self) -> bool:
        return self._result is None and self._proc.poll() is None

    def _signal(self, name: str) -> None:
        if self._proc.poll() is None:
            self.channel.exec(f"kill -{name} {self._pid}", timeout=60)

    def stop(self, grace_s: float = 2.0) -> ProcResult:
        """SIGTERM to the remote group, SIGKILL after grace_s; its output and remote rusage."""
        if self._result is not None:
            return self._result
        self._signal("TERM")
        try:
            self._proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self._signal("USR1")  # the helper kills the group and still reports
            try:
                self._proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._proc.kill()  # the helper then sees its channel close and kills the group itself
                self._proc.wait()
        for r in self._readers:
            r.join(timeout=10)
        usage, stderr = helper.parse_usage(b"".join(self._err).decode(errors="replace"), self.token)
        self._result = ProcResult(self.argv, usage.exit_status, b"".join(self._out).decode(errors="replace"), stderr,
                                  usage.wall_s, usage.user_s, usage.sys_s, usage.max_rss_kb, usage.ctx_switches,
                                  self.started_at, usage.timed_out, **usage.rest())
        return self._result
