"""A background command on a remote (a server, a browser): started, then stopped on demand.

The command runs under the helper like a trial, over its own ssh channel. stop() sends the
helper SIGTERM through a second exec; the helper kills the command's process group and
still reports the remote rusage, which comes back on the first channel. The remote shell
prints its pid (which `exec` hands on to env and then to the helper) before anything else.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Sequence

from shootout.errors import TargetError
from shootout.remote import helper
from shootout.remote.ssh import SshChannel
from shootout.targets.process import ProcResult
from shootout.targets.process import _drain as drain  # the one pipe reader, shared with local runs


class RemoteBackground:
    def __init__(self, channel: SshChannel, argv: Sequence[str], command: str, token: str) -> None:
        self.channel = channel
        self.argv = tuple(argv)
        self.token = token
        self.started_at = time.time()
        self._proc = channel.popen(f"echo $$ >&2; {command}")
        assert self._proc.stdout is not None and self._proc.stderr is not None
        first = self._proc.stderr.readline().decode(errors="replace").strip()
        if not first.isdigit():
            self._proc.kill()
            raise TargetError(f"a background command did not start on {channel.address.destination}: {first[:160]}",
                              "check the connection")
        self.pid = int(first)
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self._readers = [threading.Thread(target=drain, args=(s, sink), daemon=True)
                         for s, sink in ((self._proc.stdout, self._out), (self._proc.stderr, self._err))]
        for r in self._readers:
            r.start()

    def stop(self, timeout: float = 60.0) -> ProcResult:
        """Kill the command's process group on the remote; its output and remote rusage."""
        if self._proc.poll() is None:
            self.channel.exec(f"kill -TERM {self.pid}", timeout=timeout)
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()  # the helper then sees its channel close and kills the group itself
            self._proc.wait()
        for r in self._readers:
            r.join(timeout=10)
        usage, stderr = helper.parse_usage(b"".join(self._err).decode(errors="replace"), self.token)
        return ProcResult(self.argv, usage.exit_status, b"".join(self._out).decode(errors="replace"), stderr,
                          usage.wall_s, usage.user_s, usage.sys_s, usage.max_rss_kb, usage.ctx_switches,
                          self.started_at, usage.timed_out)
