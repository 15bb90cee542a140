"""cachegrind's cache model on real programs: misses follow the footprint, and a 32-bit pointer
tree misses less than its 64-bit build (and uses less memory) under the Pi 4's caches.

Needs valgrind (Debian's ships cachegrind-x86-linux, which runs the -m32 build), gcc and
gcc-multilib; without them the tests fail, as the native kernels' tests do.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from shootout.counters.cachegrind import MODELS, ModelCounts, parse, prefix

ROOT = Path(__file__).resolve().parents[2]
FOOTPRINT = ROOT / "tests" / "fixtures" / "counters" / "footprint.c"
NATIVE = ROOT / "src" / "shootout" / "workloads" / "native"


def compile_c(source: Path, out: Path, *flags: str) -> Path:
    if shutil.which("gcc") is None:
        pytest.fail("gcc not found; install the Debian packages gcc and gcc-multilib")
    made = subprocess.run(["gcc", "-O2", *flags, f"-I{NATIVE}", "-o", str(out), str(source)], check=False,
                          capture_output=True, text=True)
    assert made.returncode == 0, f"gcc {' '.join(flags)} failed (gcc-multilib for -m32?):\n{made.stderr}"
    return out


def modelled(argv: list[str], out_dir: Path, model: str = "pi4") -> tuple[ModelCounts, float]:
    """The model's counts of a run and its wall time under cachegrind."""
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind not found; install the Debian package valgrind")
    out_dir.mkdir()
    start = time.monotonic()
    done = subprocess.run([*prefix(MODELS[model], str(out_dir)), *argv], check=False, capture_output=True,
                          text=True)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-2000:]
    return parse([path.read_text() for path in out_dir.glob("cachegrind.out.*")]), took


def native(argv: list[str], tmp_path: Path) -> tuple[int, float]:
    """(max RSS in KiB, wall seconds) of a run of argv, from wait4 in shootout's remote helper.
    Not from a child of this process: Linux keeps ru_maxrss across execve, so a child forked
    from a 70 MB Python reports at least 70 MB, whatever it ran (a helper in C is small)."""
    helper = tmp_path / "helper"
    if not helper.exists():
        compile_c(ROOT / "src" / "shootout" / "remote" / "helper.c", helper)
    done = subprocess.run([str(helper), "run", "60", "USAGE", str(tmp_path), "--", *argv], check=False,
                          capture_output=True, text=True)
    usage = dict(field.split("=") for field in done.stderr.rsplit("USAGE ", 1)[1].split())
    assert usage["status"] == "0", done.stderr
    return int(usage["maxrss"]), float(usage["wall"])


def test_d1_misses_rise_with_the_footprint_alone(tmp_path: Path) -> None:
    binary = compile_c(FOOTPRINT, tmp_path / "footprint")
    counts = {size: modelled([str(binary), str(size), "64", "2000000"], tmp_path / str(size))[0]
              for size in (16 * 1024, 256 * 1024, 4 * 1024 * 1024)}
    small, middle, large = counts[16 * 1024], counts[256 * 1024], counts[4 * 1024 * 1024]
    print({size: (c.d1_misses, c.ll_misses) for size, c in counts.items()})
    # the same work: the loop's accesses, and one write a line to fill the buffer
    assert abs(small.instructions - large.instructions) < 0.1 * large.instructions
    # 16 KiB fits the 32 KiB D1: its misses are the start's; 256 KiB misses at every line
    assert small.d1_misses * 100 < middle.d1_misses < large.d1_misses
    # 256 KiB fits the 1 MiB LL, 4 MiB does not
    assert middle.ll_misses * 100 < large.ll_misses
    assert small.caches == "I1 48 KiB 3-way, D1 32 KiB 2-way, LL 1 MiB 16-way" and small.processes == 1


def test_a_32_bit_pointer_tree_is_smaller_and_misses_less(tmp_path: Path) -> None:
    argv = ["200000", "20000"]
    built = {abi: compile_c(NATIVE / "ptrtree.c", tmp_path / f"ptrtree{abi}", f"-m{abi}") for abi in ("64", "32")}
    rss = {abi: native([str(path), *argv], tmp_path) for abi, path in built.items()}
    runs = {abi: modelled([str(path), *argv], tmp_path / f"out{abi}") for abi, path in built.items()}
    print({abi: (rss[abi][0], runs[abi][0].d1_misses, runs[abi][0].ll_misses,
                 f"slowdown {runs[abi][1] / rss[abi][1]:.0f}x") for abi in built})
    assert rss["32"][0] < rss["64"][0]
    assert runs["32"][0].d1_misses < runs["64"][0].d1_misses
    assert runs["32"][0].ll_misses < runs["64"][0].ll_misses


def test_a_pipeline_under_the_model_counts_every_process(tmp_path: Path) -> None:
    binary = compile_c(FOOTPRINT, tmp_path / "footprint")
    loop = [str(binary), "0", "0", "20000000"]  # registers only: what the model costs at least
    alone, took = modelled(loop, tmp_path / "alone", model="host")
    _, native_took = native(loop, tmp_path)
    print(f"registers-only loop: {took:.2f} s under cachegrind, {native_took:.3f} s native")
    both, _ = modelled(["sh", "-c", f"{' '.join(loop)} | cat"], tmp_path / "both", model="host")
    assert both.processes == 3  # sh, the loop and cat
    assert alone.processes == 1 and both.instructions > alone.instructions >= 20000000 * 3
