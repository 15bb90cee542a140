"""The remote helper (helper.c): installed once per remote, compiled there with its own cc.

It runs each trial in its own process group and reports that process's wait4() rusage, so
the times, max RSS and context switches are the remote program's, not the ssh client's;
it enforces the timeout there and kills the group when the channel goes away. It also
reads procfs/sysfs snapshots in one exec (see probe.py).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

from shootout.errors import TargetError, ToolMissing
from shootout.remote.ssh import SshChannel

_USAGE = re.compile(
    r"\n?(?P<token>\S+) status=(?P<status>-?\d+) wall=(?P<wall>[0-9.]+) user=(?P<user>[0-9.]+) sys=(?P<sys>[0-9.]+) "
    r"maxrss=(?P<maxrss>\d+) nvcsw=(?P<nvcsw>\d+) nivcsw=(?P<nivcsw>\d+) started=(?P<started>[0-9.]+) "
    r"timedout=(?P<timedout>[01])\n?$")


@dataclass(frozen=True)
class RemoteUsage:
    """What the helper measured on the remote side."""

    exit_status: int
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    ctx_switches: int
    started_at: float  # remote clock
    timed_out: bool


def source() -> bytes:
    return resources.files("shootout.remote").joinpath("helper.c").read_bytes()


def install(channel: SshChannel, directory: str) -> str:
    """Path of the helper binary in `directory` on the remote, compiled there on first use."""
    digest = hashlib.sha256(source()).hexdigest()[:16]
    machine = channel.check("uname -m", "uname -m").strip()
    binary = f"{directory}/helper-{machine}-{digest}"
    if channel.exec(f"test -x {shlex.quote(binary)}").exit_status == 0:
        return binary
    if channel.exec("command -v cc").exit_status != 0:
        raise ToolMissing("cc", "gcc", where=channel.address.destination)
    tmp = f"{binary}.{secrets.token_hex(4)}"
    # Compiled from stdin into a private name, then renamed: two shootouts never see half a binary.
    channel.check(f"mkdir -p {shlex.quote(directory)} && cc -O2 -x c -o {shlex.quote(tmp)} - "
                  f"&& mv {shlex.quote(tmp)} {shlex.quote(binary)}", "compiling shootout's helper", stdin=source())
    return binary


def run_command(helper: str, argv: Sequence[str], *, env: Mapping[str, str], cwd: str,
                timeout: float, token: str) -> str:
    """The remote shell line of one trial: a clean environment, then the helper."""
    assignments = [f"{k}={v}" for k, v in env.items()]
    return shlex.join(["exec", "env", "-i", *assignments, helper, "run", f"{timeout:.3f}", token, cwd, "--", *argv])


def new_token() -> str:
    """Marks the helper's report line; random so no program output can fake it."""
    return "shootout-usage-" + secrets.token_hex(8)


def parse_usage(stderr: str, token: str) -> tuple[RemoteUsage, str]:
    """The helper's report and the command's own stderr without it."""
    at = stderr.rfind(f"\n{token} ")
    m = _USAGE.match(stderr[at:]) if at >= 0 else None
    if m is None or m.group("token") != token:
        tail = stderr.strip().splitlines()[-1:] or ["no output"]
        raise TargetError(f"the remote helper did not report the trial's resource usage ({tail[0][:160]})",
                          "the connection may have dropped; see `shootout doctor` and try again")
    usage = RemoteUsage(
        exit_status=int(m["status"]), wall_s=float(m["wall"]), user_s=float(m["user"]), sys_s=float(m["sys"]),
        max_rss_kb=int(m["maxrss"]), ctx_switches=int(m["nvcsw"]) + int(m["nivcsw"]),
        started_at=float(m["started"]), timed_out=m["timedout"] == "1")
    return usage, stderr[:at]


def parse_snapshot(data: bytes) -> dict[str, bytes]:
    """`helper snap` output -> {path: content}."""
    files: dict[str, bytes] = {}
    pos = 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        kind, length, path = data[pos:end].decode(errors="replace").split(" ", 2)
        if kind != "F":
            raise ValueError(f"unexpected snapshot record {kind!r}")
        start = end + 1
        files[path] = data[start:start + int(length)]
        pos = start + int(length)
    return files
