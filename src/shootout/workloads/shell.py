"""Several timed steps inside one trial: a bash script that stamps the clock around each.

External tools run inside the target, where Python may not exist, so the timing is done by
`date +%s.%N` (GNU coreutils, in every Debian userspace). One `date` costs about a
millisecond, negligible next to steps of at least MIN_TRIAL_S. A failing command stops the
script (set -e), so a trial never reports a time for work that did not happen.

Each step's CPU time (user + sys of the processes it ran, from their rusage, to the
millisecond) comes from bash's `time` keyword beside the wall stamps: a step that only computes
on one thread is judged by it where its workload says so (flac, lame), since time slices other
programs took while it waited for a CPU do not count against it. bash is essential in Debian
and in the OS images built from it.
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
_CPU = re.compile(r"^cpu ([a-z0-9_]+) (\d+\.\d+) (\d+\.\d+)$")  # TIMEFORMAT below: user, sys
SHELL = "bash"  # what runs script(): `time` is a bash keyword


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
    """The bash script: setup (untimed), each step between two timestamps and under `time`,
    then `after` (untimed). `time` reports on the group's stderr, sent to stdout (fd 3), while
    the step's own stderr stays stderr (fd 4)."""
    lines = ["set -e", "now() { date +%s.%N; }", "exec 3>&1 4>&2"]
    if setup:
        lines.append(setup)
    for step in steps:
        lines.append(f"TIMEFORMAT='cpu {step.name} %3U %3S'; a=$(now); {{ time {{ {_loop(step)}; }} 2>&4; }} 2>&3; "
                     f"b=$(now); echo \"step {step.name} $a $b\"")
    if after:
        lines.append(after)
    return "\n".join(lines)


def timed_argv(steps: Sequence[Step], setup: str = "", after: str = "") -> list[str]:
    return [SHELL, "-c", script(steps, setup, after)]


def parse_steps(stdout: str) -> dict[str, float]:
    """Seconds per step name; Decimal keeps the nanoseconds of two 19-digit stamps."""
    seconds: dict[str, float] = {}
    for line in stdout.splitlines():
        if m := _STEP.match(line.strip()):
            seconds[m.group(1)] = float(Decimal(m.group(3)) - Decimal(m.group(2)))
    return seconds


def parse_cpu(stdout: str) -> dict[str, float]:
    """CPU seconds (user + sys) per step name."""
    return {m[1]: float(m[2]) + float(m[3]) for line in stdout.splitlines() if (m := _CPU.match(line.strip()))}


def step_cpu_seconds(result: ProcResult, names: Sequence[str]) -> dict[str, float]:
    """The named steps' CPU seconds; a missing or zero one is a WorkloadError (a step that used
    no CPU time measured nothing a CPU-time headline could judge)."""
    seconds = parse_cpu(result.stdout)
    for name in names:
        if not seconds.get(name, 0.0) > 0:
            raise WorkloadError(f"step {name!r} reported no CPU time (last line: {result.last_line()!r})",
                                "run the trial's command by hand under bash's time")
    return {name: seconds[name] for name in names}


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
