"""User-defined workloads from shootout.toml: any command, timed or with a number from its output.

    [[workload]]
    name = "mybuild"
    command = "make -C /src -j2"        # a string runs under sh -c; a list runs as is
    metric = "wall"                     # or: regex = 'throughput: ([0-9.]+)'; a wall-timed command
                                        # that is CPU-bound in the warm-up is judged by its CPU time
    unit = "s"                          # a unit from shootout.base.units (see: shootout workloads)
    direction = "lower"                 # optional: checked against the unit's own direction
    scratch = "disk"                    # optional: $SHOOTOUT_SCRATCH is the configuration's scratch

    [[workload]]
    name = "vpn-openvpn"
    builtin = "vpn"                     # a built-in workload under another name (registry.renamed),
                                        # with parameters of its own: [params.vpn-openvpn]
"""

from __future__ import annotations

import re
from typing import Any

from shootout.base.errors import UsageError, WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.base.units import UNITS
from shootout.execution.process import ProcResult
from shootout.workloads.contract import Context, Prepared, Workload
from shootout.workloads.cpuclock import CPU, WALL

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _check_unit(symbol: object, direction: object, where: str) -> str:
    """Only units of the one table: a unit this process invented would be unknown to `show`,
    the reports and every later process that reads the stored run."""
    if not isinstance(symbol, str) or symbol not in UNITS:
        raise UsageError(f"{where}: unknown unit {symbol!r}", "use one of: " + ", ".join(sorted(UNITS)))
    if direction is not None and UNITS[symbol].direction != direction:
        raise UsageError(f"{where}: unit {symbol} is {UNITS[symbol].direction}-is-better, not {direction}",
                         "drop 'direction' or pick another unit")
    return symbol


def workload_name(definition: dict[str, Any], where: str) -> str:
    """The name of a [[workload]] table, checked."""
    name = definition.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise UsageError(f"{where}: a [[workload]] needs a name of letters, digits, '_', '.', '-'",
                         'add name = "my-workload"')
    return name


class CommandWorkload(Workload):
    """A command given by the user; built from its TOML table (kept for --resume)."""

    def __init__(self, definition: dict[str, Any], where: str = "shootout.toml") -> None:
        name = workload_name(definition, where)
        where = f"{where}: workload {name}"
        command = definition.get("command")
        if isinstance(command, str):
            self.command = ["sh", "-c", command]
        elif isinstance(command, list) and command and all(isinstance(c, str) for c in command):
            self.command = list(command)
        else:
            raise UsageError(f"{where}: 'command' must be a string or a list of strings", 'command = "..."')
        regex = definition.get("regex")
        metric = definition.get("metric", "wall" if regex is None else "value")
        if regex is not None:
            try:
                self.regex: re.Pattern[str] | None = re.compile(regex, re.MULTILINE)
            except re.error as exc:
                raise UsageError(f"{where}: bad regex {regex!r}: {exc}", "fix the regular expression") from None
            if self.regex.groups < 1:
                raise UsageError(f"{where}: the regex needs a group around the number", "e.g. 'time: ([0-9.]+)'")
            unit = definition.get("unit")
            if not unit:
                raise UsageError(f"{where}: a regex metric needs a unit", 'add unit = "MB/s" (and direction)')
        else:
            if metric != "wall":
                raise UsageError(f"{where}: metric must be \"wall\" or come with a regex", "add regex = '...'")
            self.regex = None
            unit = definition.get("unit", "s")
        unit = _check_unit(unit, definition.get("direction"), where)
        self.scratch = definition.get("scratch")
        if self.scratch not in (None, "disk"):
            raise UsageError(f"{where}: scratch must be \"disk\"", "leave it out for a command that needs no disk")
        clock = definition.get("clock", "")
        if clock not in ("", "cpu", "wall") or (clock and self.regex is not None):
            raise UsageError(f"{where}: clock must be \"cpu\" or \"wall\", for a command timed by shootout (no regex)",
                             'clock = "cpu" for a command that only computes, "wall" for one that waits or runs '
                             "in parallel; leave it out to let the run choose")
        self.definition = dict(definition)
        self.spec = WorkloadSpec(  # type: ignore[misc]  # per-instance spec for user workloads
            name=name,
            category=str(definition.get("category", "user")),
            description=str(definition.get("description", " ".join(self.command)))[:200],
            metrics=(Metric(metric, unit, regex),) if self.regex is not None else (
                Metric(WALL, unit, "wall time of the command"),
                # the headline instead of wall time when the warm-up shows the command CPU-bound
                Metric(CPU, unit, "CPU time of the command (user + sys)")),
            headline=metric,
            clock=clock,
        )

    def prepare(self, ctx: Context) -> Prepared:
        if self.scratch == "disk":
            return Prepared(files={"scratch": ctx.target.scratch("disk")})
        return Prepared()

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        if "scratch" in prepared.files:
            return ["env", f"SHOOTOUT_SCRATCH={prepared.files['scratch']}", *self.command]
        return list(self.command)

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        metric = self.spec.headline
        if self.regex is None:
            cpu = result.user_s + result.sys_s  # 0 for a command that only waits: no CPU value then
            return {WALL: result.wall_s, **({CPU: cpu} if cpu > 0 else {})}
        found = self.regex.findall(result.stdout) or self.regex.findall(result.stderr)
        if not found:
            raise WorkloadError(f"{self.spec.name} printed no number matching {self.regex.pattern!r} "
                                f"(last line: {result.last_line(100)!r})",
                                "check the command and the regex")
        text = found[-1][0] if isinstance(found[-1], tuple) else found[-1]
        try:
            return {metric: float(text)}
        except ValueError:
            raise WorkloadError(f"{self.spec.name}: {text!r} is not a number", "make the regex group match only the number") from None
