"""The remote helper (helper.c): installed once per remote, compiled there with its own cc.

It runs each command in its own process group and reports that process's wait4() rusage, so
the times, max RSS and context switches are the remote program's, not the ssh client's; it
enforces the timeout there and kills the group when the channel goes away. `helper serve`
runs the commands of a whole run over one channel (session.py); `helper run` runs one
background command; `helper snap`/`watch` read procfs/sysfs snapshots (probe.py).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from importlib import resources

from shootout.base.errors import TargetError, ToolMissing
from shootout.remote.channel import SshChannel

_FIELDS = re.compile(
    r"status=(?P<status>-?\d+) wall=(?P<wall>[0-9.]+) user=(?P<user>[0-9.]+) sys=(?P<sys>[0-9.]+) "
    r"maxrss=(?P<maxrss>\d+) nvcsw=(?P<nvcsw>\d+) nivcsw=(?P<nivcsw>\d+) "
    r"minflt=(?P<minflt>\d+) majflt=(?P<majflt>\d+) delay=(?P<delay>-?[0-9.]+) started=(?P<started>[0-9.]+) "
    r"timedout=(?P<timedout>[01])"
    r"(?: instructions=(?P<instructions>-?\d+) cycles=(?P<cycles>-?\d+) pmu=(?P<pmu>all|user|none))?\n?$")

# One exec that finds (or makes) everything a target needs: the remote's home, its cache
# directory and its machine, and the helper compiled there from stdin unless it exists.
_INSTALL = r"""
set -e
cache=${1:-$HOME/.cache/shootout}
mkdir -p "$cache" && cd "$cache" && cache=$(pwd)
binary="$cache/helper-$(uname -m)-$2"
if [ ! -x "$binary" ]; then
  command -v cc >/dev/null 2>&1 || { echo "shootout: no cc" >&2; exit 3; }
  cc -O2 -x c -o "$binary.$$" - && mv "$binary.$$" "$binary"
fi
printf '%s\n%s\n%s\n' "$HOME" "$cache" "$binary"
"""


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
    voluntary: int = 0
    involuntary: int = 0
    minor_faults: int = 0
    major_faults: int = 0
    run_delay_s: float | None = None  # waited for a CPU (None: unknown)
    instructions: int | None = None  # the PMU's counts of the command's tree (None: not counted)
    cycles: int | None = None
    pmu_scope: str | None = None  # "all", or "user" where the kernel's own code was not counted

    def rest(self) -> dict[str, Any]:
        """The rest of the rusage and the PMU's counts, as ProcResult's keyword arguments."""
        return {"minor_faults": self.minor_faults, "major_faults": self.major_faults,
                "voluntary_switches": self.voluntary, "involuntary_switches": self.involuntary,
                "run_delay_s": self.run_delay_s, "instructions": self.instructions, "cycles": self.cycles,
                "pmu_scope": self.pmu_scope}


@dataclass(frozen=True)
class Installed:
    home: str
    cache: str
    helper: str


def source() -> bytes:
    return resources.files("shootout.remote").joinpath("helper.c").read_bytes()


def install(channel: SshChannel, cache: str | None) -> Installed:
    """The remote's home and cache directory, and the helper there (compiled on first use)."""
    digest = hashlib.sha256(source()).hexdigest()[:16]
    done = channel.exec(shlex.join(["sh", "-c", _INSTALL, "install", cache or "", digest]), stdin=source())
    if done.exit_status == 3:
        raise ToolMissing("cc", "gcc", where=channel.address.destination)
    lines = done.text().splitlines()
    if done.exit_status != 0 or len(lines) != 3:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or [f"exit {done.exit_status}"])[-1]
        raise TargetError(f"cannot set up shootout's helper on {channel.address.destination}: {last[:200]}",
                          "the remote needs a writable cache directory and a working cc (Debian package gcc)")
    return Installed(*lines)


def _count(text: str | None) -> int | None:
    return int(text) if text is not None and int(text) >= 0 else None


def parse_fields(text: str) -> RemoteUsage | None:
    m = _FIELDS.match(text)
    if m is None:
        return None
    counted = m["pmu"] not in (None, "none")
    return RemoteUsage(
        exit_status=int(m["status"]), wall_s=float(m["wall"]), user_s=float(m["user"]), sys_s=float(m["sys"]),
        max_rss_kb=int(m["maxrss"]), ctx_switches=int(m["nvcsw"]) + int(m["nivcsw"]),
        started_at=float(m["started"]), timed_out=m["timedout"] == "1", voluntary=int(m["nvcsw"]),
        involuntary=int(m["nivcsw"]), minor_faults=int(m["minflt"]), major_faults=int(m["majflt"]),
        run_delay_s=float(m["delay"]) if float(m["delay"]) >= 0 else None,
        instructions=_count(m["instructions"]), cycles=_count(m["cycles"]), pmu_scope=m["pmu"] if counted else None)


def run_command(helper: str, argv: Sequence[str], *, env: Mapping[str, str], cwd: str,
                timeout: float, token: str) -> str:
    """The remote shell line of one background command: a clean environment, then the helper."""
    assignments = [f"{k}={v}" for k, v in env.items()]
    return shlex.join(["exec", "env", "-i", *assignments, helper, "run", f"{timeout:.3f}", token, cwd, "--", *argv])


def new_token() -> str:
    """Marks the helper's report line; random so no program output can fake it."""
    return "shootout-usage-" + secrets.token_hex(8)


def parse_usage(stderr: str, token: str) -> tuple[RemoteUsage, str]:
    """`helper run`'s report at the end of stderr, and the command's own stderr without it."""
    at = stderr.rfind(f"\n{token} ")
    usage = parse_fields(stderr[at + len(token) + 2:]) if at >= 0 else None
    if usage is None:
        tail = stderr.strip().splitlines()[-1:] or ["no output"]
        raise TargetError(f"the remote helper did not report the command's resource usage ({tail[0][:160]})",
                          "the connection may have dropped; see `shootout doctor` and try again")
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
