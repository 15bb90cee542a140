"""The workload contract: what the runner calls, in this order, for every workload of a run.

  0. default_params(facts): parameters that fix the work, sized by the *baseline target's*
     facts (cores, memory, caches), then overridden by the suite and the user.
  1. required_packages(target) -> target.provide(...): a userspace gets what it lacks.
     check_tools(target): a missing tool is an error naming its Debian package.
  2. prepare(ctx) on every configuration: put inputs into the target, compile, probe;
     returns a Prepared handle (paths as seen inside the target, facts, tool versions).
  3. calibrate(ctx, prepared) once, on the first configuration: parameters that fix the
     amount of work (e.g. iterations), used by every configuration.
  4. argv(prepared, params) -> the command of one trial, run as a fresh process;
     parse(result, params) -> {metric name: value}; WorkloadError when there is no number.
  5. cleanup(ctx, prepared) after the last trial, and when the workload fails.
A workload declares once, as class attributes, what the catalogue and the userspaces derive
from it: its spec (name, category, metrics), suites, tools and Debian packages.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from shootout.base.errors import ToolMissing, WorkloadError
from shootout.base.model import Config, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.tools import Tool
from shootout.parts import RunParts, sized
from shootout.parts.part import PartSession
from shootout.places.target import Target
from shootout.system.journal import Journal

# A trial should last at least this long so timer resolution and start-up do not dominate.
# Every workload's parameter beside its own: how long one trial may run before it is stopped
TIMEOUT_PARAM, DEFAULT_TIMEOUT_S = "timeout_s", 1800.0
MIN_TRIAL_S = 0.3
# Work sized from one measurement aims this much above the minimum, so jitter stays above it.
MARGIN = 1.3
# Workload.cpus of a trial that chooses its own CPUs (taskset, iperf3 -A): it runs on every CPU,
# never held on the reserved ones (system/cpureserve.py).
EVERY_CPU = 1 << 20


@dataclass
class Prepared:
    files: dict[str, str] = field(default_factory=dict)  # role -> path inside the target
    facts: dict[str, Any] = field(default_factory=dict)  # ELF class, input hashes, flags
    versions: dict[str, str] = field(default_factory=dict)  # tool -> version: any difference is a confounder


@dataclass
class Context:
    """Where and with what a workload prepares, calibrates and cleans up on one configuration."""

    target: Target
    name: str  # the workload's
    params: dict[str, Any]
    journal: Journal | None = None
    parts: RunParts | None = None  # the run's configuration parts (the runner's), for a workload that uses one
    _dir: str | None = field(default=None, init=False)

    @property
    def config(self) -> Config:
        return self.target.config

    @property
    def facts(self) -> TargetFacts:
        """The target's resources as this configuration's trials get them (its parts applied)."""
        return sized(self.config, self.target.probe())

    def part(self, name: str) -> PartSession:
        """The run's session of a configuration part, e.g. "network" (the namespaces it made)."""
        session = self.parts.session(name) if self.parts is not None else None
        if session is None:
            raise WorkloadError(f"{self.name} needs the run's {name} part, which is not open",
                                "run it with `shootout run` (a test passes RunParts to its Context)")
        return session

    def workdir(self) -> str:
        """The workload's own directory in the target's tmpfs work directory (made on first use)."""
        if self._dir is None:
            self._dir = self.target.mkdir(f"{self.target.workdir()}/{self.name}")
        return self._dir

    def put(self, name: str, content: str | bytes | Path) -> str:
        """Write text, bytes or a host file's content (a trial's script, a job file, a tarball) into
        the work directory as `name`; its path in the target."""
        return self.target.put(content.encode() if isinstance(content, str) else content, f"{self.workdir()}/{name}")

    def discard_workdir(self) -> None:
        if self._dir is not None:
            self.target.remove(self._dir)
            self._dir = None


class Workload(ABC):
    spec: ClassVar[WorkloadSpec]
    suites: ClassVar[tuple[str, ...]] = ()  # named suites besides quick, full and its category
    tools: ClassVar[tuple[Tool, ...]] = ()
    packages: ClassVar[tuple[str, ...]] = ()  # Debian packages it needs besides its tools'
    components: ClassVar[tuple[str, ...]] = ()  # archive components they come from besides main
    # False for big packages (a browser): a userspace gets them on first use, not at creation.
    preinstalled: ClassVar[bool] = True
    quick: ClassVar[dict[str, Any]] = {}  # overrides for the quick suite (less work)
    # Why it cannot run without root even on the host ("" where it can): kept out of the quick
    # suite, marked in the catalogue.
    needs_root: ClassVar[str] = ""
    # Why a trial takes ten seconds or more at its defaults ("" where it does not): marked in the catalogue.
    slow: ClassVar[str] = ""

    @classmethod
    def debian_packages(cls) -> tuple[str, ...]:
        """Every Debian package it needs inside a userspace."""
        return tuple(dict.fromkeys([t.package for t in cls.tools] + list(cls.packages)))

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        """Parameters that fix the work before calibration (sizes, counts, threads)."""
        return {}

    def cpus(self, params: dict[str, Any]) -> int:
        """How many CPUs a trial keeps busy at once (its threads, processes, -j): with reserved
        CPUs it runs on them when that many are reserved, else on every CPU (EVERY_CPU: it
        chooses its own CPUs)."""
        return 1

    def required_packages(self, target: Target) -> list[str]:
        """Packages the target must get: those of missing tools, and the declared ones."""
        return [t.package for t in self.tools if target.which(t.command) is None] + list(self.packages)

    def check_tools(self, target: Target) -> None:
        for tool in self.tools:
            if target.which(tool.command) is None:
                raise ToolMissing(tool.command, tool.package, where=target.config.display, components=self.components)

    def prepare(self, ctx: Context) -> Prepared:
        return Prepared()

    def calibrate(self, ctx: Context, prepared: Prepared) -> dict[str, Any]:
        return ctx.params

    @abstractmethod
    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]: ...

    @abstractmethod
    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]: ...

    def cleanup(self, ctx: Context, prepared: Prepared | None) -> None:
        """Remove what prepare() put into the target (its work directory)."""
        ctx.discard_workdir()


def repeats_for(seconds: float, minimum: float = MIN_TRIAL_S) -> int:
    """How many times to repeat work that took `seconds` once so the repeats take `minimum`."""
    if not seconds > 0:
        raise ValueError(f"a measured time must be positive, not {seconds}")
    return max(1, math.ceil(MARGIN * minimum / seconds))


_KV = re.compile(r"^([a-z0-9_]+)\s+([-+0-9.eEinfa]+)\s*$")


def parse_key_values(stdout: str) -> dict[str, float]:
    """Parse the `name value` lines the native kernels print."""
    values = {}
    for line in stdout.splitlines():
        if m := _KV.match(line.strip()):
            values[m.group(1)] = float(m.group(2))
    return values


def require(values: dict[str, float], names: dict[str, str], result: ProcResult) -> dict[str, float]:
    """Pick output keys -> metric names; a missing key is a WorkloadError quoting the output."""
    picked = {}
    for key, metric in names.items():
        if key not in values:
            raise WorkloadError(f"no {key!r} in the output (last line: {result.last_line()!r})",
                                "run the command by hand to see what it prints")
        picked[metric] = values[key]
    return picked
