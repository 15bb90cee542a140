"""The one subprocess entry point every target uses.

A trial runs in its own session (process group) so a timeout kills everything it
started; resource usage comes from wait4() so it covers exactly this process tree.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shootout.errors import ToolMissing


@dataclass(frozen=True)
class ProcResult:
    argv: tuple[str, ...]
    exit_status: int  # negative: killed by that signal
    stdout: str
    stderr: str
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    ctx_switches: int
    started_at: float
    timed_out: bool = False

    def stderr_tail(self, lines: int = 10) -> str:
        return "\n".join(self.stderr.strip().splitlines()[-lines:])


def _drain(stream, sink: list[bytes]) -> None:
    for chunk in iter(lambda: stream.read(65536), b""):
        sink.append(chunk)
    stream.close()


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None = None,
    timeout: float = 3600.0,
    stdin_path: str | None = None,
    missing_package: str | None = None,
) -> ProcResult:
    """Run argv to completion (or timeout) and return its output and resource usage."""
    started_at = time.time()
    t0 = time.perf_counter()
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise ToolMissing(argv[0], missing_package or argv[0]) from None
    finally:
        if stdin_path:
            stdin.close()
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True),
    ]
    for r in readers:
        r.start()
    timed_out = threading.Event()

    def on_timeout() -> None:
        timed_out.set()
        _kill_group(proc.pid)

    timer = threading.Timer(timeout, on_timeout)
    timer.start()
    try:
        # wait4 instead of Popen.wait: we need this child's own rusage.
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        _kill_group(proc.pid)
        os.waitpid(proc.pid, 0)
        raise
    finally:
        timer.cancel()
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    _kill_group(proc.pid)  # stragglers left behind by the trial must not disturb the next one
    for r in readers:
        r.join(timeout=5)
    return ProcResult(
        argv=tuple(argv),
        exit_status=proc.returncode,
        stdout=b"".join(out).decode(errors="replace"),
        stderr=b"".join(err).decode(errors="replace"),
        wall_s=wall,
        user_s=usage.ru_utime,
        sys_s=usage.ru_stime,
        max_rss_kb=usage.ru_maxrss,
        ctx_switches=usage.ru_nvcsw + usage.ru_nivcsw,
        started_at=started_at,
        timed_out=timed_out.is_set(),
    )
