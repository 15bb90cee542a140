"""Swap setups and memory limits as a [[config]] writes them: parsed, or refused in one line."""

from __future__ import annotations

import pytest

from shootout.base.errors import UsageError
from shootout.parts import parse_parts
from shootout.swap.spec import SwapSpec, parse_memory


def parse_swap(value, where, **table) -> SwapSpec:  # noqa: ANN001 - as a [[config]] table writes it
    return SwapSpec.of(parse_parts({"swap": value, **table}, where)["swap"])
from shootout.base.units import byte_size


@pytest.mark.parametrize(("text", "expected"), [
    ("1G", 1 << 30), ("512M", 512 << 20), ("1GiB", 1 << 30), ("1GB", 10**9), ("4096", 4096),
    ("1.5g", 3 << 29), (" 64k ", 64 << 10), (2048, 2048),
])
def test_byte_size(text, expected):
    assert byte_size(text, "size") == expected


@pytest.mark.parametrize("text", ["lots", "1X", "-1G", "", "G", True])
def test_byte_size_refuses_what_is_no_size(text):
    with pytest.raises(UsageError, match="is not a size"):
        byte_size(text, "size")


def test_each_kind_parses_with_defaults():
    assert parse_swap("none", "c") == SwapSpec()
    assert parse_swap({"kind": "disk"}, "c") == SwapSpec("disk", 1 << 30, on="/var/tmp")
    assert parse_swap({"kind": "disk"}, "c", scratch="/mnt/ssd").on == "/mnt/ssd"  # the scratch directory
    assert parse_swap({"kind": "disk", "on": "scratch"}, "c", scratch={"dir": "/mnt/x"}).on == "/mnt/x"
    z = parse_swap({"kind": "zswap", "size": "2G", "compressor": "lzo", "max_pool_percent": 15, "on": "/x"}, "c")
    assert (z.kind, z.size, z.compressor, z.max_pool_percent, z.on, z.backing) == ("zswap", 2 << 30, "lzo", 15, "/x", "file")
    assert z.zswap_settings() == {"enabled": "Y", "compressor": "lzo", "max_pool_percent": "15"}
    assert parse_swap({"kind": "zswap", "on": "zram"}, "c").backing == "zram"  # compress twice, when asked
    r = parse_swap({"kind": "zram", "size": "512M", "compressor": "lz4"}, "c")
    assert (r.backing, r.zswap_settings()) == ("zram", {"enabled": "N"})  # zswap never on with zram unless asked
    assert SwapSpec().zswap_settings() == {"enabled": "N"} and SwapSpec().backing == "none"


@pytest.mark.parametrize(("value", "message"), [
    ({"kind": "floppy"}, "is not one of none, disk, zswap, zram"),
    ({"kind": "none", "size": "1G"}, "kind none takes no 'size'"),
    ({"kind": "disk", "compressor": "lz4"}, "disk swap compresses nothing"),
    ({"kind": "zram", "on": "/var/tmp"}, "takes no 'on'"),
    ({"kind": "zram", "zpool": "z3fold"}, "zpool is a zswap setting"),
    ({"kind": "zswap", "max_pool_percent": 150}, "whole percentage from 1 to 100"),
    ({"kind": "zswap", "max_pool_percent": "15"}, "whole percentage"),
    ({"kind": "disk", "size": "12k"}, "too small"),
    ({"kind": "disk", "size": "big"}, "is not a size"),
    ({"kind": "disk", "colour": "red"}, "has no setting 'colour'"),
    ({"kind": "zswap", "compressor": ""}, "non-empty string"),
    ({"kind": "disk", "on": "var/tmp"}, "is not an absolute directory"),
    ({"kind": "disk", "on": "scratch"}, "swap on the scratch needs scratch"),
    (["disk"], "must be a table"),
])
def test_bad_swap_tables_are_one_line_errors(value, message):
    with pytest.raises(UsageError, match=message) as err:
        parse_swap(value, "configuration mine")
    assert "configuration mine" in str(err.value) and "\n" not in str(err.value)


def test_swap_never_goes_on_a_scratch_filesystem_in_a_file():
    with pytest.raises(UsageError, match="mounted only in the run's private mount namespace"):
        parse_swap({"kind": "disk", "on": "scratch"}, "c", scratch={"fs": "ext4"})
    assert parse_swap({"kind": "disk"}, "c", scratch={"fs": "ext4"}).on == "/var/tmp"


def test_memory_limit_carries_the_swap_it_allows():
    assert parse_memory("1G", "c") == 1 << 30
    assert parse_parts({"memory": "1G"}, "c")["memory"] == {"limit": 1 << 30, "swap": None}
    assert parse_parts({"memory": "1G", "swap": "none"}, "c")["memory"]["swap"] == 0
    assert parse_parts({"memory": "1G", "swap": {"kind": "zram", "size": "2G"}}, "c")["memory"]["swap"] == 2 << 30
    with pytest.raises(UsageError, match="too small"):
        parse_memory("1M", "c")
    with pytest.raises(UsageError, match="is not a size"):
        parse_memory("plenty", "c")
