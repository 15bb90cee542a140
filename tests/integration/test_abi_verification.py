"""The ELF identity of what runs is checked against each configuration's label."""

from __future__ import annotations

import pytest

from shootout.base.errors import TargetError
from shootout.configs.specs import parse_spec
from shootout.measure.runner import verify_binaries
from shootout.places.host import HostTarget
from shootout.workloads.catalogue import workload
from shootout.workloads.contract import Context, Prepared


def test_host_m32_checks_its_kernels_as_32_bit_and_host_tools_as_native(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))
    config = parse_spec("host+m32")
    target = HostTarget(config)
    try:
        tree = workload("ptrtree")
        prepared = tree.prepare(Context(target, "ptrtree", {}))
        verify_binaries(config, target, tree, prepared)
        assert prepared.facts["elf"]["native kernel"]["elf_class"] == 32
        sha = workload("sha1-sparse")
        tools_only = Prepared()
        verify_binaries(config, target, sha, tools_only)  # /usr/bin/sha1sum is 64-bit: right for host
        assert tools_only.facts["elf"]["sha1sum"]["elf_class"] == 64
    finally:
        target.close()


def test_a_64_bit_kernel_under_a_32_bit_label_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))
    native = HostTarget(parse_spec("host"))
    try:
        tree = workload("ptrtree")
        prepared = tree.prepare(Context(native, "ptrtree", {}))  # built 64-bit
        with pytest.raises(TargetError, match="should run 32-bit"):
            verify_binaries(parse_spec("host+m32"), native, tree, prepared)
    finally:
        native.close()
