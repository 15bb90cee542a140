"""What a compressed pool is a share of: zram's mem_limit follows the configuration's memory
limit (the machine it emulates); zswap's cannot, and the run says why for its cgroup layout."""

from __future__ import annotations

from pathlib import Path

from shootout.swap.setup import zram_mem_limit, zswap_scaling
from shootout.swap.spec import SwapSpec
from shootout.system.cgroups import Hierarchy, Layout

GIB = 1 << 30


def test_zram_takes_its_share_of_the_configurations_limit_not_of_this_machines_ram() -> None:
    spec = SwapSpec("zram", GIB, compressor="lzo", max_pool_percent=15)
    assert zram_mem_limit(spec, 512 << 20, 24 * GIB) == ((512 << 20) * 15 // 100,
                                                         "15% of the configuration's memory limit (512 MiB)")
    assert zram_mem_limit(spec, None, 24 * GIB) == (24 * GIB * 15 // 100, "15% of this machine's RAM (24576 MiB)")


def test_zram_without_a_pool_share_and_zswap_get_no_mem_limit() -> None:
    assert zram_mem_limit(SwapSpec("zram", GIB, compressor="lzo"), 512 << 20, 24 * GIB) is None
    assert zram_mem_limit(SwapSpec("zswap", GIB, max_pool_percent=15, on="/var/tmp"), 512 << 20, 24 * GIB) is None


def layout(*hierarchies: tuple[int, set[str]]) -> Layout:
    return Layout(tuple(Hierarchy(Path(f"/sys/fs/cgroup/{i}"), v, frozenset(c)) for i, (v, c) in enumerate(hierarchies)))


def test_zswap_says_why_its_pool_cannot_follow_the_limit() -> None:
    mixed = zswap_scaling(layout((1, {"memory"}), (2, {"cpu", "io"})))  # this machine: memory on v1
    assert "cgroup v1" in mixed and "cannot be scaled" in mixed
    unified = zswap_scaling(layout((2, {"memory", "io"})))
    assert "memory.zswap.max could cap it" in unified and "v1" not in unified


def test_a_zram_setup_says_what_its_pool_is_a_share_of() -> None:
    spec = SwapSpec("zram", GIB, compressor="lzo", max_pool_percent=15)
    assert spec.describe(512 << 20) == "1024 MiB zram, lzo, pool <= 15% of the 512 MiB memory limit"
    assert spec.describe() == "1024 MiB zram, lzo, pool <= 15% of RAM"
    zswap = SwapSpec("zswap", GIB, max_pool_percent=15, on="/var/tmp")
    assert zswap.describe(512 << 20) == "zswap pool <= 15% of RAM, in front of 1024 MiB file in /var/tmp"
