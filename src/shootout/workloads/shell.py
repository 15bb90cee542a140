"""Several timed steps inside one trial: a POSIX sh script that stamps the clock around each.

External tools run inside the target, where Python may not exist, so the timing is done by
`date +%s.%N` (GNU coreutils, in every Debian userspace). One `date` costs about a
millisecond, negligible next to steps of at least MIN_TRIAL_S. A failing command stops the
script (set -e), so a trial never reports a time for work that did not happen.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from shootout.base.errors import WorkloadError
from shootout.execution.process import ProcResult
from shootout.places.target import Target

_STEP = re.compile(r"^step ([a-z0-9_]+) (\d+\.\d+) (\d+\.\d+)$")


def q(text: str) -> str:
    return shlex.quote(text)


@dataclass(frozen=True)
class Step:
    name: str  # lower_snake; becomes the key of the measured seconds
    command: str  # one shell command line (already quoted)
    repeat: int = 1  # run the command this many times inside the timed interval


def _loop(step: Step) -> str:
    if step.repeat <= 1:
        return step.command
    return f"i=0; while [ $i -lt {step.repeat} ]; do {step.command}; i=$((i+1)); done"


def script(steps: Sequence[Step], setup: str = "", after: str = "") -> str:
    """The sh script: setup (untimed), each step between two timestamps, then `after` (untimed)."""
    lines = ["set -e", "now() { date +%s.%N; }"]
    if setup:
        lines.append(setup)
    for step in steps:
        lines.append(f"a=$(now); {_loop(step)}; b=$(now); echo \"step {step.name} $a $b\"")
    if after:
        lines.append(after)
    return "\n".join(lines)


def timed_argv(steps: Sequence[Step], setup: str = "", after: str = "") -> list[str]:
    return ["sh", "-c", script(steps, setup, after)]


def parse_steps(stdout: str) -> dict[str, float]:
    """Seconds per step name; Decimal keeps the nanoseconds of two 19-digit stamps."""
    seconds: dict[str, float] = {}
    for line in stdout.splitlines():
        if m := _STEP.match(line.strip()):
            seconds[m.group(1)] = float(Decimal(m.group(3)) - Decimal(m.group(2)))
    return seconds


def step_seconds(result: ProcResult, names: Sequence[str]) -> dict[str, float]:
    """The named steps' seconds; a missing or non-positive one is a WorkloadError."""
    seconds = parse_steps(result.stdout)
    for name in names:
        if name not in seconds:
            raise WorkloadError(f"step {name!r} did not finish (last line: {result.last_line()!r})",
                                f"stderr: {result.stderr_tail(1)[:200] or 'empty'}")
        if seconds[name] <= 0:
            raise WorkloadError(f"step {name!r} took {seconds[name]} s", "the clock (date +%s.%N) is unusable")
    return {name: seconds[name] for name in names}


def run_checked(target: Target, argv: Sequence[str], what: str, timeout: float = 600.0) -> ProcResult:
    """Run a preparation command; a failure is a one-line WorkloadError."""
    return target.run(list(argv), timeout=timeout).check(
        WorkloadError, f"{what} failed in {target.config.display}", "run the command by hand: " + " ".join(argv)[:200],
        width=200)
