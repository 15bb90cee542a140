"""The one subprocess entry point every local target uses: run to completion, or in the background.

A command runs in its own session (process group) and carries a marker in its environment
(execution.tree), so a timeout or stop() kills everything it started, and a command returns
only once all of it has exited; resource usage comes from wait4() so it covers exactly this
process tree.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from shootout.base.errors import ShootoutError, ToolMissing
from shootout.execution.tree import MARKER, Tree, new_mark

_SECTION = re.compile(r"^section (\S+)$")

# What a command reads on its standard input: nothing, these bytes, or this file's content.
Stdin = bytes | Path | None


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
    # Time the command's own process was runnable but waited for a CPU (/proc/PID/schedstat,
    # read before it is reaped); None where not known (a remote machine, no schedstat).
    run_delay_s: float | None = None
    # The rest of its rusage, for the counters beside the headline (None where not known)
    minor_faults: int | None = None
    major_faults: int | None = None
    voluntary_switches: int | None = None
    involuntary_switches: int | None = None
    # The PMU's counts of its process tree, from exec to exit (remote/helper.c; None: not counted)
    instructions: int | None = None
    cycles: int | None = None
    pmu_scope: str | None = None  # "all", or "user" where the kernel's own code was not counted

    def stderr_tail(self, lines: int = 10) -> str:
        return "\n".join(self.stderr.strip().splitlines()[-lines:])

    def check(self, error: type[ShootoutError], message: str, hint: str, width: int | None = None) -> ProcResult:
        """This result if the command succeeded (exit 0, in time); else `error` in one line:
        "MESSAGE: <its last line of stderr, cut to width, or its exit status>" with `hint`."""
        if self.exit_status != 0 or self.timed_out:
            raise error(f"{message}: {self.stderr_tail(1)[:width] or 'exit ' + str(self.exit_status)}", hint)
        return self

    def last_line(self, width: int = 120) -> str:
        """The last line of stdout (cut to `width`), for error messages that quote the output."""
        return (self.stdout.strip().splitlines() or ["<no output>"])[-1][:width]

    def sections(self) -> dict[str, str]:
        """Split the output of a command that ran several programs, each after `echo 'section NAME'`."""
        out: dict[str, list[str]] = {}
        current = None
        for line in self.stdout.splitlines():
            if m := _SECTION.match(line.strip()):
                current = m.group(1)
                out[current] = []
            elif current is not None:
                out[current].append(line)
        return {name: "\n".join(lines) for name, lines in out.items()}


def _drain(stream: IO[bytes], sink: list[bytes]) -> None:
    for chunk in iter(lambda: stream.read(65536), b""):
        sink.append(chunk)
    stream.close()


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
    except BrokenPipeError:
        pass  # the command stopped reading: its exit status tells why
    finally:
        try:
            stream.close()
        except BrokenPipeError:
            pass


def _run_delay(pid: int) -> float | None:
    """Seconds the process waited on a run queue (the second field of /proc/PID/schedstat):
    with its CPU time it tells a command that computes on a busy machine from one that waits."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class _Started:
    """A command started with its output drained by threads; finish() reaps it."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None, stdin: Stdin,
                 missing_package: str | None) -> None:
        self.argv = tuple(argv)
        self.started_at = time.time()
        self._t0 = time.perf_counter()
        source: IO[bytes] | int = subprocess.DEVNULL
        if isinstance(stdin, Path):
            source = open(stdin, "rb")  # the child reads the file itself: no copy through Python
        elif stdin is not None:
            source = subprocess.PIPE
        mark = new_mark()
        try:
            self.proc = subprocess.Popen(list(argv), env={**env, MARKER: mark}, cwd=cwd, stdin=source, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise ToolMissing(argv[0], missing_package or argv[0]) from None
        finally:
            if isinstance(stdin, Path) and not isinstance(source, int):
                source.close()
        self.tree = Tree.of_command(mark, self.proc.pid)
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self._threads = [threading.Thread(target=_drain, args=(self.proc.stdout, self._out), daemon=True),
                         threading.Thread(target=_drain, args=(self.proc.stderr, self._err), daemon=True)]
        if isinstance(stdin, bytes):
            self._threads.append(threading.Thread(target=_feed, args=(self.proc.stdin, stdin), daemon=True))
        for t in self._threads:
            t.start()

    def kill(self, sig: int = signal.SIGKILL) -> None:
        self.tree.signal(sig)

    def running(self) -> bool:
        """True while the command has not exited (it is not reaped here, so finish() still gets its rusage)."""
        return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None

    def finish(self, *, timed_out: bool = False, grace_s: float | None = None) -> ProcResult:
        """Wait for the command (with grace_s: at most that long, then SIGKILL), kill what it
        left behind and wait until that has exited too, and return the result."""
        if grace_s is not None:
            deadline = time.monotonic() + grace_s
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.02)
            self.kill()
        try:
            os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
            delay = _run_delay(self.proc.pid)
            # wait4 instead of Popen.wait: we need this child's own rusage.
            _, status, usage = os.wait4(self.proc.pid, 0)
        except BaseException:
            self.kill()
            os.waitpid(self.proc.pid, 0)
            self.tree.end()
            raise
        wall = time.perf_counter() - self._t0
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.tree.end()  # stragglers must not disturb the next command, nor outlive the run
        for t in self._threads:
            t.join(timeout=5)
        return ProcResult(
            argv=self.argv,
            exit_status=self.proc.returncode,
            stdout=b"".join(self._out).decode(errors="replace"),
            stderr=b"".join(self._err).decode(errors="replace"),
            wall_s=wall,
            user_s=usage.ru_utime,
            sys_s=usage.ru_stime,
            max_rss_kb=usage.ru_maxrss,
            ctx_switches=usage.ru_nvcsw + usage.ru_nivcsw,
            started_at=self.started_at,
            timed_out=timed_out,
            run_delay_s=delay,
            minor_faults=usage.ru_minflt,
            major_faults=usage.ru_majflt,
            voluntary_switches=usage.ru_nvcsw,
            involuntary_switches=usage.ru_nivcsw,
        )


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None = None,
    timeout: float = 3600.0,
    stdin: Stdin = None,
    missing_package: str | None = None,
) -> ProcResult:
    """Run argv to completion (or timeout) and return its output and resource usage."""
    started = _Started(argv, env, cwd, stdin, missing_package)
    timed_out = threading.Event()

    def on_timeout() -> None:
        timed_out.set()
        started.kill()

    timer = threading.Timer(timeout, on_timeout)
    timer.start()
    try:
        result = started.finish()
    finally:
        timer.cancel()
    return dataclasses.replace(result, timed_out=True) if timed_out.is_set() else result


class Background:
    """A command running in the background (a server, a browser) in its own process group."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None = None,
                 missing_package: str | None = None) -> None:
        self._started = _Started(argv, env, cwd, None, missing_package)
        self._result: ProcResult | None = None

    @property
    def pid(self) -> int:
        return self._started.proc.pid

    def alive(self) -> bool:
        return self._result is None and self._started.running()

    def stop(self, grace_s: float = 2.0) -> ProcResult:
        """SIGTERM to the whole group, SIGKILL after grace_s; the output and usage of its whole life."""
        if self._result is None:
            self._started.kill(signal.SIGTERM)
            self._result = self._started.finish(grace_s=grace_s)
        return self._result
