"""Pieces of the POSIX sh scripts that network trials run inside the target.

A trial script starts programs in both namespaces (through `nsenter`, see namespace.enter),
so every one of them is a child of the trial and its rusage counts their CPU time. Waits are
bounded: a script never hangs when a namespace vanished under it (the holder sweeps it when
shootout dies). Output sections are read back with ProcResult.sections().
"""

from __future__ import annotations

WAIT_STEPS = 2000  # of 10 ms: 20 s at most for a server or tunnel to come up

PREAMBLE = f"""\
wait_for() {{  # wait_for WHAT COMMAND...: poll until COMMAND succeeds, give up after {WAIT_STEPS // 100} s
  what=$1; shift; i=0
  until "$@" 2>/dev/null; do
    i=$((i+1)); [ $i -le {WAIT_STEPS} ] || {{ echo "timed out waiting for $what" >&2; return 1; }}
    sleep 0.01
  done
}}"""


def wait_for(command: str, what: str) -> str:
    """A line that waits until command (a simple command, no pipes) succeeds; exits the trial on timeout."""
    return f"wait_for '{what}' {command} || exit 1"


def section(name: str) -> str:
    return f"echo 'section {name}'"


def script_text(*lines: str) -> str:
    return "\n".join([PREAMBLE, *lines])


def script(*lines: str) -> list[str]:
    """The argv of a trial: sh -c with the preamble and the given lines."""
    return ["sh", "-c", script_text(*lines)]
