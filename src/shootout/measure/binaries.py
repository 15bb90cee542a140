"""What a workload runs on each side: the same programs (provide_alike) and binaries of the
ABI the configuration is labelled with (verify_binaries)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from shootout.base.model import Config
from shootout.configs.abi import verify_abi
from shootout.execution.elf import tool_elf
from shootout.places.target import Target
from shootout.userspace.apt import common_versions
from shootout.workloads.contract import Prepared, Workload


def provide_alike(targets: Sequence[Target], workload: Workload,
                  installing: Callable[[Target, list[str]], None] = lambda target, packages: None) -> list[str]:
    """What the workload needs, installed where missing (a userspace) at the newest version
    every side is offered, so that the sides run the same program; returns apt's warnings.
    `installing` hears of each install before it starts (a browser's takes minutes).
    A version that still differs shows in Prepared.versions: a confounder."""
    wanted = [workload.required_packages(t) for t in targets]
    # every side's versions of all the workload's packages: a side that has them counts too
    offered = [t.offers(workload.debian_packages(), workload.components) for t in targets]
    versions = common_versions([o for o, _ in offered])
    for target, packages in zip(targets, wanted):
        if missing := target.lacks(packages):
            installing(target, missing)
        target.provide(packages, workload.components, versions)
    return [line for _, warnings in offered for line in warnings]


def verify_binaries(config: Config, target: Target, workload: Workload, prepared: Prepared) -> None:
    """Record the ELF identity of every binary a workload runs and check it against the label:
    a '32-bit' configuration that ran a 64-bit binary is an error, not a result."""
    elves = {tool.command: tool_elf(target, tool.command) for tool in workload.tools}
    # External tools are the userspace's own: a compiler ABI option (host+m32) applies
    # only to the native kernels built for it.
    userspace_abi = dataclasses.replace(config, abi=None)
    for elf in elves.values():
        verify_abi(userspace_abi, elf)
    if "binary" in prepared.facts:
        elves["native kernel"] = prepared.facts["binary"]
        verify_abi(config, prepared.facts["binary"])
    prepared.facts["elf"] = {tool: {k: v for k, v in elf.items() if k != "path"} for tool, elf in elves.items() if elf}
