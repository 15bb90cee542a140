"""Machine settings (sysctl, sysfs) on a fake /proc/sys and /sys tree: parsing, checks, switching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.parts.settings import SettingsPart, files
from shootout.system.journal import Journal, recover
from shootout.system.sysfiles import (
    SettingSwitch,
    same,
    sysctl_file,
    sysfs_file,
    write_problem,
)


@pytest.fixture
def root(tmp_path) -> Path:
    tree = tmp_path / "root"
    for path, content in {
        "proc/sys/vm/dirty_ratio": "20\n",
        "proc/sys/vm/dirty_bytes": "0\n",
        "proc/sys/vm/dirty_background_ratio": "10\n",
        "sys/module/zswap/parameters/enabled": "N\n",
        "sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n",
    }.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(content)
    return tree


def read(root: Path, real: str) -> str:
    return (root / real.lstrip("/")).read_text().strip()


def test_sysctl_names_map_to_proc_sys_like_sysctl8():
    assert sysctl_file("vm.dirty_ratio", "x").real == "/proc/sys/vm/dirty_ratio"
    assert sysctl_file("net/ipv4/conf/eth0.1/forwarding", "x").real == "/proc/sys/net/ipv4/conf/eth0.1/forwarding"
    for bad in ("vm..dirty", "../etc/passwd", "vm.dirty ratio", ""):
        with pytest.raises(UsageError, match="not a sysctl name"):
            sysctl_file(bad, "x")
    for bad in ("/etc/passwd", "/sys/../etc/passwd", "sys/module/x", "/sys/module//x"):
        with pytest.raises(UsageError, match="not a file under /sys"):
            sysfs_file(bad, "x")


def test_values_are_compared_as_the_kernel_spells_them_back():
    assert same("always [madvise] never", "madvise")
    assert same("Y", "1") and same("N", "off") and not same("Y", "0")
    assert same("4096\t131072  6291456", "4096 131072 6291456")
    assert not same("20", "50")


def test_parse_keeps_strings_and_rejects_what_cannot_be_a_setting():
    part = SettingsPart()
    spec = part.parse({"sysctl": {"vm.dirty_ratio": 50}, "sysfs": {"/sys/module/zswap/parameters/enabled": "Y"}}, "f")
    assert spec == {"sysctl": {"vm.dirty_ratio": "50"}, "sysfs": {"/sys/module/zswap/parameters/enabled": "Y"}}
    assert part.parse({"sysctl": {"vm.dirty_ratio": "5"}}, "f") == {"sysctl": {"vm.dirty_ratio": "5"}}
    with pytest.raises(UsageError, match="not a setting value"):
        part.parse({"sysfs": {"/sys/module/zswap/parameters/enabled": True}}, "f")
    with pytest.raises(UsageError, match="must be a table"):
        part.parse({"sysctl": "vm.dirty_ratio=5"}, "f")
    with pytest.raises(UsageError, match="exclude each other"):
        part.parse({"sysctl": {"vm.dirty_ratio": "5", "vm.dirty_bytes": "4096000"}}, "f")


def test_problems_are_found_without_leaving_a_change(root, tmp_path):
    j = Journal(tmp_path)
    missing = sysctl_file("vm.nosuch", "x")
    assert write_problem(missing, "1", root, j) == "no sysctl vm.nosuch on this kernel (no /proc/sys/vm/nosuch)"
    assert "is a directory" in write_problem(sysfs_file("/sys/module/zswap", "x"), "1", root, j)
    ratio = sysctl_file("vm.dirty_ratio", "x")
    (root / "proc/sys/vm/dirty_ratio").chmod(0o444)
    assert write_problem(ratio, "50", root, j) == "vm.dirty_ratio is read-only"
    (root / "proc/sys/vm/dirty_ratio").chmod(0o644)
    assert write_problem(ratio, "50", root, j) is None
    assert read(root, "/proc/sys/vm/dirty_ratio") == "20"  # tried, then put back at once
    assert j.pending == []


def switch_for(root: Path, journal: Journal) -> SettingSwitch:
    part = SettingsPart(root)
    dirty = files(part.parse({"sysctl": {"vm.dirty_ratio": "50"}, "sysfs": {"/sys/module/zswap/parameters/enabled": "Y"}}, "f"))
    thp = files(part.parse({"sysfs": {"/sys/kernel/mm/transparent_hugepage/enabled": "never"}}, "f"))
    return SettingSwitch({"dirty": dirty, "thp": thp}, journal, root)


def test_each_configuration_runs_with_its_values_and_the_machines_own_elsewhere(root, tmp_path):
    j = Journal(tmp_path)
    switch = switch_for(root, j)
    switch.apply("dirty")
    assert switch.in_force() == {"/sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
                                 "/sys/module/zswap/parameters/enabled": "Y", "vm.dirty_ratio": "50"}
    switch.apply("thp")  # names neither dirty_ratio nor zswap: the originals come back
    assert (read(root, "/proc/sys/vm/dirty_ratio"), read(root, "/sys/module/zswap/parameters/enabled")) == ("20", "N")
    assert read(root, "/sys/kernel/mm/transparent_hugepage/enabled") == "never"
    switch.apply("plain")  # a configuration without settings: everything original
    assert read(root, "/sys/kernel/mm/transparent_hugepage/enabled") == "always [madvise] never"
    switch.apply("dirty")
    assert len(j.pending) == 3  # one entry per file, however often it is switched
    assert switch.close() == []
    assert read(root, "/proc/sys/vm/dirty_ratio") == "20" and read(root, "/sys/module/zswap/parameters/enabled") == "N"
    assert j.pending == []


def test_a_killed_run_leaves_the_originals_in_its_journal(root, tmp_path):
    journals = tmp_path / "journals"
    journals.mkdir()
    j = Journal(journals)
    switch_for(root, j).apply("dirty")
    records = [json.loads(line) for line in j.path.read_text().splitlines()]
    assert {(r["undo"][0]["write"], r["undo"][0]["content"]) for r in records} == {
        (str(root / "proc/sys/vm/dirty_ratio"), "20"), (str(root / "sys/module/zswap/parameters/enabled"), "N")}
    j.path.rename(journals / "999999-1-1.jsonl")  # as if written by a process that is gone
    undone, errors = recover(journals)
    assert errors == [] and len(undone) == 2
    assert read(root, "/proc/sys/vm/dirty_ratio") == "20" and read(root, "/sys/module/zswap/parameters/enabled") == "N"


def test_dirty_bytes_in_force_is_what_is_restored(root, tmp_path):
    """With vm.dirty_bytes in force (dirty_ratio reads 0), restoring means writing dirty_bytes:
    the kernel then zeroes dirty_ratio itself."""
    (root / "proc/sys/vm/dirty_ratio").write_text("0\n")
    (root / "proc/sys/vm/dirty_bytes").write_text("4096000\n")
    j = Journal(tmp_path)
    switch = SettingSwitch({"r": files({"sysctl": {"vm.dirty_ratio": "50"}})}, j, root)
    switch.apply("r")
    record = json.loads(j.path.read_text().splitlines()[0])
    assert record["undo"] == [{"write": str(root / "proc/sys/vm/dirty_bytes"), "content": "4096000"}]
