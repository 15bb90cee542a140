"""CLI helpers for honest conditions: render a preflight, and a `conditions` command.

The lead's CLI can call print_preflight() from `run` and `info`, and register the command:
    app.command("conditions")(conditions_command)
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from shootout.cli.consoles import say

from shootout.conditions.preflight import Preflight, preflight
from shootout.measure.clock import measure_mhz


def preflight_lines(pf: Preflight) -> list[str]:
    """One line per finding, then the run-level flags (if any) in yellow (Rich markup)."""
    flags = [f"  [yellow]flags: {escape(', '.join(pf.flags))}[/yellow]"] if pf.flags else []
    return [f"  {escape(line)}" for line in pf.lines] + flags


def print_preflight(pf: Preflight, console: Console | None = None) -> None:
    """A finding a paragraph, wrapped at words; then the run-level flags (if any)."""
    for line in pf.lines:
        say(line, indent=2, on=console)
    if pf.flags:
        say(f"flags: {', '.join(pf.flags)}", indent=2, on=console)


def conditions_command(
    wait: Annotated[float, typer.Option(help="seconds to wait for an idle machine")] = 5.0,
    as_json: Annotated[bool, typer.Option("--json", help="print the facts and flags as JSON")] = False,
) -> None:
    """Show the machine's conditions: load, governor, virtualization, steal, swap, sensors, throttling.

    Changes nothing (tuning happens only during `shootout run --tune`).
    """
    pf = preflight(tune=False, journal=None, load_wait_s=wait, clock=measure_mhz)
    if as_json:
        typer.echo(json.dumps({"lines": pf.lines, "flags": pf.flags, "facts": pf.facts}, indent=2, default=str))
    else:
        print_preflight(pf)
