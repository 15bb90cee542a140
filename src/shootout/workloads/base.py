"""The workload interface: prepare per configuration, calibrate once, run, parse.

A workload's lifecycle inside a run:
  1. prepare(target, params) on every configuration: check tools, compile, make inputs;
     returns a Prepared handle (paths as seen inside the target, facts such as tool versions).
  2. calibrate(target, prepared, params) once, on the first configuration: returns the
     parameters that fix the amount of work (e.g. iterations), used by every configuration.
  3. argv(prepared, params) -> the command of one trial, run as a fresh process.
  4. parse(result, params) -> {metric name: value}; raises WorkloadError when no number.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from shootout.errors import ToolMissing, WorkloadError
from shootout.model import WorkloadSpec
from shootout.targets.base import Target
from shootout.targets.process import ProcResult

# A trial should last at least this long so timer resolution and start-up do not dominate.
MIN_TRIAL_S = 0.3


@dataclass(frozen=True)
class Tool:
    command: str
    package: str  # Debian package that provides it


@dataclass
class Prepared:
    files: dict[str, str] = field(default_factory=dict)  # role -> path inside the target
    facts: dict[str, Any] = field(default_factory=dict)  # tool versions, ELF class, input hashes


class Workload(ABC):
    spec: ClassVar[WorkloadSpec]
    tools: ClassVar[tuple[Tool, ...]] = ()

    def default_params(self) -> dict[str, Any]:
        """Parameters that fix the work before calibration (sizes, counts)."""
        return {}

    @classmethod
    def quick_params(cls) -> dict[str, Any]:
        """Reduced work for the quick suite; the full work unless a workload says otherwise."""
        return cls().default_params()

    def check_tools(self, target: Target) -> None:
        for tool in self.tools:
            if target.which(tool.command) is None:
                raise ToolMissing(tool.command, tool.package, where=target.config.display)

    def prepare(self, target: Target, params: dict[str, Any]) -> Prepared:
        self.check_tools(target)
        return Prepared()

    def calibrate(self, target: Target, prepared: Prepared, params: dict[str, Any]) -> dict[str, Any]:
        return params

    @abstractmethod
    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]: ...

    @abstractmethod
    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]: ...


_KV = re.compile(r"^([a-z0-9_]+)\s+([-+0-9.eEinfa]+)\s*$")


def parse_key_values(stdout: str) -> dict[str, float]:
    """Parse the `name value` lines the native kernels print."""
    values = {}
    for line in stdout.splitlines():
        if m := _KV.match(line.strip()):
            values[m.group(1)] = float(m.group(2))
    return values


def require(values: dict[str, float], names: dict[str, str], output: str) -> dict[str, float]:
    """Pick output keys -> metric names; a missing key is a WorkloadError quoting the output."""
    picked = {}
    for key, metric in names.items():
        if key not in values:
            tail = output.strip().splitlines()[-1:] or ["<no output>"]
            raise WorkloadError(f"no {key!r} in the output (last line: {tail[0][:120]!r})",
                                "run the command by hand to see what it prints")
        picked[metric] = values[key]
    return picked
