"""cgroup layouts, zswap and zram against fake kernel trees: the paths a CI machine lacks
(pure cgroup2, no zram, an old kernel with a zpool choice) and the one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.base.errors import TargetError
from shootout.swap import limit as memory
from shootout.swap import zram, zswap
from shootout.system import cgroups
from shootout.system.journal import Journal, recover

HYBRID = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
31 28 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
33 28 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
34 28 0:30 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
35 28 0:31 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
36 28 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
"""


def _dir(path: Path) -> Path:
    path.mkdir(exist_ok=True)
    return path


def test_hybrid_layout_puts_memory_and_io_in_v1(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text(HYBRID)
    where = cgroups.layout(info)
    assert where.holding("memory").mount == Path("/sys/fs/cgroup/memory")
    assert where.holding("io").mount == Path("/sys/fs/cgroup/blkio")  # v1 calls it blkio
    assert where.holding("cpuacct").controllers == {"cpu", "cpuacct"}
    assert where.unified.mount == Path("/sys/fs/cgroup/unified")
    assert where.holding("rdma") is None


def _fake_v2(tmp_path: Path) -> cgroups.Layout:
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("cpu\n")
    return cgroups.Layout((cgroups.Hierarchy(root, 2, frozenset({"cpu", "io", "memory", "pids"})),))


def test_pure_cgroup2_enables_the_controller_and_journals_everything(tmp_path):
    where = _fake_v2(tmp_path)
    assert where.holding("memory") is where.unified and where.holding("io") is where.unified
    j = Journal(_dir(tmp_path / "journal"))
    group = cgroups.create(j, where, "run", ["memory", "io"])
    root = where.unified.mount
    assert group.dirs == {"memory": root / "run", "io": root / "run", "": root / "run"}
    assert (root / "run").is_dir()
    assert (root / "cgroup.subtree_control").read_text() == "+io"  # the last write; memory came first
    assert len(j.pending) == 3  # +memory, +io, the directory
    argv = group.enter_argv(["true"])
    assert argv[:2] == ["/bin/sh", "-c"] and argv[-1] == "true" and str(root / "run" / "cgroup.procs") in argv


def test_v2_and_v1_limit_files():
    one_g, two_g = 1 << 30, 2 << 30
    assert memory.swap_allowed({"kind": "disk", "size": two_g}) == two_g
    assert memory.swap_allowed({"kind": "none", "size": 0}) == 0 and memory.swap_allowed(None) is None
    assert memory.limit_files(2, one_g, two_g) == {"memory.max": str(one_g), "memory.swap.max": str(two_g)}
    assert memory.limit_files(2, one_g, 0) == {"memory.max": str(one_g), "memory.swap.max": "0"}
    assert memory.limit_files(2, one_g, None)["memory.swap.max"] == "max"
    v1 = memory.limit_files(1, one_g, two_g)
    assert list(v1) == ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]  # the order matters in v1
    assert v1["memory.memsw.limit_in_bytes"] == str(3 << 30)
    assert memory.limit_files(1, one_g, 0)["memory.memsw.limit_in_bytes"] == str(one_g)
    assert memory.limit_files(1, one_g, None)["memory.memsw.limit_in_bytes"] == "-1"
    assert memory.limit_files(1, None, None) == {"memory.memsw.limit_in_bytes": "-1"}  # no limit: none set


def test_memory_limit_without_a_memory_controller_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    bare = cgroups.Layout((cgroups.Hierarchy(tmp_path, 2, frozenset({"cpu"})),))
    assert "no cgroup hierarchy here offers the memory controller" in memory.problem(1 << 30, None, bare)
    v1 = cgroups.Layout((cgroups.Hierarchy(tmp_path, 1, frozenset({"memory"})),))  # no memsw files in it
    assert "cannot limit a cgroup's swap" in memory.problem(1 << 30, 0, v1)
    assert memory.problem(1 << 30, None, v1) is None  # swap as the machine has it needs no memsw
    with pytest.raises(TargetError, match="no cgroup hierarchy here offers the memory controller"):
        cgroups.create(Journal(_dir(tmp_path / "j")), bare, "x", ["memory"])


def _fake_zswap(root: Path, zpool: bool = False) -> None:
    params = root / "sys/module/zswap/parameters"
    params.mkdir(parents=True)
    values = {"enabled": "N", "compressor": "lzo", "max_pool_percent": "20", "accept_threshold_percent": "90"}
    if zpool:
        values["zpool"] = "zbud"
    for k, v in values.items():
        (params / k).write_text(v)
    (root / "proc").mkdir()
    (root / "proc/crypto").write_text("name         : lzo\ndriver       : lzo-scomp\ntype         : scomp\n\n"
                                      "name         : deflate\ntype         : acomp\n\n"
                                      "name         : sha256\ntype         : shash\n")


def test_zswap_checks_name_what_the_kernel_has(tmp_path):
    _fake_zswap(tmp_path)
    assert zswap.compressors(tmp_path) == ["deflate", "lzo"]
    assert zswap.check({"compressor": "zstd"}, tmp_path) == \
        "zswap: this kernel has no compressor 'zstd' (it has: deflate, lzo)"
    assert "zsmalloc only" in zswap.check({"zpool": "z3fold"}, tmp_path)
    assert zswap.check({"zpool": "zsmalloc", "compressor": "lzo", "enabled": "Y"}, tmp_path) is None
    assert zswap.in_force(tmp_path)["zpool"] == "zsmalloc (fixed)"
    assert "no zswap" in zswap.check({}, tmp_path / "elsewhere")


def test_zswap_changes_are_undone_from_the_journal_after_a_kill(tmp_path):
    root = tmp_path / "root"
    _fake_zswap(root, zpool=True)
    before = zswap.parameters(root)
    j = Journal(_dir(tmp_path / "journal"))
    z = zswap.Zswap(j, root)
    got = z.set({"enabled": "Y", "compressor": "deflate", "zpool": "z3fold", "max_pool_percent": "15"})
    assert (got["enabled"], got["compressor"], got["zpool"]) == ("Y", "deflate", "z3fold")
    z.set({"enabled": "N"})
    z.set({"enabled": "Y", "compressor": "lzo"})  # switching again journals nothing new
    assert len(j.pending) == 4
    # as if killed: another process replays the journal file
    j.path.rename(tmp_path / "journal" / "1-1-1.jsonl")
    recover(tmp_path / "journal")
    assert zswap.parameters(root) == before


def test_zswap_that_does_not_keep_a_value_is_put_back(tmp_path, monkeypatch):
    root = tmp_path / "root"
    _fake_zswap(root)
    z = zswap.Zswap(Journal(_dir(tmp_path / "journal")), root)
    real = zswap.parameters
    # the kernel's silent fallback: asked for deflate, it keeps lzo
    monkeypatch.setattr(zswap, "parameters", lambda r=root: {**real(r), "compressor": "lzo"})
    with pytest.raises(TargetError, match="zswap did not keep compressor = 'deflate'"):
        z.set({"enabled": "Y", "compressor": "deflate"})
    assert (root / "sys/module/zswap/parameters/enabled").read_text() == "N"


def test_zram_absent_is_one_line(tmp_path):
    assert not zram.present(tmp_path)
    with pytest.raises(TargetError) as err:
        zram.add(Journal(_dir(tmp_path / "j")), 1 << 20, None, None, root=tmp_path)
    assert str(err.value) == zram.absent_reason() and "modprobe zram" in str(err.value)


def test_zram_algorithm_listing():
    assert zram.algorithms("lzo [lzo-rle] lz4 zstd") == ["lzo", "lzo-rle", "lz4", "zstd"]


def test_zram_state_reads_the_writes_the_device_refused(tmp_path):
    base = _dir(_dir(_dir(tmp_path / "sys") / "block") / "zram7")
    (base / "comp_algorithm").write_text("[lzo] lzo-rle lz4\n")
    (base / "disksize").write_text("134217728\n")
    (base / "mm_stat").write_text("12288 1254 65536 5033984 5099520 0 0 0 8504\n")
    device = zram.ZramDevice(7, entry=0)
    held = zram.state(device, tmp_path)
    assert held["mem_limit"] == 5033984 and held["mem_used_max"] == 5099520 and "failed_writes" not in held
    (base / "io_stat").write_text("       0  1262845 0       17\n")  # failed_reads failed_writes invalid_io notify_free
    assert zram.state(device, tmp_path)["failed_writes"] == 1262845


def test_one_process_at_a_time_switches_swap(tmp_path):
    from shootout.swap.swaps import MachineLock
    from shootout.system.journal import Journal

    journal = Journal(tmp_path / "journal")
    first, second = MachineLock(journal, tmp_path / "lock"), MachineLock(journal, tmp_path / "lock")
    first.acquire()
    with pytest.raises(TargetError, match=rf"another shootout process \(pid {__import__('os').getpid()}\)"):
        second.acquire(wait_s=0.3)
    first.release()
    second.acquire(wait_s=0.3)
    second.release()
    assert not (tmp_path / "lock").exists() and journal.pending == []


def test_the_sampler_keeps_both_ends_and_each_peak_with_its_reading():
    from shootout.swap import observe

    readings = iter([{"pool": 1, "stored": 2, "count": 10}, {"pool": 9, "stored": 30, "count": 12},
                     {"pool": 3, "stored": 4, "count": 15}])
    last = {"pool": 3, "stored": 4, "count": 15}
    sampler = observe.Sampler(lambda: next(readings, last), interval=0.01).start()
    import time

    time.sleep(0.1)
    samples = sampler.stop()
    assert samples.first == {"pool": 1, "stored": 2, "count": 10} and samples.last == last
    assert samples.peak["pool"] == 9 and samples.at_peak["pool"]["stored"] == 30  # the ratio at the pool's peak
    assert samples.delta("count") == 5 and samples.delta("missing") is None
    assert sampler.stop() is samples  # a second stop reads nothing more
    assert observe.ratio(30, 0) is None and observe.present({"a": None, "b": 2}) == {"b": 2.0}


def test_an_area_is_found_under_the_name_proc_swaps_gives_it_outside_the_run(tmp_path, monkeypatch):
    """A zram swap turned on in a run's private mount namespace is /zram1 in /proc/swaps once
    that namespace is gone (a file on a filesystem mounted at /data: /shootout-swap-1)."""
    from shootout.swap import swaps

    proc = tmp_path / "swaps"
    proc.write_text("Filename\tType\tSize\tUsed\tPriority\n"
                    "/zram1                                  partition\t1048572\t8\t31000\n"
                    "/shootout-swap-1\\040(deleted)         file\t131068\t0\t31000\n"
                    "/dev/vda2                               partition\t999\t0\t-2\n")
    read = swaps.areas
    monkeypatch.setattr(swaps, "areas", lambda: read(proc))
    assert swaps.active("/dev/zram1").size_kib == 1048572
    assert swaps.active("/data/shootout-swap-1").kind == "file"
    assert swaps.active("/dev/zram11") is None and swaps.active("/dev/zram2") is None
    assert swaps.active("/data/other-shootout-swap-1") is None  # a suffix only at a "/"
    assert [a.path for a in swaps.left_on()] == ["/zram1", "/shootout-swap-1 (deleted)"]


def test_a_failed_trial_says_the_zram_device_refused_writes():
    from shootout.parts.swap import _Session

    session = _Session(None)  # the note reads only the trial's figures
    assert session.failure_note({"zram_failed_writes": 1262845.0, "zram_mem_mib": 4.83}) == (
        "the zram device refused 1,262,845 writes at its mem_limit (pages the kernel could not swap out)")
    assert session.failure_note({"zram_failed_writes": 0.0}) is None and session.failure_note({}) is None
