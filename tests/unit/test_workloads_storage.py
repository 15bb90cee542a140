"""Storage workloads and the scratch throttle: parsers on outputs recorded from the real tools
(fio 3.33 JSON, iozone 3.489 in bookworm, compsize 1.5), job files, and the throttle's spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.base.errors import UsageError, WorkloadError
from shootout.base.model import Config
from shootout.execution.process import ProcResult
from shootout.parts import parse_parts, throttle
from shootout.parts.throttle import parse_rate, read_io_max, read_rules
from shootout.storage.scratch import ScratchArea, Scratches
from shootout.system import cgroups
from shootout.system.journal import Journal, recover
from shootout.workloads import fio, iozone
from shootout.workloads.ddwrite import DdWrite
from shootout.workloads.diskscratch import (
    DiskScratch,
    compsize_metrics,
    compsize_values,
    parse_compsize,
)

OUT = Path(__file__).parent.parent / "fixtures" / "outputs" / "storage"
ALL_JOBS = {"jobs": list(fio.JOBS)}


def result(stdout: str) -> ProcResult:
    return ProcResult(("sh",), 0, stdout, "", 1.0, 0.1, 0.1, 1000, 1, 0.0)


def compsize_lines(tag: str, recorded: str = "compsize-zstd.txt") -> str:
    return "".join(f"compsize {tag} {line}\n" for line in (OUT / recorded).read_text().splitlines())


def test_fio_json_gives_every_job_its_rate_and_latencies():
    values = fio.Fio().parse(result((OUT / "fio-direct.json").read_text()), ALL_JOBS)
    assert values["seq_write_mbps"] == pytest.approx(327.289129)
    assert values["randread_qd32_iops"] == pytest.approx(24305.389222)
    assert values["randwrite_qd1_p50_us"] == pytest.approx(50.432)
    assert values["randwrite_qd1_p99_us"] == pytest.approx(7962.624)
    rates = [v for k, v in values.items() if k.endswith(("_mbps", "_iops"))]
    assert len(rates) == 6 and min(rates) < values["geomean"] < max(rates)
    assert "compress_x" not in values  # not btrfs: no compsize lines


def test_fio_buffered_run_on_btrfs_with_compsize_after_its_json():
    stdout = (OUT / "fio-btrfs-zstd-buffered.json").read_text() + compsize_lines("data")
    values = fio.Fio().parse(result(stdout), {"jobs": ["seq_write", "seq_read", "randwrite_qd32"]})
    assert values["seq_write_mbps"] == pytest.approx(26.541059)  # end_fsync inside the 30 MB/s throttle
    assert values["compress_x"] == pytest.approx(193536000 / 128524288)


def test_fio_without_json_or_with_a_missing_job_is_an_error():
    with pytest.raises(WorkloadError, match="no JSON report"):
        fio.Fio().parse(result("fio: something went wrong\n"), ALL_JOBS)
    with pytest.raises(WorkloadError, match="no result for randwrite_qd1"):
        fio.Fio().parse(result((OUT / "fio-btrfs-zstd-buffered.json").read_text()), ALL_JOBS)


def test_fio_job_file_direct_or_buffered_and_compressibility():
    params = {"size_mib": 64, "ramp_s": 0.5, "runtime_s": 2, "compress_pct": 0, "jobs": list(fio.JOBS)}
    direct = fio.job_file(params, direct=True)
    assert "direct=1" in direct and "fallocate=none" in direct and "end_fsync=1" in direct
    assert "ramp_time=500ms" in direct and "buffer_compress_percentage" not in direct
    assert direct.count("[") == 7 and "iodepth=32" in direct
    buffered = fio.job_file({**params, "compress_pct": 60}, direct=False)
    assert "direct=0" in buffered and "buffer_compress_percentage=60" in buffered


def test_iozone_table_gives_six_columns_at_three_record_sizes():
    stdout = (OUT / "iozone-direct.txt").read_text()
    values = iozone.Iozone().parse(result(stdout), {"records": list(iozone.RECORDS)})
    assert values["write_4k"] == 14627 and values["randwrite_4k"] == 32869
    assert values["read_512k"] == 392948 and values["randread_16m"] == 742698
    assert len(values) == 19  # 18 cells and the geomean
    with pytest.raises(WorkloadError, match="no write_4k"):
        iozone.Iozone().parse(result("iozone test complete.\n"), {"records": list(iozone.RECORDS)})


def test_compsize_rows_per_tag():
    stdout = compsize_lines("zeros") + "compsize corpus garbage\n"
    rows = parse_compsize(stdout, "zeros")
    assert rows["zstd"] == (2097152, 67108864) and rows["none"] == (126427136, 126427136)
    assert compsize_values(stdout, "zeros", "")["compress_x"] == pytest.approx(193536000 / 128524288)
    assert compsize_values(stdout, "corpus", "") == {}


def test_compsize_rows_of_every_algorithm_become_metrics():
    # Recorded: one btrfs, files written under compress=zlib, then lzo, then zstd, plus random data.
    values = compsize_values(compsize_lines("data", "compsize-all-algorithms.txt"), "data", "t_")
    mib = 2**20
    assert values["t_compress_x"] == pytest.approx(104587264 / 25100288)
    assert values["t_none_disk_mib"] == values["t_none_raw_mib"] == pytest.approx(8388608 / mib)
    assert "t_none_x" not in values
    assert values["t_zlib_disk_mib"] == pytest.approx(3915776 / mib)
    assert values["t_zlib_raw_mib"] == pytest.approx(20881408 / mib)
    assert values["t_zlib_x"] == pytest.approx(20881408 / 3915776)
    assert values["t_lzo_x"] == pytest.approx(20881408 / 7831552)
    assert values["t_zstd_x"] == pytest.approx(54435840 / 4964352)
    assert set(values) <= {m.name for m in compsize_metrics("t_", "x")}  # every value is a declared metric


def test_dd_write_rates_from_the_timed_steps_and_compsize():
    stdout = ("step zeros 100.000000000 100.500000000\nstep corpus 200.000000000 202.000000000\n"
              + compsize_lines("zeros"))
    values = DdWrite().parse(result(stdout), {"size_mib": 16})
    assert values["zeros_mbps"] == pytest.approx(16 * 2**20 / 1e6 / 0.5)
    assert values["corpus_mbps"] == pytest.approx(16 * 2**20 / 1e6 / 2.0)
    assert "zeros_compress_x" in values and "corpus_compress_x" not in values


def test_only_a_compressing_btrfs_is_treated_as_compressing():
    assert DiskScratch("/s", "btrfs", "rw,relatime,compress=zstd:3").compresses
    assert DiskScratch("/s", "btrfs", "rw,compress-force=zlib:3").compresses
    assert not DiskScratch("/s", "btrfs", "rw,relatime").compresses
    assert not DiskScratch("/s", "ext4", "rw,relatime").compresses


def test_throttle_rates_and_where_a_throttle_may_go():
    assert parse_rate("30MB/s", "x") == 30_000_000 and parse_rate("1MiB/s", "x") == 2**20
    for bad in ("30MB", 30, "1kB/s"):
        with pytest.raises(UsageError):
            parse_rate(bad, "x")
    parts = parse_parts({"scratch": {"fs": "btrfs", "mount": "compress=zstd", "throttle": "30MB/s"}}, "t")
    assert parts["throttle"] == {"bps": 30_000_000, "with_memory": False} and "throttle" not in str(parts["scratch"])
    with pytest.raises(UsageError, match="throttle needs a filesystem in a file"):
        parse_parts({"scratch": {"dir": "/var/tmp", "throttle": "30MB/s"}}, "t")


def test_a_throttle_may_limit_requests_per_second_as_well():
    parts = parse_parts({"scratch": {"fs": "ext4", "size": "1G", "throttle": "30MB/s",
                                     "iops": {"read": 2972, "write": 2702}}}, "t")
    assert parts["throttle"]["iops"] == {"read": 2972, "write": 2702} and "iops" not in str(parts["scratch"])
    both = parse_parts({"scratch": {"fs": "ext4", "size": "1G", "throttle": "30MB/s", "iops": 800}}, "t")
    assert both["throttle"]["iops"] == {"read": 800, "write": 800}
    for bad in (0, "fast", {"reads": 5}, {"read": 1.5}):
        with pytest.raises(UsageError, match="iops"):
            parse_parts({"scratch": {"fs": "ext4", "size": "1G", "throttle": "30MB/s", "iops": bad}}, "t")
    with pytest.raises(UsageError, match="iops needs a throttle"):
        parse_parts({"scratch": {"fs": "ext4", "size": "1G", "iops": 800}}, "t")
    assert throttle.io_max_line("7:3", 5, {"read": 2, "write": 3}) == "7:3 rbps=5 wbps=5 riops=2 wiops=3"


def test_v1_iops_rules_are_set_read_back_and_lifted_with_the_bandwidth(tmp_path: Path):
    for name in throttle.RULES + throttle.IOPS_RULES:
        (tmp_path / name).write_text("")
    (tmp_path / "journal").mkdir()
    journal = Journal(tmp_path / "journal")
    session = throttle._Session(journal, Scratches([], journal), cgroups.Layout(
        (cgroups.Hierarchy(tmp_path, 1, frozenset({"blkio"})),)))
    entry = session._limit_v1("7:3", 30_000_000, {"read": 2972, "write": 2702})
    assert read_rules(tmp_path, "7:3") == {"read_bps": 30_000_000, "write_bps": 30_000_000,
                                           "read_iops": 2972, "write_iops": 2702}
    journal.undo_entry(entry)
    assert read_rules(tmp_path, "7:3") == {"read_bps": 0, "write_bps": 0, "read_iops": 0, "write_iops": 0}


def test_throttle_reads_back_only_its_own_device(tmp_path: Path):
    (tmp_path / "io.max").write_text("7:0 rbps=1 wbps=max riops=max wiops=max\n7:3 rbps=5 wbps=6 riops=max wiops=max\n")
    assert read_io_max(tmp_path, "7:3") == {"read_bps": 5, "write_bps": 6}
    assert read_io_max(tmp_path, "7:0") == {"read_bps": 1}  # max: no limit
    (tmp_path / "io.max").write_text("7:3 rbps=5 wbps=6 riops=7 wiops=max\n")
    assert read_io_max(tmp_path, "7:3") == {"read_bps": 5, "write_bps": 6, "read_iops": 7}
    (tmp_path / "blkio.throttle.read_bps_device").write_text("7:0 30000000\n7:3 1000\n")
    (tmp_path / "blkio.throttle.write_bps_device").write_text("7:3 2000\n")
    assert read_rules(tmp_path, "7:3") == {"read_bps": 1000, "write_bps": 2000}
    assert read_rules(tmp_path, "7:4") == {}


def test_small_files_tree_and_rates(tmp_path: Path, monkeypatch):
    import tarfile

    from shootout.workloads.smallfiles import PER_DIR, SmallFiles, write_tree_tar

    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))  # the corpus cache
    write_tree_tar(tmp_path / "t.tar", 250)
    with tarfile.open(tmp_path / "t.tar") as tar:
        members = tar.getmembers()
    assert len(members) == 250 and all(1024 <= m.size < 16 * 1024 for m in members)
    assert len({m.name.rsplit("/", 1)[0] for m in members}) == 250 // PER_DIR + 1
    stdout = "".join(f"step {s} 10.000000000 10.{n}00000000\n" for s, n in
                     (("create", 5), ("stat", 1), ("read", 2), ("delete", 4))) + compsize_lines("tree")
    values = SmallFiles().parse(result(stdout), {"files": 250})
    assert values["create_files_s"] == pytest.approx(500) and values["stat_files_s"] == pytest.approx(2500)
    steps = [values[f"{s}_files_s"] for s in ("create", "stat", "read", "delete")]
    assert min(steps) < values["geomean"] < 2500
    # the headline: the whole cycle's time (0.5 + 0.1 + 0.2 + 0.4 s), each step weighed by its time
    assert SmallFiles.spec.headline == "cycle_files_s" and values["cycle_files_s"] == pytest.approx(250 / 1.2)
    assert values["tree_compress_x"] > 1


def test_a_missing_non_free_tool_says_how_to_get_it():
    from shootout.base.errors import ToolMissing

    hint = ToolMissing("iozone", "iozone3", components=iozone.Iozone.components).hint
    assert "non-free" in hint and "apt-get install iozone3" in hint and "userspace" in hint
    assert ToolMissing("fio", "fio").hint == "install the Debian package fio: apt-get install fio"


def test_cgroup2_throttle_puts_io_max_in_a_group_the_trials_enter_and_the_journal_removes(tmp_path, monkeypatch):
    # A faked cgroup2-only root: this machine's cgroup2 has no io controller (v1 holds blkio).
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("")
    where = cgroups.Layout((cgroups.Hierarchy(root, 2, frozenset({"cpu", "io", "memory", "pids"})),))
    (tmp_path / "journal").mkdir()
    journal = Journal(tmp_path / "journal")
    area = ScratchArea(tmp_path / "scratch", {"loop": {"device": "/dev/null"}}, journal)  # /dev/null is 1:3
    config = Config("slow", parts={"throttle": {"bps": 30_000_000}})
    scratches = Scratches([config], journal)
    monkeypatch.setattr(scratches.of(config), "_area", area)  # as if the target had made it
    session = throttle._Session(journal, scratches, where)
    assert session.v2
    session.apply(config)
    session.apply(config)  # once per area
    (group,) = [d for d in root.iterdir() if d.is_dir()]
    assert (group / "io.max").read_text() == "1:3 rbps=30000000 wbps=30000000"
    assert (root / "cgroup.subtree_control").read_text() == "+memory"  # io first, then memory (writeback)
    assert session.in_force(config) == {"read_bps": 30_000_000, "write_bps": 30_000_000}
    wrap = session.wrap(config)
    assert wrap[:2] == ["/bin/sh", "-c"] and str(group / "cgroup.procs") in wrap
    assert "cgroup2 io.max" in session.facts(config)["mechanism"]
    assert area.entries and len(journal.pending) == 3  # +io, +memory, the group
    # As if killed: another process replays the journal (a real cgroupfs removes io.max with the group).
    (group / "io.max").unlink()
    journal.path.rename(tmp_path / "journal" / "1-1-1.jsonl")
    recover(tmp_path / "journal")
    assert not group.exists()
    assert (root / "cgroup.subtree_control").read_text().strip() == "-io"  # the last undo: both controllers taken back


def test_the_throttle_takes_cgroup2_where_it_has_io_and_v1_blkio_otherwise(tmp_path, monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    v1 = cgroups.Layout((cgroups.Hierarchy(tmp_path, 2, frozenset({"hugetlb"})),
                         cgroups.Hierarchy(tmp_path / "blkio", 1, frozenset({"blkio"}))))
    assert not throttle._Session(Journal(tmp_path), Scratches([], Journal(tmp_path)), v1).v2
    v2 = cgroups.Layout((cgroups.Hierarchy(tmp_path, 2, frozenset({"io", "memory"})),))
    monkeypatch.setattr(cgroups, "layout", lambda: v2)
    assert throttle.ThrottlePart().problem({"bps": 1 << 20, "with_memory": False}) is None
    assert "together need cgroup v1" in throttle.ThrottlePart().problem({"bps": 1 << 20, "with_memory": True})
    bare = cgroups.Layout((cgroups.Hierarchy(tmp_path, 2, frozenset({"cpu"})),))
    monkeypatch.setattr(cgroups, "layout", lambda: bare)
    assert "needs the io controller" in throttle.ThrottlePart().problem({"bps": 1 << 20})
