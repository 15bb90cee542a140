"""Integration tests: compile and run the native C kernels.

Each kernel in src/shootout/workloads/native/ is compiled with gcc for the
native 64-bit ABI and with -m32, run with small arguments, and its
``name value`` output checked. The two builds must do identical work, so
their checksums must be equal.

The -m32 build needs the Debian package gcc-multilib; without it these tests
fail (they do not skip), because the 32-bit side is the point of shootout.
On arm64 there is no -m32: the 32-bit side is armhf, built static by Debian's
cross compiler (gcc-arm-linux-gnueabihf, which install.sh --test installs there)
and run as the CPU runs armhf programs (natively with AArch32 at EL0).
"""

from __future__ import annotations

import math
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

NATIVE_DIR = Path(__file__).resolve().parents[2] / "src" / "shootout" / "workloads" / "native"
KERNELS = ("intmix", "ptrtree", "membw", "memlat", "maxalloc")
ABIS = ("64", "32")
CFLAGS = ["-O2", "-std=gnu11", "-Wall", "-Wextra"]
LINE_RE = re.compile(r"^([a-z0-9_]+) (\S+)$")
RUN_TIMEOUT = 30
# the 32-bit side's compiler: -m32 on x86, the armhf cross compiler (static: no armhf libc installed) on arm64
CC32 = (["arm-linux-gnueabihf-gcc", "-static"], "gcc-arm-linux-gnueabihf") if platform.machine() == "aarch64" \
    else (["gcc", "-m32"], "gcc-multilib")


def compile_kernel(name: str, abi: str, outdir: Path) -> Path:
    """Compile kernel ``name`` for ``abi`` ("64" native or "32" for -m32).

    Fails the test if gcc reports an error or any warning.
    """
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc not found; install the Debian package gcc (and gcc-multilib)")
    out = outdir / f"{name}-{abi}"
    cmd = [*CC32[0], *CFLAGS] if abi == "32" else [gcc, *CFLAGS]
    cmd += ["-o", str(out), str(NATIVE_DIR / f"{name}.c"), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        if abi == "32":
            pytest.fail(
                f"{' '.join(CC32[0])} failed; install the Debian package {CC32[1]} "
                f"(apt-get install {CC32[1]}).\n{proc.stderr}"
            )
        pytest.fail(f"compiling {name}.c failed:\n{proc.stderr}")
    assert proc.stderr == "", f"{name}.c ({abi}-bit) compiled with warnings:\n{proc.stderr}"
    return out


@pytest.fixture(scope="module")
def binaries(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    outdir = tmp_path_factory.mktemp("native")
    probe = outdir / "probe.c"
    probe.write_text("int main(void) { return sizeof(void *) == 4 ? 0 : 1; }\n")
    try:
        proc = subprocess.run([*CC32[0], "-o", str(outdir / "probe"), str(probe)], capture_output=True, text=True)
    except FileNotFoundError as exc:
        pytest.fail(f"{exc.filename} not found; install the Debian package {CC32[1]} (apt-get install {CC32[1]})")
    if proc.returncode != 0 or subprocess.run([str(outdir / "probe")]).returncode != 0:
        pytest.fail(
            f"cannot build and run 32-bit programs with {' '.join(CC32[0])}; install the Debian "
            f"package {CC32[1]} (apt-get install {CC32[1]}).\n{proc.stderr}"
        )
    return {(k, abi): compile_kernel(k, abi, outdir) for k in KERNELS for abi in ABIS}


def run_kernel(binary: Path, *args: str, expect_rc: int = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, timeout=RUN_TIMEOUT
    )
    assert proc.returncode == expect_rc, (
        f"{binary.name} {' '.join(args)}: exit {proc.returncode}, expected {expect_rc}\n"
        f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )
    return proc


def parse_output(stdout: str) -> dict[str, str]:
    """Parse ``name value`` lines; every line must match and parse as a float."""
    values: dict[str, str] = {}
    lines = stdout.splitlines()
    assert lines, "no output on stdout"
    for line in lines:
        m = LINE_RE.match(line)
        assert m, f"stdout line is not 'name value': {line!r}"
        name, value = m.groups()
        assert name not in values, f"duplicate name {name!r}"
        assert math.isfinite(float(value)), f"{name} is not finite: {value!r}"
        values[name] = value
    return values


def run_both(binaries, kernel: str, *args: str) -> dict[str, dict[str, str]]:
    return {
        abi: parse_output(run_kernel(binaries[(kernel, abi)], *args).stdout) for abi in ABIS
    }


def assert_metrics(values: dict[str, str], expected: set[str], positive: set[str]) -> None:
    assert expected <= values.keys(), f"missing {expected - values.keys()} in {values}"
    for name in positive:
        assert float(values[name]) > 0, f"{name} should be positive: {values[name]}"


def test_intmix(binaries):
    out = run_both(binaries, "intmix", "200000")
    for abi in ABIS:
        v = out[abi]
        assert_metrics(
            v,
            {"iterations", "seconds", "iter_per_s", "checksum"},
            {"iterations", "seconds", "iter_per_s", "checksum"},
        )
        assert set(v) == {"iterations", "seconds", "iter_per_s", "checksum"}
        assert v["iterations"] == "200000"
        rate = float(v["iterations"]) / float(v["seconds"])
        assert float(v["iter_per_s"]) == pytest.approx(rate, rel=1e-6)
    assert out["64"]["checksum"] == out["32"]["checksum"]
    # the checksum depends on the work done
    other = parse_output(run_kernel(binaries[("intmix", "64")], "200001").stdout)
    assert other["checksum"] != out["64"]["checksum"]


def test_ptrtree(binaries):
    out = run_both(binaries, "ptrtree", "20000", "100000")
    names = {"nodes", "lookups", "seconds", "lookups_per_s", "node_bytes", "checksum"}
    for abi in ABIS:
        assert_metrics(out[abi], names, names)
        assert out[abi]["nodes"] == "20000"
        assert out[abi]["lookups"] == "100000"
        # checksum = found (half the lookups) + nodes visited; a random BST of
        # 20000 nodes has a mean depth of roughly 2 ln n ~ 20, far below n
        checksum = int(out[abi]["checksum"])
        assert 50000 + 100000 * 5 < checksum < 50000 + 100000 * 60
    assert out["64"]["node_bytes"] == "24"
    assert out["32"]["node_bytes"] == "12"
    assert out["64"]["checksum"] == out["32"]["checksum"]


def _mix32(x: int) -> int:
    m = 0xFFFFFFFF
    x = (x + 0x3C6EF372) & m
    x ^= x >> 16
    x = (x * 0x7FEB352D) & m
    x ^= x >> 15
    x = (x * 0x846CA68B) & m
    return x ^ (x >> 16)


def _ptrtree_checksum(nodes: int, lookups: int) -> int:
    """ptrtree's checksum from the tree made by inserting mix32(0), mix32(1), ... one by one,
    walked as the kernel walks it (a reference for any change to how the kernel builds it)."""
    left: dict[int, int] = {}
    right: dict[int, int] = {}
    root = _mix32(0)
    for i in range(1, nodes):
        key, at = _mix32(i), root
        while True:
            side = left if key < at else right
            if at not in side:
                side[at] = key
                break
            at = side[at]
    rng, total, span = 0x2545F491, 0, (1 << 32) - nodes
    for j in range(lookups):
        rng ^= (rng << 13) & 0xFFFFFFFF
        rng ^= rng >> 17
        rng ^= (rng << 5) & 0xFFFFFFFF
        key = _mix32(nodes + (rng * span >> 32)) if j & 1 else _mix32(rng * nodes >> 32)
        at: int | None = root
        while at is not None:
            total += 1
            if key == at:
                total += 1  # found
                break
            at = (left if key < at else right).get(at)
    return total


@pytest.mark.parametrize("nodes", [2, 7, 3000])
def test_ptrtree_walks_the_tree_insertion_builds(binaries, nodes):
    out = run_both(binaries, "ptrtree", str(nodes), "4000")
    assert out["64"]["checksum"] == out["32"]["checksum"] == str(_ptrtree_checksum(nodes, 4000))


def test_ptrtree_refuses_a_tree_its_abi_cannot_index(binaries):
    # 600M nodes: the build's 8-byte index entries wrap a 32-bit size_t (to 505 MB); unchecked,
    # malloc could hand out blocks of the wrapped size for the build to overrun
    result = run_kernel(binaries[("ptrtree", "32")], "600000000", "1", expect_rc=1)
    assert "600000000 nodes do not fit this address space" in result.stderr


def test_ptrtree_single_node(binaries):
    v = parse_output(run_kernel(binaries[("ptrtree", "64")], "1", "3").stdout)
    # lookups 0 and 2 find the root (depth 1), lookup 1 misses after 1 node
    assert v["checksum"] == str(2 + 3)


def test_membw(binaries):
    args = ["8", "2"] if os.geteuid() == 0 else ["8", "2", "--no-mlock"]
    out = run_both(binaries, "membw", *args)
    rates = {"write_mbps", "read_mbps", "copy_mbps", "fill_mbps", "writeread_mbps"}
    for abi in ABIS:
        v = out[abi]
        assert_metrics(v, rates | {"size_mib", "reps", "mlocked", "checksum"}, rates)
        assert v["size_mib"] == "8"
        assert v["reps"] == "2"
        assert v["mlocked"] == ("1" if os.geteuid() == 0 else "0")
        for rate in rates:  # anything outside this range is a broken timer
            assert 100 < float(v[rate]) < 10_000_000
    assert out["64"]["checksum"] == out["32"]["checksum"]


def test_membw_paths_probe_prints_latencies_and_counts(binaries):
    for abi in ABIS:
        v = parse_output(run_kernel(binaries[("membw", abi)], "8", "1", "--no-mlock", "--paths").stdout)
        assert v["probe_reps"] == "7" and 0 <= int(v["probe_valid_reps"]) <= 7
        assert 0 <= int(v["copy_bypass_reps"]) <= int(v["probe_valid_reps"])
        assert all(0 < float(v[k]) < 100_000 for k in ("warm_ns", "cold_ns", "copy_dst_ns", "fill_dst_ns"))
    too_small = run_kernel(binaries[("membw", "64")], "256", "1", "--kib", "--paths", expect_rc=1)
    assert "--paths needs a buffer of at least 512 KiB" in too_small.stderr


def test_membw_no_mlock(binaries):
    for abi in ABIS:
        v = parse_output(run_kernel(binaries[("membw", abi)], "4", "1", "--no-mlock").stdout)
        assert v["mlocked"] == "0"
        assert float(v["copy_mbps"]) > 0


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to withdraw CAP_IPC_LOCK")
def test_membw_mlock_failure_message(binaries):
    import resource

    def low_memlock():
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (64 * 1024, 64 * 1024))

    proc = subprocess.run(
        ["setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock",
         str(binaries[("membw", "64")]), "8", "1"],
        capture_output=True, text=True, timeout=RUN_TIMEOUT, preexec_fn=low_memlock,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert "mlock of 8 MiB failed" in proc.stderr
    assert "--no-mlock" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_memlat(binaries):
    names = {"size_kib", "loads", "seconds", "ns_per_load", "checksum"}
    checksums = set()
    for flag in ([], ["--thp"], ["--no-thp"]):
        out = run_both(binaries, "memlat", "4096", "200000", *flag)
        for abi in ABIS:
            v = out[abi]
            assert_metrics(v, names, names)
            assert ("thp_advice_ok" in v) == bool(flag)
            if flag:
                assert v["thp_advice_ok"] in ("0", "1")
            ns = float(v["ns_per_load"])
            assert ns == pytest.approx(float(v["seconds"]) * 1e9 / 200000, rel=1e-6)
            assert 0.1 < ns < 10_000
            checksums.add(v["checksum"])
    # same cycle on both ABIs and with every THP mode
    assert len(checksums) == 1


def test_memlat_sees_the_memory_hierarchy(binaries):
    binary = binaries[("memlat", "64")]
    small = parse_output(run_kernel(binary, "16", "2000000").stdout)
    large = parse_output(run_kernel(binary, "65536", "1000000").stdout)
    # 16 KiB stays in L1; random loads over 64 MiB miss cache and TLB
    assert float(large["ns_per_load"]) > 3 * float(small["ns_per_load"])


def test_maxalloc(binaries):
    out = run_both(binaries, "maxalloc", "192", "64")
    for abi in ABIS:
        v = out[abi]
        assert_metrics(v, {"max_mib", "limit_mib", "step_mib", "mlocked"},
                       {"max_mib", "limit_mib", "step_mib"})
        assert v["max_mib"] == "192"
        assert v["limit_mib"] == "192"
        assert v["attempts"] == "1"  # address space is searched first: one buffer touched a trial
        assert v["mlocked"] in (("1",) if os.geteuid() == 0 else ("0", "1"))


def test_maxalloc_32bit_address_space_ceiling(binaries):
    # 4500 MiB can never fit a 32-bit address space; no memory is touched
    proc = run_kernel(binaries[("maxalloc", "32")], "5000", "4500", expect_rc=1)
    assert proc.stdout == ""
    assert "could not allocate" in proc.stderr


BAD_ARGS = {
    "intmix": [[], ["0"], ["abc"], ["-5"], ["10", "20"], ["4294967296"], ["12x"]],
    "ptrtree": [[], ["100"], ["0", "10"], ["100", "0"], ["x", "10"], ["10", "10", "10"],
                ["4294967295", "10"]],
    "membw": [[], ["8"], ["0", "1"], ["8", "0"], ["8", "1", "--bogus"], ["8", "1", "2"],
              ["eight", "1"]],
    "memlat": [[], ["64"], ["0", "10"], ["64", "0"], ["64", "10", "--thp", "--no-thp"],
               ["64", "10", "--huge"], ["64", "10", "3"]],
    "maxalloc": [[], ["0"], ["64", "0"], ["64", "8", "1"], ["lots"], ["64", "--step"]],
}


@pytest.mark.parametrize("kernel", KERNELS)
def test_bad_arguments_exit_2_with_usage(binaries, kernel):
    for abi in ABIS:
        for args in BAD_ARGS[kernel]:
            proc = run_kernel(binaries[(kernel, abi)], *args, expect_rc=2)
            assert proc.stdout == "", f"{kernel} {args}: output on stdout"
            assert f"usage: {kernel} " in proc.stderr, f"{kernel} {args}: {proc.stderr!r}"
