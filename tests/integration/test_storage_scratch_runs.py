"""Storage workloads for real (root, CI): dd-write and fio on file-backed ext4 and btrfs+zstd
scratches behind a throttle, iozone inside a userspace (non-free, installed on first use), and
the throttle rule, loop devices and work directories gone after a normal exit and after SIGKILL
(then doctor, or the next run) with the resumed run measuring each trial once, and the
scratch trimmed at the start of every round.

Sizes are a few MiB. Other helpers' tests use loop devices and blkio rules at the same time,
so every check looks only at what this test made: its scratch directory and its devices.
"""

from __future__ import annotations

import sqlite3
import statistics
import subprocess
import time
from pathlib import Path

import kill_sweep
import psutil
import pytest
from shared_spaces import AMD64, Spaces
from test_config_parts import left_behind, loops_under, run_facts, scratch_in, trials  # noqa: F401  (a fixture)

from shootout.parts.throttle import blkio_root, read_rules

RATE = 20_000_000  # bytes/s: a small file written at this rate takes a measurable time


def configs_toml(scratch_in: Path, rate: int = RATE, spec: str = "host") -> str:
    return f'''
[[config]]
name = "ext4"
spec = "{spec}"
scratch = {{ fs = "ext4", size = "96M", in = "{scratch_in}", throttle = "{rate}B/s" }}

[[config]]
name = "btrfs-zstd"
spec = "{spec}"
scratch = {{ fs = "btrfs", mount = "compress=zstd", size = "160M", in = "{scratch_in}", throttle = "{rate}B/s" }}
'''


def rules_left(devices: list[str]) -> dict[str, dict[str, int]]:
    root = blkio_root()
    assert root is not None, "this machine has no cgroup v1 blkio hierarchy"
    return {d: rules for d in devices if (rules := read_rules(root, d))}


def test_throttled_pair_btrfs_zstd_writes_zeros_faster_and_fio_runs_buffered(shootout, tmp_path, scratch_in):
    toml = tmp_path / "shootout.toml"
    toml.write_text(configs_toml(scratch_in) + '''
[params.dd-write]
size_mib = 6

[params.fio]
size_mib = 4
runtime_s = 0.2
ramp_s = 0.1
jobs = ["seq_write", "randread_qd32"]
''')
    done = shootout("run", "-f", str(toml), "-c", "ext4", "-c", "btrfs-zstd", "-w", "dd-write", "-w", "fio",
                    "--max-rounds", "8", "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    rows = shootout.rows()
    zeros = next(r for r in rows if r["metric"] == "zeros_mbps")
    assert zeros["ci_low"] > 1, zeros  # compressed zeros pass the throttle faster: CI above 1
    db = tmp_path / "results.db"
    ext4_corpus = [v["corpus_mbps"] for c, v, _ in trials(db) if c == "ext4" and "corpus_mbps" in v]
    assert statistics.median(ext4_corpus) < 1.5 * RATE / 1e6  # fsync waited for the throttled device
    for config, values, in_force in trials(db):
        assert in_force["throttle"] == {"read_bps": RATE, "write_bps": RATE}
        if config == "btrfs-zstd" and "zeros_mbps" in values:
            assert values["zeros_compress_x"] > 4 and values["corpus_compress_x"] > 1
            assert values["zeros_zstd_x"] > 4 and values["zeros_zstd_raw_mib"] > 0  # compsize's row per algorithm
    btrfs_zeros = [v["zeros_mbps"] for c, v, _ in trials(db) if c == "btrfs-zstd" and "zeros_mbps" in v]
    if statistics.median(btrfs_zeros) > 1.2 * RATE / 1e6:  # above the link: compsize's ratio explains it
        assert any(f.startswith("compression: btrfs-zstd") for f in zeros["flags"]), zeros
    facts = run_facts(db)
    assert facts["ext4"]["workloads"]["fio"]["direct"] is True
    assert facts["btrfs-zstd"]["workloads"]["fio"]["direct"] is False  # O_DIRECT would skip compression
    assert facts["ext4"]["scratch"]["loop"]["direct_io"] is True  # reads reach the disk, not the image's cache
    devices = [facts[c]["throttle"]["device"] for c in ("ext4", "btrfs-zstd")]
    assert rules_left(devices) == {} and left_behind(scratch_in) == []


def our_rules(rate: int) -> dict[str, str]:
    """Devices that carry this test's write rule -> the file each is attached to ("" when free)."""
    root = blkio_root()
    assert root is not None
    rules = (root / "blkio.throttle.write_bps_device").read_text().splitlines()
    found = {}
    for device in [line.split()[0] for line in rules if line.endswith(f" {rate}")]:
        listed = subprocess.run(["losetup", "-l", "-n", "-O", "MAJ:MIN,BACK-FILE"], capture_output=True, text=True)
        files = [line.split(None, 1) for line in listed.stdout.splitlines()]
        found[device] = next((f[1].strip() for f in files if len(f) == 2 and f[0].strip() == device), "")
    return found


def dd_running(watched: kill_sweep.Watched) -> bool:
    try:
        return any(p.name() == "dd" for p in psutil.Process(watched.child.pid).children(recursive=True))
    except psutil.Error:
        return False


@pytest.mark.parametrize("moment", ["setup", "trial"])
def test_sigkill_leaves_no_throttle_loop_or_work_directory_and_resumes(shootout, tmp_path, scratch_in, moment):
    """Killed while the scratches are made (then the next run cleans up), or inside a dd-write
    trial of the throttled btrfs scratch (then doctor): the throttle rule never outlives its loop
    device, and nothing of the run is left; the resumed run measures each trial once."""
    with kill_sweep.cleaning_up(shootout):
        rate = 4_000_000 + (int(time.time()) % 1000) * 4096  # a rate no one else sets: this test's rule
        toml = tmp_path / "shootout.toml"
        toml.write_text(configs_toml(scratch_in, rate) + "[params.dd-write]\nsize_mib = 3\n")
        watched = kill_sweep.start(shootout, "run", "-f", str(toml), "-c", "ext4", "-c", "btrfs-zstd", "-w", "dd-write",
                                   "--min-rounds", "6", "--max-rounds", "6", "--budget", "60m", "--db", shootout.db)
        if moment == "setup":  # a scratch made, no trial yet
            watched.until(lambda: loops_under(scratch_in) != [] and our_rules(rate) == {}, "a scratch being made")
        else:
            watched.until(lambda: len(our_rules(rate)) == 2 and dd_running(watched), "a dd-write trial, both throttled")
        watched.kill()
        time.sleep(0.5)
        assert watched.workdirs, "the run's work directory was never seen"
        # Until doctor or the next run, a rule stays only on a device still attached to the run's
        # own file: a number the kernel has freed would throttle whoever gets it next.
        assert all(back.startswith(str(scratch_in)) for back in our_rules(rate).values()), our_rules(rate)
        if moment == "trial":
            doctor = shootout("doctor")
            assert doctor.returncode == 0, doctor.stderr
            assert "undid: throttle the scratch device" in doctor.stdout, doctor.stdout + doctor.stderr
            assert "undid: create the work directory /dev/shm/shootout-" in doctor.stdout
            assert our_rules(rate) == {} and left_behind(scratch_in) == []
            assert watched.workdirs_left() == [] and kill_sweep.journals(shootout) == []
        _, stderr = kill_sweep.resume(shootout)
        if moment == "setup":
            assert "undid a change left by a killed run: create the work directory" in stderr, stderr
        assert our_rules(rate) == {} and left_behind(scratch_in) == []
        assert watched.workdirs_left() == []


def test_iozone_and_small_files_in_a_userspace_on_ext4_and_compressing_btrfs(spaces: Spaces, shootout, tmp_path, scratch_in):
    spaces.need(AMD64)
    shootout.env["SHOOTOUT_HOME"] = str(spaces.home)  # the shared userspaces; iozone3 comes on first use
    toml = tmp_path / "shootout.toml"
    toml.write_text(configs_toml(scratch_in, spec=f"userspace:{AMD64}")
                    + '[params.iozone]\nsize_mib = 1\nrecords = ["4k", "512k"]\n'
                    + '[params.small-files]\nfiles = 200\n')
    done = shootout("run", "-f", str(toml), "-c", "ext4", "-c", "btrfs-zstd", "-w", "iozone", "-w", "small-files",
                    "--max-rounds", "8",
                    "--threshold", "50%", "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "results.db"
    for config, values, _in_force in trials(db):
        if "write_4k" in values:
            assert {"randwrite_512k", "geomean"} <= set(values)
        else:  # small-files: every step counted, and on btrfs what the tree takes on disk
            assert {"create_files_s", "read_files_s", "delete_files_s"} <= set(values)
            # the headline is the cycle's rate: files over the four steps' summed time
            steps = [values[f"{s}_files_s"] for s in ("create", "stat", "read", "delete")]
            assert values["cycle_files_s"] == pytest.approx(1 / sum(1 / r for r in steps))
            assert ("tree_compress_x" in values) == (config == "btrfs-zstd")
    facts = run_facts(db)
    assert "-I" in facts["ext4"]["workloads"]["iozone"]["flags"]
    assert "-I" not in facts["btrfs-zstd"]["workloads"]["iozone"]["flags"]
    assert facts["ext4"]["workloads"]["iozone"]["versions"]["iozone"].startswith("Version $Revision: 3.")
    assert left_behind(scratch_in) == []


def test_an_iops_limit_holds_4k_requests_to_it_and_is_lifted_with_the_bandwidth(shootout, tmp_path, scratch_in):
    """scratch.iops beside the throttle (rpi-iozone's model of a USB 2 bridge): fio's 4 KiB direct
    requests at queue depth 1 run at the limit, far below what this disk does without it."""
    toml = tmp_path / "shootout.toml"
    toml.write_text(f'''
[[config]]
name = "slow-requests"
spec = "host"
scratch = {{ fs = "ext4", size = "96M", in = "{scratch_in}", throttle = "{RATE}B/s", iops = {{ read = 600, write = 300 }} }}

[params.fio]
size_mib = 4
runtime_s = 1
ramp_s = 0.2
jobs = ["randwrite_qd1", "randread_qd1"]
''')
    done = shootout("run", "-f", str(toml), "-c", "slow-requests", "-w", "fio", "--max-rounds", "6",
                    "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "results.db"
    measured = [(values, in_force) for _config, values, in_force in trials(db)]
    assert measured
    for values, in_force in measured:
        assert in_force["throttle"] == {"read_bps": RATE, "write_bps": RATE, "read_iops": 600, "write_iops": 300}
        assert 150 < values["randwrite_qd1_iops"] < 300 * 1.15, values
        assert 300 < values["randread_qd1_iops"] < 600 * 1.15, values
    facts = run_facts(db)
    assert facts["slow-requests"]["throttle"]["iops"] == {"read": 600, "write": 300}
    assert rules_left([facts["slow-requests"]["throttle"]["device"]]) == {} and left_behind(scratch_in) == []


def test_a_scratch_too_small_for_the_file_is_a_one_line_error(shootout, tmp_path, scratch_in):
    toml = tmp_path / "shootout.toml"
    toml.write_text(f'''
[[config]]
name = "small"
spec = "host"
scratch = {{ fs = "ext4", size = "32M", in = "{scratch_in}" }}

[params.dd-write]
size_mib = 32
''')
    done = shootout("run", "-f", str(toml), "-c", "small", "-w", "dd-write", "--db", shootout.db)
    assert done.returncode != 0
    assert "dd-write: needs 64 MiB in the scratch" in " ".join((done.stdout + done.stderr).split())
    assert left_behind(scratch_in) == []


def test_an_ext4_scratch_is_trimmed_at_the_start_of_every_round(shootout, tmp_path, scratch_in):
    toml = tmp_path / "shootout.toml"
    write = "head -c 4M /dev/urandom > $SHOOTOUT_SCRATCH/f && sync -f $SHOOTOUT_SCRATCH/f"
    toml.write_text(f'''
[[config]]
name = "ext4"
spec = "host"
scratch = {{ fs = "ext4", size = "32M", in = "{scratch_in}" }}

[[workload]]
name = "write-and-delete"
scratch = "disk"
command = "{write} && rm $SHOOTOUT_SCRATCH/f && sync -f $SHOOTOUT_SCRATCH"
''')
    done = shootout("run", "-f", str(toml), "-c", "ext4", "-w", "write-and-delete", "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "results.db"
    with sqlite3.connect(db) as conn:
        rounds = sorted(r for (r,) in conn.execute("select distinct round from trials"))
    trim = run_facts(db)["ext4"]["scratch"]["trim"]
    assert trim["discard"] is True and trim["device"].startswith("loop")  # /var/tmp's filesystem punches holes
    assert trim["rounds"] == rounds and "failed_rounds" not in trim, trim
    # Each round's trim finds the 4 MiB the trial before it wrote and deleted (ext4 trims a
    # block group again only when blocks were freed in it since its last trim).
    assert all(b >= 4 * 2**20 for b in trim["bytes_trimmed"]), trim
    assert left_behind(scratch_in) == []
