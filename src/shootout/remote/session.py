"""One `helper serve` per remote target: its commands one after another over one ssh channel.

A new ssh channel per command costs a session on the remote sshd and a run of the remote
account's shell with its startup files (a ~/.bashrc that runs `pyenv init` took most of
~260 ms per trial); the serving helper pays that once. Requests and answers are framed as
helper.c describes. A command that outlives its timeout by GRACE_S, a Ctrl-C, or a lost
connection end the session (the helper then kills the command's process group, since its
stdin closed); the next command starts a fresh one.
"""

from __future__ import annotations

import collections
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from shootout.base.errors import TargetError
from shootout.execution.process import ProcResult, Stdin
from shootout.remote.helper import RemoteUsage, parse_fields

GRACE_S = 60.0  # the helper kills on its own deadline; this is for a channel that hangs


def netstring(data: bytes | str) -> bytes:
    raw = data.encode() if isinstance(data, str) else data
    return str(len(raw)).encode() + b":" + raw


def request(argv: Sequence[str], env: Mapping[str, str], cwd: str, timeout: float) -> bytes:
    """A `run` request up to (not including) the command's stdin."""
    fields = ["run", f"{timeout:.3f}", cwd, str(len(env)), *(f"{k}={v}" for k, v in env.items()),
              str(len(argv)), *argv]
    return b"".join(netstring(f) for f in fields)


class HelperSession:
    def __init__(self, start: Callable[[], subprocess.Popen[bytes]], where: str) -> None:
        self._start = start  # e.g. ssh HOST -- exec HELPER serve
        self.where = where
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=5)
        self._lock = threading.Lock()
        self._expired = False
        self.user_s = 0.0  # user CPU of every command run so far (the helper's rusage): the remote monitor's "own"

    def _ensure(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
            self._stderr.clear()
            threading.Thread(target=self._keep_stderr, args=(self._proc.stderr,), daemon=True).start()
        return self._proc

    def _keep_stderr(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            self._stderr.append(line.decode(errors="replace").strip())

    def _abort(self) -> None:
        """End the session: the remote helper sees its stdin close and kills the running command."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def _on_deadline(self) -> None:
        self._expired = True
        self._abort()

    def run(self, argv: Sequence[str], env: Mapping[str, str], cwd: str, timeout: float,
            stdin: Stdin = None) -> ProcResult:
        started = time.time()
        out, err, usage = self.call(argv, env, cwd, timeout, stdin)
        return ProcResult(tuple(argv), usage.exit_status, out.decode(errors="replace"), err.decode(errors="replace"),
                          usage.wall_s, usage.user_s, usage.sys_s, usage.max_rss_kb, usage.ctx_switches, started,
                          usage.timed_out, **usage.rest())

    def call(self, argv: Sequence[str], env: Mapping[str, str], cwd: str, timeout: float,
             stdin: Stdin = None) -> tuple[bytes, bytes, RemoteUsage]:
        """One command: its stdout and stderr as bytes, and what the helper measured."""
        with self._lock:
            proc = self._ensure()
            assert proc.stdin is not None and proc.stdout is not None
            self._expired = False
            watchdog = threading.Timer(timeout + GRACE_S, self._on_deadline)
            try:
                watchdog.start()
                self._send(proc.stdin, request(argv, env, cwd, timeout), stdin)
                out, err, usage = self._receive(proc.stdout)
                self.user_s += usage.user_s
                return out, err, usage
            except BaseException:
                self._abort()
                raise
            finally:
                watchdog.cancel()

    def _lost(self) -> TargetError:
        if self._expired:
            return TargetError(f"{self.where} did not answer within the command's timeout",
                               "check the connection; the remote command was killed when its channel closed")
        time.sleep(0.1)  # the stderr reader catches the helper's or ssh's last words
        said = self._stderr[-1] if self._stderr else "no message"
        return TargetError(f"the connection to {self.where} was lost during a command ({said[:160]})",
                           "check the connection and the remote machine, then resume the run")

    def _send(self, pipe: IO[bytes], head: bytes, stdin: Stdin) -> None:
        try:
            if isinstance(stdin, Path):
                pipe.write(head + str(stdin.stat().st_size).encode() + b":")
                with open(stdin, "rb") as fh:
                    shutil.copyfileobj(fh, pipe)
            else:
                pipe.write(head + netstring(stdin or b""))
            pipe.flush()
        except (BrokenPipeError, ValueError):  # ValueError: the watchdog closed the pipe meanwhile
            raise self._lost() from None

    def _receive(self, pipe: IO[bytes]) -> tuple[bytes, bytes, RemoteUsage]:
        out: list[bytes] = []
        err: list[bytes] = []
        while True:
            line = pipe.readline()
            kind, _, rest = line.partition(b" ")
            if kind in (b"o", b"e") and rest.strip().isdigit():
                size = int(rest)
                chunk = pipe.read(size)
                if len(chunk) != size:
                    raise self._lost()
                (out if kind == b"o" else err).append(chunk)
            elif kind == b"x" and (usage := parse_fields(rest.decode(errors="replace"))) is not None:
                return b"".join(out), b"".join(err), usage
            else:
                raise self._lost()

    def close(self) -> None:
        """Let the helper finish (stdin closed at the end of a request), then reap the client."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
