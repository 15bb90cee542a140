"""The catalogue: every built-in workload by name, and the named suites."""

from __future__ import annotations

from shootout.errors import UsageError
from shootout.workloads import cpu
from shootout.workloads.base import Workload

REGISTRY: dict[str, type[Workload]] = {cls.spec.name: cls for module in (cpu,) for cls in module.WORKLOADS}

# The default suite: the four native workloads of the headline comparison.
DEFAULT_SUITE = "native"


def suites() -> dict[str, list[str]]:
    categories: dict[str, list[str]] = {}
    for name, cls in REGISTRY.items():
        categories.setdefault(cls.spec.category, []).append(name)
    native = [n for n in ("intmix", "ptrtree", "membw", "sha1-sparse") if n in REGISTRY]
    return {"native": native, "quick": list(REGISTRY), "full": list(REGISTRY), **categories}


def workload(name: str) -> Workload:
    try:
        return REGISTRY[name]()
    except KeyError:
        raise UsageError(f"unknown workload {name!r}", "list them with: shootout workloads") from None


def suite(name: str) -> list[str]:
    try:
        return suites()[name]
    except KeyError:
        raise UsageError(f"unknown suite {name!r}", "use one of: " + ", ".join(suites())) from None
