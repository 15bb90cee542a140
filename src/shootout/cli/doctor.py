"""What `shootout doctor` checks: every program shootout and its workloads use on the host."""

from __future__ import annotations

from shootout.base.errors import UsageError
from shootout.configs.specs import abi_problem, parse_spec
from shootout.execution.tools import Tool, find_tool
from shootout.net import HOST_TOOLS as NET_HOST_TOOLS
from shootout.net.rungs import RUNGS
from shootout.net.rungs import problem as rung_problem
from shootout.storage.scratch import MKFS
from shootout.workloads.catalogue import REGISTRY

# Programs shootout itself uses, besides the workloads' own tools.
CORE_TOOLS = (
    Tool("cc", "gcc"),
    Tool("mmdebstrap", "mmdebstrap"),
    Tool("arch-test", "arch-test"),  # mmdebstrap needs it for a userspace of another architecture
    Tool("chroot", "coreutils"),
    Tool("findmnt", "util-linux"),
    Tool("qemu-arm-static", "qemu-user-static"),
    Tool("losetup", "util-linux"),
    *(Tool(command[0], package) for command, package in MKFS.values()),  # scratch = { fs = ... }
)


def tool_report() -> list[str]:
    """One line per tool: present, or missing with the Debian package that provides it."""
    tools = {t.command: t for t in (*CORE_TOOLS, *NET_HOST_TOOLS)}
    users: dict[str, list[str]] = {}
    for name, cls in REGISTRY.items():
        for tool in cls.tools:
            tools.setdefault(tool.command, tool)
            users.setdefault(tool.command, []).append(name)
    lines = []
    for command, tool in sorted(tools.items()):
        used_by = f" (used by {', '.join(users[command])})" if command in users else ""
        if find_tool(command):
            lines.append(f"ok       {command}{used_by}")
        else:
            lines.append(f"missing  {command}{used_by}: apt-get install {tool.package}")
    for spec in ("host+m32", "host+mx32"):
        try:
            problem = abi_problem(parse_spec(spec))
        except UsageError as exc:  # not an x86 machine
            problem = exc.message
        lines.append(f"ok       {spec}" if problem is None else f"unusable {spec}: {problem}")
    for rung in RUNGS:  # tried for real in a throwaway pair of namespaces
        problem = rung_problem(rung)
        lines.append(f"ok       drop = {rung}" if problem is None else f"unusable drop = {rung}: {problem}")
    return lines
