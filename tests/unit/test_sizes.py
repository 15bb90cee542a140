"""Sizes derived from machine facts fit the smallest side (workloads/sizes.py), over fixture facts:
the issue's machine (a 480 MiB L3), a 1 GiB VM, and an i386 userspace beside an amd64 one."""

from __future__ import annotations

from dataclasses import replace

from test_targets_probe import ScriptedTarget

from shootout.execution.placefacts import TargetFacts, sizing_from
from shootout.workloads import memory, swap
from shootout.workloads.diskscratch import free_bytes
from shootout.workloads.sizes import (
    ADDRESS_SPACE_32_MIB,
    limited_by,
    process_budget_mib,
    smallest_side,
)

GIB = 1 << 30
CACHES = {"l1": 32, "l2": 512, "l3": 480 << 10}  # the L3 the machine reads: 480 MiB
AMD64 = TargetFacts(cores=2, memory_bytes=24 * GIB, available_bytes=22 * GIB, caches_kib=CACHES, address_bits=64)
I386 = TargetFacts(cores=2, memory_bytes=24 * GIB, available_bytes=22 * GIB, caches_kib=CACHES, address_bits=32)
VM_1G = TargetFacts(cores=2, memory_bytes=GIB, available_bytes=800 << 20, caches_kib=CACHES, address_bits=64)


def test_the_smallest_side_has_the_tightest_limits_and_the_baselines_caches() -> None:
    other = TargetFacts(cores=8, memory_bytes=GIB, available_bytes=800 << 20, caches_kib={"l1": 64},
                        memory_limit=512 << 20, address_bits=32)
    both = smallest_side([AMD64, other])
    assert both == TargetFacts(cores=2, memory_bytes=GIB, available_bytes=800 << 20, caches_kib=CACHES,
                               memory_limit=512 << 20, address_bits=32)
    assert smallest_side([AMD64, TargetFacts()]) == AMD64  # an unknown limit does not tighten


def test_membw_far_buffers_fit_one_32_bit_process() -> None:
    alone = memory.MemBandwidth().default_params(AMD64)
    assert alone["size_mib"] == 1920  # 4 x L3 where every side is 64-bit
    params = memory.MemBandwidth().default_params(smallest_side([AMD64, I386]))
    assert 2 * params["size_mib"] <= ADDRESS_SPACE_32_MIB and params["size_mib"] == 1024
    assert params["levels_kib"] == alone["levels_kib"]  # only the far buffer is cut
    assert limited_by(smallest_side([AMD64, I386])) == "a 32-bit side's address space"


def test_membw_far_buffers_fit_a_1_gib_vm() -> None:
    facts = smallest_side([AMD64, VM_1G])
    size = memory.MemBandwidth().default_params(facts)["size_mib"]
    assert 2 * size <= 400 and size == 192  # mlocked: at most half of the 800 MiB available
    assert limited_by(facts) == "the smallest side's available memory"


def test_memlat_largest_buffer_fits_the_smallest_side() -> None:
    assert max(memory.MemLatency().default_params(smallest_side([AMD64, I386]))["sizes_kib"]) == 256 << 10
    tiny = TargetFacts(available_bytes=300 << 20)  # a budget of 150 MiB
    sizes = memory.MemLatency().default_params(smallest_side([AMD64, tiny]))["sizes_kib"]
    assert max(sizes) == 64 << 10 and sizes == [k for k in memory.MEMLAT_SIZES_KIB if k <= 64 << 10]


def test_maxalloc_is_bounded_by_the_smallest_sides_memory_not_by_32_bits() -> None:
    # past 4 GiB on purpose: the 32-bit ceiling is what it shows
    assert memory.MaxAlloc().default_params(smallest_side([AMD64, I386]))["limit_mib"] == 4608
    assert memory.MaxAlloc().default_params(smallest_side([AMD64, VM_1G]))["limit_mib"] == 384


def test_tabs_fit_the_smallest_sides_memory_and_a_32_bit_tab() -> None:
    params = swap.Tabs().default_params(smallest_side([AMD64, VM_1G]))
    assert params["limit_mib"] * params["overcommit"] <= 400  # no limit: the load fits the 1 GiB side
    big = swap.Tabs().default_params(smallest_side([replace(AMD64, memory_limit=16 * GIB), I386]))
    assert swap.tab_mib(big) <= ADDRESS_SPACE_32_MIB and big["tabs"] == 16  # 32 GiB of load in 2 GiB tabs


def test_budget_is_unknown_without_facts_and_the_probe_reads_pointer_bits() -> None:
    assert process_budget_mib(TargetFacts()) is None
    assert process_budget_mib(TargetFacts(address_bits=32)) == ADDRESS_SPACE_32_MIB
    assert sizing_from(2, "", "", 32).address_bits == 32


def test_the_scratchs_free_space_is_asked_of_each_side_itself() -> None:
    """fio's and iozone's files: a remote or VM side answers for its own disk, not this machine's."""
    remote = ScriptedTarget({"stat -f -c %a %S /var/tmp/s": (0, "1000 4096\n", "")})
    assert free_bytes(remote, "/var/tmp/s") == 4_096_000
    assert free_bytes(ScriptedTarget({}), "/var/tmp/s") is None  # no stat there: cannot tell


def test_membw_repeats_its_far_passes_as_often_as_moves_1024_mib() -> None:
    assert [memory.far_reps(size, 5) for size in (192, 256, 384, 1024, 1920)] == [5, 4, 3, 1, 1]
    assert memory.far_reps(256, 3) == 3  # never more than the levels' repetitions
    params = memory.MemBandwidth().default_params(smallest_side([AMD64, I386]))
    script = memory.MemBandwidth().argv(memory.Prepared(files={"binary": "/k/membw"}), params)[-1]
    assert "echo 'section mem'; /k/membw 1024 1\n" in script + "\n" and "--kib\n" in script  # levels: 5 each
    assert all(line.endswith(" 5 --kib") for line in script.splitlines() if "--kib" in line)
