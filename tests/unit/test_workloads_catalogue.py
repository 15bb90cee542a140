"""Every workload of issue 4 declares itself completely, and a missing tool names its package."""

from __future__ import annotations

import json
import re

import pytest

from shootout.errors import ToolMissing
from shootout.model import Config
from shootout.targets.host import HostTarget
from shootout.units import UNITS
from shootout.workloads import compile, compress, crypto, js, media, memory, sevenzip

MODULES = (crypto, memory, media, compress, sevenzip, compile, js)
CLASSES = [cls for module in MODULES for cls in module.WORKLOADS]
NAMES = {"openssl-speed", "sha1-sparse", "membw", "maxalloc", "memlat", "7zip", "flac", "lame", "compress",
         "build", "js"}


def test_the_catalogue_has_exactly_the_named_workloads():
    assert sorted(cls.spec.name for cls in CLASSES) == sorted(NAMES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.spec.name)
def test_spec_is_complete(cls):
    spec = cls.spec
    names = [m.name for m in spec.metrics]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", n) for n in names)
    assert all(m.unit in UNITS and m.description for m in spec.metrics)
    assert spec.headline in names
    assert spec.category in {"crypto", "memory", "media", "compress", "build", "js"}
    assert spec.reproduces and spec.description


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.spec.name)
def test_quick_params_reduce_the_default_ones(cls):
    default, quick = cls().default_params(), cls.quick_params()
    assert set(quick) == set(default)
    json.dumps(default), json.dumps(quick)  # stored with the run


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
    (js.JavaScript, "node", "nodejs"), (memory.MemBandwidth, "cc", "gcc"),
], ids=lambda v: v if isinstance(v, str) else v.spec.name)
def test_missing_tool_names_the_debian_package(cls, tool, package):
    target = NoTools({tool})
    try:
        with pytest.raises(ToolMissing) as err:
            cls().prepare(target, cls.quick_params())
        assert err.value.package == package
        assert package in str(err.value) and "bare" in str(err.value)
        assert "\n" not in str(err.value)
    finally:
        target.close()


def test_7zip_accepts_any_of_its_commands_and_otherwise_asks_for_the_7zip_package():
    target = NoTools({"7zz", "7z", "7za"})
    try:
        with pytest.raises(ToolMissing, match="apt-get install 7zip"):
            sevenzip.SevenZip().prepare(target, sevenzip.SevenZip.quick_params())
    finally:
        target.close()
