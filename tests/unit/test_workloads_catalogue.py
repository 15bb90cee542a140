"""The catalogue is the registry: every workload declares itself completely, and the suites,
the userspace package lists and the default parameters all derive from those declarations."""

from __future__ import annotations

import json
import re

import pytest

from shootout.base.errors import ToolMissing
from shootout.base.model import Config, Metric, WorkloadSpec
from shootout.base.units import UNITS
from shootout.execution.placefacts import TargetFacts
from shootout.places.host import HostTarget
from shootout.workloads import catalogue as registry
from shootout.workloads import compile, compress, crypto, js, media, memory, sevenzip
from shootout.workloads.catalogue import MODULES, REGISTRY, suites
from shootout.workloads.contract import Tool
from shootout.workloads.debpackages import workload_packages
from shootout.workloads.user import CommandWorkload

CLASSES = list(REGISTRY.values())
CATEGORIES = {"cpu", "crypto", "memory", "media", "compress", "build", "js", "storage", "swap", "net", "vpn", "browser"}
SMALL = TargetFacts(cores=2, memory_bytes=2 << 30, available_bytes=1 << 30, caches_kib={"l1": 32, "l2": 512})
BIG = TargetFacts(cores=64, memory_bytes=256 << 30, available_bytes=200 << 30,
                  caches_kib={"l1": 48, "l2": 2048, "l3": 64 * 1024})


def test_the_registry_holds_every_module_workload_once():
    declared = [cls for module in MODULES for cls in module.WORKLOADS]
    assert CLASSES == declared and len(REGISTRY) == len(declared)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.spec.name)
def test_spec_is_complete(cls):
    spec = cls.spec
    names = [m.name for m in spec.metrics]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", n) for n in names)
    assert all(m.unit in UNITS and m.description for m in spec.metrics)
    assert spec.headline in names
    assert spec.category in CATEGORIES
    assert spec.reproduces and spec.description
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", p) for p in cls.debian_packages())


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.spec.name)
def test_quick_overrides_are_default_parameters(cls):
    default = cls().default_params(SMALL)
    assert set(cls.quick) <= set(default)
    json.dumps(default), json.dumps({**default, **cls.quick})  # stored with the run


def test_suites_come_from_the_declarations():
    found = suites()
    assert found["native"] == [n for n, c in REGISTRY.items() if "native" in c.suites]
    assert found["native"] == ["intmix", "ptrtree", "membw", "sha1-sparse"]
    assert found["full"] == list(REGISTRY)
    for name, cls in REGISTRY.items():
        assert name in found[cls.spec.category]
    assert registry.suite_params("quick")["memlat"] == memory.MemLatency.quick
    assert registry.suite_params("native") == {}


def test_quick_is_the_cpu_and_memory_kernels_that_run_without_root():
    quick = suites()["quick"]
    assert quick == ["intmix", "ptrtree", "maxalloc", "memlat"]
    assert all(REGISTRY[n].spec.category in ("cpu", "memory") and not REGISTRY[n].needs_root for n in quick)
    assert {n for n, c in REGISTRY.items() if c.needs_root} >= {"tcp-veth", "drop-rate", "vpn", "membw"}
    assert suites()["native"] == ["intmix", "ptrtree", "membw", "sha1-sparse"]  # the main job's: unchanged


def test_default_parameters_are_sized_by_the_target_facts_not_this_machine():
    assert crypto.OpensslSpeed().default_params(SMALL)["threads"] == 2
    assert crypto.OpensslSpeed().default_params(BIG)["threads"] == 64
    assert sevenzip.SevenZip().default_params(BIG)["threads"] == 64
    assert compile.Build().default_params(SMALL)["jobs"] == 2
    small, big = memory.MemBandwidth().default_params(SMALL), memory.MemBandwidth().default_params(BIG)
    assert small["caches_kib"] == SMALL.caches_kib and big["levels_kib"] == {"l1": 12, "l2": 512, "l3": 16384}
    assert big["size_mib"] == 256 and memory.MemBandwidth().default_params(TargetFacts())["caches_kib"]
    assert memory.MaxAlloc().default_params(SMALL)["limit_mib"] == 512  # half of the 1 GiB available
    assert memory.MaxAlloc().default_params(BIG)["limit_mib"] == 4608  # past what 32-bit can address
    assert crypto.OpensslSpeed().default_params(TargetFacts())["threads"] == 1  # unknown: one


class Chromium(CommandWorkload):
    """A workload with a big package: on first use only, never in every new userspace."""

    tools = (Tool("chromium", "chromium"),)
    packages = ("fonts-liberation",)
    preinstalled = False


def test_userspace_packages_are_derived_and_big_ones_wait_for_first_use(monkeypatch):
    at_creation = workload_packages()
    for cls in CLASSES:
        assert (set(cls.debian_packages()) <= set(at_creation)) == cls.preinstalled
    assert {"gcc", "libc6-dev", "flac", "lame", "7zip", "zstd", "nodejs", "make"} <= set(at_creation)
    Chromium.spec = WorkloadSpec("chromium", "browser", "a browser", (Metric("score", "runs/s", "x"),), "score")
    monkeypatch.setitem(REGISTRY, "chromium", Chromium)
    assert "chromium" not in workload_packages() and "fonts-liberation" not in workload_packages()
    assert {"chromium", "fonts-liberation"} <= set(workload_packages(at_creation=False))


class NoTools(HostTarget):
    """The host, but without one command: the shape of a userspace missing a package."""

    def __init__(self, missing: set[str]) -> None:
        super().__init__(Config(name="bare"))
        self.missing = missing

    def which(self, tool: str) -> str | None:
        return None if tool in self.missing else super().which(tool)


@pytest.mark.parametrize(("cls", "tool", "package"), [
    (crypto.OpensslSpeed, "openssl", "openssl"), (crypto.Sha1Sparse, "sha1sum", "coreutils"),
    (media.Flac, "flac", "flac"), (media.Lame, "lame", "lame"), (compress.Compress, "xz", "xz-utils"),
    (compress.Compress, "zstd", "zstd"), (compile.Build, "make", "make"), (compile.Build, "cc", "gcc"),
    (js.JavaScript, "node", "nodejs"), (memory.MemBandwidth, "cc", "gcc"), (sevenzip.SevenZip, "7zz", "7zip"),
], ids=lambda v: v if isinstance(v, str) else v.spec.name)
def test_missing_tool_names_the_debian_package_and_asks_for_it(cls, tool, package):
    missing = {tool} | ({"7z", "7za"} if cls is sevenzip.SevenZip else set())
    target = NoTools(missing)
    try:
        with pytest.raises(ToolMissing) as err:
            cls().check_tools(target)
        assert err.value.package == package
        assert package in str(err.value) and "bare" in str(err.value)
        assert "\n" not in str(err.value)
        assert package in cls().required_packages(target)  # what a userspace gets installed
        assert target.provide([package]) == []  # the host is never changed
    finally:
        target.close()


def test_7zip_accepts_any_of_its_commands():
    target = NoTools({"7z", "7za"})  # only 7zz, from the package 7zip that install.sh installs
    try:
        sevenzip.SevenZip().check_tools(target)
        assert sevenzip.SevenZip().required_packages(target) == []
    finally:
        target.close()
