"""The catalogue: every built-in workload by name, and the suites derived from what each declares.

Adding a workload: one module with a WORKLOADS tuple, and its name in MODULES. Its spec
(category), `suites`, `tools` and `packages` are all the catalogue, the suites and the
userspaces' package lists need.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from shootout.base.errors import UsageError
from shootout.workloads import (
    browser,
    compress,
    cpu,
    crypto,
    ddwrite,
    fio,
    iozone,
    js,
    mbw,
    media,
    memory,
    net,
    sevenzip,
    smallfiles,
    sourcebuild,
    swap,
    vpn,
)
from shootout.workloads import compile as build_workload
from shootout.workloads.contract import Workload
from shootout.workloads.kernel import CompiledWorkload
from shootout.workloads.user import CommandWorkload, workload_name

MODULES = (cpu, memory, mbw, crypto, media, compress, sevenzip, build_workload, sourcebuild, js, browser, fio, iozone,
           ddwrite, smallfiles, swap, net, vpn)
REGISTRY: dict[str, type[Workload]] = {cls.spec.name: cls for module in MODULES for cls in module.WORKLOADS}

# The default suite: the native workloads of the headline comparison.
DEFAULT_SUITE = "native"
# Suites whose workloads run with their reduced `quick` parameters.
REDUCED_SUITES = {"quick"}
# The quick suite: the compiled kernels of these categories that run without root.
QUICK_CATEGORIES = ("cpu", "memory")


def in_quick(cls: type[Workload]) -> bool:
    """A kernel shootout compiles (no tool to install), of a quick category, that needs no root."""
    return issubclass(cls, CompiledWorkload) and cls.spec.category in QUICK_CATEGORIES and not cls.needs_root


def suites() -> dict[str, list[str]]:
    """Suite name -> workloads: the declared suites, quick, full (everything), each category."""
    named: dict[str, list[str]] = {}
    categories: dict[str, list[str]] = {}
    for name, cls in REGISTRY.items():
        for suite_name in cls.suites:
            named.setdefault(suite_name, []).append(name)
        categories.setdefault(cls.spec.category, []).append(name)
    quick = [name for name, cls in REGISTRY.items() if in_quick(cls)]
    return {**named, "quick": quick, "full": list(REGISTRY), **categories}


def workload(name: str) -> Workload:
    try:
        return REGISTRY[name]()
    except KeyError:
        raise UsageError(f"unknown workload {name!r}", "list them with: shootout workloads") from None


def renamed(definition: dict[str, Any], where: str) -> Workload:
    """A [[workload]] table with builtin = NAME: that built-in workload under the table's name, so
    that one run can hold it twice with parameters of its own each ([params.NAME]), e.g. the
    vpn workload once per tunnel kind."""
    name = workload_name(definition, where)
    builtin = definition.get("builtin")
    if unknown := sorted(set(definition) - {"name", "builtin"}):
        raise UsageError(f"{where}: workload {name}: {', '.join(unknown)} beside builtin",
                         f"a built-in workload takes only name and builtin here; its parameters go in [params.{name}]")
    if not isinstance(builtin, str) or builtin not in REGISTRY:
        raise UsageError(f"{where}: workload {name}: builtin = {builtin!r} is not a built-in workload",
                         "list them with: shootout workloads")
    if name in REGISTRY:
        raise UsageError(f"{where}: workload {name} is a built-in workload's own name", "give it another name")
    instance = REGISTRY[builtin]()
    instance.spec = replace(instance.spec, name=name)  # type: ignore[misc]  # the class's spec, renamed
    return instance


def user_workload(definition: dict[str, Any], where: str) -> Workload:
    """A [[workload]] table: a command, or a built-in workload renamed."""
    return renamed(definition, where) if "builtin" in definition else CommandWorkload(definition, where)


def suite(name: str) -> list[str]:
    try:
        return suites()[name]
    except KeyError:
        raise UsageError(f"unknown suite {name!r}", "use one of: " + ", ".join(suites())) from None


def suite_params(name: str) -> dict[str, dict[str, Any]]:
    """Per-workload parameter overrides a suite implies."""
    if name not in REDUCED_SUITES:
        return {}
    return {w: dict(REGISTRY[w].quick) for w in suite(name)}
