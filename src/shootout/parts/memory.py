"""The memory limit of a configuration: its workload runs in a cgroup of that size.

    [[config]]
    memory = "1G"
    swap = { kind = "zswap", size = "2G" }   # optional: how much swap the limit allows

Spec (Config.parts["memory"]): {"limit": bytes, "swap": bytes of swap allowed, or None for
the machine's own swap unlimited}; the swap allowance comes from the same table's `swap`
(0 for kind "none"). Every trial of the run, also of configurations without a limit, runs in
a fresh cgroup (shootout.swap.limit), so its OOM kills, pressure stall time and swap
traffic are counted from zero and stored with it (Trial.observed["memory"]).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from shootout.base.model import Config, Metric
from shootout.execution.placefacts import TargetFacts
from shootout.parts.part import Part, PartSession
from shootout.storage.scratch import Scratches
from shootout.swap import limit as memory
from shootout.swap.spec import parse_memory, parse_swap
from shootout.system.journal import Journal


class MemoryPart(Part):
    name = "memory"
    keys = ("memory",)
    observes = (
        Metric("psi_some_ms", "ms", "memory stall time of some of the workload's tasks (PSI, cgroup or system)"),
        Metric("psi_full_ms", "ms", "memory stall time of all of the workload's tasks at once (PSI)"),
        Metric("oom_kills", "processes", "OOM kills in the workload's cgroup"),
        Metric("mem_peak_mib", "MiB", "the cgroup's peak memory use"),
        Metric("swap_peak_mib", "MiB", "the cgroup's peak swap use"),
        Metric("pswpin", "pages", "pages swapped in from a swap device, machine-wide"),
        Metric("pswpout", "pages", "pages written out to a swap device, machine-wide (writes it refused included)"),
    )

    def parse(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        swap = parse_swap(table, where).as_dict() if "swap" in table else None
        return {"limit": parse_memory(table["memory"], where), "swap": memory.swap_allowed(swap)}

    def problem(self, spec: Mapping[str, Any]) -> str | None:
        return memory.problem(spec["limit"], spec["swap"])

    def sizing(self, spec: Mapping[str, Any], facts: TargetFacts) -> TargetFacts:
        limit = int(spec["limit"])
        return dataclasses.replace(facts, memory_limit=limit,
                                   memory_bytes=min(facts.memory_bytes or limit, limit),
                                   available_bytes=min(facts.available_bytes or limit, limit))

    def open(self, configs: Sequence[Config], journal: Journal, scratches: Scratches) -> PartSession | None:
        if not any(self.name in c.parts for c in configs):
            return None
        return _Session(memory.TrialGroups(journal))


def _limits(config: Config) -> tuple[int | None, int | None]:
    """(limit, swap allowed) of a configuration; one without a limit still gets its swap setup's."""
    if (spec := config.parts.get(MemoryPart.name)) is not None:
        return spec["limit"], spec["swap"]
    return None, memory.swap_allowed(config.parts.get("swap"))


class _Session(PartSession):
    def __init__(self, groups: memory.TrialGroups) -> None:
        self.groups = groups

    def apply(self, config: Config) -> None:
        self.groups.begin(*_limits(config))

    def in_force(self, config: Config) -> dict[str, Any]:
        return {"cgroup": dict(self.groups.limits)}

    def wrap(self, config: Config) -> list[str]:
        return self.groups.wrap()

    def after_trial(self, config: Config) -> dict[str, Any]:
        return self.groups.end()

    def facts(self, config: Config) -> dict[str, Any]:
        return dict(self.groups.facts)

    def close(self) -> list[str]:
        return self.groups.close()
