"""The `tabs` kernel: its page patterns compress as the parameter says (zstd and lz4, page by
page as zswap and zram compress), both ABIs fill identical memory, and a short run reports
ordered percentiles. Needs gcc and gcc-multilib, no root."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import lz4.block
import pytest
import zstandard

from shootout.workloads.contract import parse_key_values
from shootout.workloads.swap import expected_compressibility, mix_for

SOURCE = Path(__file__).resolve().parents[2] / "src" / "shootout" / "workloads" / "native" / "tabs.c"
PAGE = 4096


@pytest.fixture(scope="module")
def tabs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if shutil.which("gcc") is None:
        pytest.fail("gcc not found; install the Debian package gcc (and gcc-multilib)")
    out = tmp_path_factory.mktemp("tabs")
    built = {}
    for abi, flags in (("64", []), ("32", ["-m32"])):
        exe = out / f"tabs-{abi}"
        proc = subprocess.run(["gcc", "-O2", "-std=gnu11", "-Wall", "-Wextra", *flags, "-o", str(exe), str(SOURCE), "-lm"],
                              capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr  # no warning either
        built[abi] = exe
    return built


def _dump(exe: Path, mib: int, text: int, zero: int, seed: int = 1) -> bytes:
    return subprocess.run([str(exe), "--dump", str(mib), str(text), str(zero), str(seed)],
                          capture_output=True, check=True).stdout


def _compressibility(data: bytes, compress) -> float:
    """1 - compressed/original, page by page; a page that does not shrink is stored whole."""
    stored = sum(min(len(compress(data[i:i + PAGE])), PAGE) for i in range(0, len(data), PAGE))
    return 1 - stored / len(data)


@pytest.mark.parametrize("asked", [0.0, 0.3, 0.6, 0.85])
def test_pages_compress_as_asked_with_zstd_and_lz4(tabs, asked):
    text, zero = mix_for(asked)
    assert abs(expected_compressibility(text, zero) - asked) < 0.002
    data = _dump(tabs["64"], 16, text, zero)
    assert len(data) == 16 << 20
    zstd = zstandard.ZstdCompressor(level=3).compress
    for name, compress in (("zstd", zstd), ("lz4", lambda p: lz4.block.compress(p, store_size=False))):
        got = _compressibility(data, compress)
        assert abs(got - asked) < 0.03, (name, got, asked)


def test_block_shares_are_exact_and_seeded(tabs):
    data = _dump(tabs["64"], 4, 300, 250)
    pages = [data[i:i + PAGE] for i in range(0, len(data), PAGE)]
    zero_pages = sum(p == bytes(PAGE) for p in pages)
    assert abs(zero_pages - 0.25 * len(pages)) <= 1  # a Weyl sequence: exact to one block
    assert _dump(tabs["64"], 4, 300, 250) == data  # the same seed, the same memory
    assert _dump(tabs["64"], 4, 300, 250, seed=2) != data


def test_both_abis_fill_identical_memory(tabs):
    assert _dump(tabs["64"], 2, 450, 150, 7) == _dump(tabs["32"], 2, 450, 150, 7)


def test_a_short_run_in_ram(tabs):
    done = subprocess.run([str(tabs["64"]), "3", "4", "60", "450", "150", "20", "3", "0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    v = parse_key_values(done.stdout)
    assert v["switches"] == 60 and v["tabs_killed"] == 0 and v["reloads"] == 0 and v["truncated"] == 0
    assert 0 < v["p50_ms"] <= v["p95_ms"] <= v["p99_ms"] <= v["max_ms"]
    assert v["switches_per_s"] > 0 and v["open_s"] > 0


@pytest.mark.parametrize("args", [["0", "4", "10"], ["2", "4"], ["2", "4", "10", "600", "500", "10", "1", "0"],
                                  ["2", "4", "10", "450", "150", "0", "1", "0"]])
def test_bad_arguments_exit_2_with_one_message(tabs, args):
    done = subprocess.run([str(tabs["64"]), *args], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") <= 3 and "usage: tabs" in done.stderr
