"""Configurations that change the machine, for real (root, CI): settings switched per trial and
scratch filesystems made in files, undone after the run, on Ctrl-C and after SIGKILL (by doctor or
the next run), the killed run resumed with each trial measured once.

The settings flipped here are safe on a shared machine (writeback thresholds, zswap's pool
limit); every test puts back the values it read before, whatever happens.
"""

from __future__ import annotations

import json
import secrets
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import kill_sweep
import pytest

SYSCTL, SYSCTL_FILE = "vm.dirty_background_ratio", Path("/proc/sys/vm/dirty_background_ratio")
SYSFS = "/sys/module/zswap/parameters/max_pool_percent"
BTRFS_MAGIC, EXT4_MAGIC = 0x9123683E, 0xEF53


def machine() -> tuple[str, str]:
    return SYSCTL_FILE.read_text().strip(), Path(SYSFS).read_text().strip()


@pytest.fixture
def original(require_root) -> Iterator[tuple[str, str]]:
    before = machine()
    yield before
    if machine() != before:  # a failed test must not leave the machine changed for the others
        SYSCTL_FILE.write_text(before[0])
        Path(SYSFS).write_text(before[1])


@pytest.fixture
def scratch_in(require_root) -> Iterator[Path]:
    """A directory of this test alone on a disk (/var/tmp), for scratch files."""
    path = Path("/var/tmp") / f"shootout-test-{secrets.token_hex(4)}"
    path.mkdir()
    yield path
    subprocess.run(["umount", "-l", *[str(p) for p in path.iterdir() if p.is_dir()]], capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


def tuned(original: tuple[str, str]) -> tuple[str, str]:
    """Values other than the machine's own."""
    return ("7" if original[0] != "7" else "8"), ("15" if original[1] != "15" else "16")


def mounts_under(path: Path, pid: int | None = None) -> list[str]:
    """Mount points under path as this process sees them, or as any thread of process pid does
    (a run mounts in a private mount namespace of its own, invisible from here)."""
    tables = [Path("/proc/self/mountinfo")] if pid is None else list(Path(f"/proc/{pid}/task").glob("*/mountinfo"))
    points = []
    for table in tables:
        try:
            points += [line.split()[4] for line in table.read_text().splitlines()]
        except OSError:  # a thread that just ended
            continue
    return sorted({p for p in points if p.startswith(str(path))})


def loops_under(path: Path) -> list[str]:
    listed = subprocess.run(["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"], capture_output=True, text=True).stdout
    return [line for line in listed.splitlines() if str(path) in line]


def left_behind(path: Path) -> list[str]:
    return [*mounts_under(path), *loops_under(path), *(str(p) for p in path.iterdir())]


def write_toml(tmp_path: Path, original: tuple[str, str], scratch_in: Path, disk: bool, sleep: float = 0) -> Path:
    sysctl_value, sysfs_value = tuned(original)
    scratch = f'scratch = {{ fs = "ext4", size = "64M", in = "{scratch_in}" }}'
    command = f"cat {SYSCTL_FILE} {SYSFS} | paste -sd' ' | awk '{{print \\\"v: \\\" $1*1000+$2}}'"
    if disk:
        command = f"echo x > $SHOOTOUT_SCRATCH/f && {command}"
    toml = tmp_path / "shootout.toml"
    toml.write_text(f'''
[[config]]
name = "plain"
spec = "host"

[[config]]
name = "tuned"
spec = "host"
sysctl = {{ "{SYSCTL}" = "{sysctl_value}" }}
sysfs = {{ "{SYSFS}" = "{sysfs_value}" }}
{scratch}

[[workload]]
name = "readback"
command = "{command}; sleep {sleep}"
regex = 'v: ([0-9]+)'
unit = "score"
{'scratch = "disk"' if disk else ''}
''')
    return toml


def trials(db: Path) -> list[tuple[str, dict, dict]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select config, \"values\", in_force from trials").fetchall()
    return [(c, json.loads(v), json.loads(i)) for c, v, i in rows]


def run_facts(db: Path) -> dict:
    with sqlite3.connect(db) as conn:
        return json.loads(conn.execute("select facts from runs order by id desc limit 1").fetchone()[0])["sides"]


def test_each_trial_is_measured_with_its_configurations_settings(shootout, tmp_path, original, scratch_in):
    toml = write_toml(tmp_path, original, scratch_in, disk=False)
    done = shootout("run", "-f", str(toml), "-c", "plain", "-c", "tuned", "-w", "readback", "--max-rounds", "6",
                    "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    expected = {"plain": original, "tuned": tuned(original)}
    found = trials(tmp_path / "results.db")
    assert len(found) == 14
    for config, values, in_force in found:
        sysctl_value, sysfs_value = expected[config]
        assert values == {"value": int(sysctl_value) * 1000 + int(sysfs_value)}  # what the workload saw
        assert in_force == {"settings": {SYSCTL: sysctl_value, SYSFS: sysfs_value}}  # what was read back
    assert machine() == original
    assert f"what is compared: {SYSCTL} = {original[0]} (plain), {tuned(original)[0]} (tuned)" in " ".join(done.stdout.split())
    # The workload needs no disk, so the scratch of "tuned" was never made.
    assert "scratch" not in run_facts(tmp_path / "results.db")["tuned"]
    assert left_behind(scratch_in) == []


def start_and_wait_for_tuned(shootout, tmp_path, original, scratch_in):
    toml = write_toml(tmp_path, original, scratch_in, disk=True, sleep=0.4)
    child = shootout.popen("run", "-f", str(toml), "-c", "plain", "-c", "tuned", "-w", "readback", "--db", shootout.db)
    deadline = time.time() + 120
    while machine() != tuned(original) or not mounts_under(scratch_in, child.pid):
        assert time.time() < deadline and child.poll() is None, "the run never switched to the tuned settings"
        time.sleep(0.02)
    assert loops_under(scratch_in)  # the scratch is really a loop-mounted filesystem now
    return child


def test_ctrl_c_undoes_settings_and_scratch(shootout, tmp_path, original, scratch_in):
    child = start_and_wait_for_tuned(shootout, tmp_path, original, scratch_in)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    assert machine() == original
    assert left_behind(scratch_in) == []


@pytest.mark.parametrize("moment", ["setup", "trial"])
def test_sigkill_leaves_no_setting_scratch_or_work_directory_and_resumes(shootout, tmp_path, original, scratch_in,
                                                                          moment):
    """Killed while the tuned configuration's scratch is made, before any trial (then the next run
    cleans up), or inside a trial with its sysctl and sysfs values in force (then doctor)."""
    with kill_sweep.cleaning_up(shootout):
        toml = write_toml(tmp_path, original, scratch_in, disk=True, sleep=0.4)
        watched = kill_sweep.start(shootout, "run", "-f", str(toml), "-c", "plain", "-c", "tuned", "-w", "readback",
                                   "--min-rounds", "6", "--max-rounds", "6", "--db", shootout.db)
        if moment == "setup":
            watched.until(lambda: loops_under(scratch_in) != [] and not kill_sweep.trial_keys(tmp_path / "results.db"),
                          "the tuned scratch being made")
        else:
            watched.until(lambda: machine() == tuned(original) and mounts_under(scratch_in, watched.child.pid) != [],
                          "a trial of the tuned settings")
        watched.kill()
        time.sleep(0.5)  # the trial's own process outlives the kill by its sleep
        assert watched.workdirs, "the run's work directory was never seen"
        if moment == "trial":
            doctor = shootout("doctor")
            assert doctor.returncode == 0, doctor.stderr
            assert "undid: set vm.dirty_background_ratio" in doctor.stdout, doctor.stdout + doctor.stderr
            assert "undid: mount the ext4 scratch" in doctor.stdout
            assert machine() == original and left_behind(scratch_in) == []
            assert watched.workdirs_left() == [] and kill_sweep.journals(shootout) == []
        _, stderr = kill_sweep.resume(shootout)
        if moment == "setup":
            assert "undid a change left by a killed run: create the work directory" in stderr, stderr
        assert machine() == original and left_behind(scratch_in) == []
        assert watched.workdirs_left() == []


def test_btrfs_and_ext4_scratch_in_files_used_by_a_workload(shootout, tmp_path, scratch_in, require_root):
    toml = tmp_path / "shootout.toml"
    toml.write_text(f'''
[[config]]
name = "ext4"
spec = "host"
scratch = {{ fs = "ext4", size = "64M", in = "{scratch_in}" }}

[[config]]
name = "btrfs"
spec = "host"
scratch = {{ fs = "btrfs", mount = "compress=zstd:3", size = "128M", in = "{scratch_in}" }}

[[workload]]
name = "fsmagic"
scratch = "disk"
command = "head -c 4M /dev/zero > $SHOOTOUT_SCRATCH/zeros && sync -f $SHOOTOUT_SCRATCH/zeros && rm $SHOOTOUT_SCRATCH/zeros && printf 'magic: %d\\\\n' 0x$(stat -f -c %t $SHOOTOUT_SCRATCH)"
regex = 'magic: ([0-9]+)'
unit = "score"
''')
    done = shootout("run", "-f", str(toml), "-c", "ext4", "-c", "btrfs", "-w", "fsmagic", "--max-rounds", "6",
                    "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    for config, values, in_force in trials(tmp_path / "results.db"):
        assert values == {"value": float(BTRFS_MAGIC if config == "btrfs" else EXT4_MAGIC)}
        assert in_force["scratch"]["filesystem"] == config
    btrfs_options = [i["scratch"]["mount_options"] for c, _, i in trials(tmp_path / "results.db") if c == "btrfs"]
    assert all("compress=zstd:3" in o for o in btrfs_options)
    facts = run_facts(tmp_path / "results.db")
    for config in ("ext4", "btrfs"):
        scratch = facts[config]["scratch"]
        assert scratch["loop"]["autoclear"] is False  # detached by the journal: never freed with a rule on it
        assert scratch["loop"]["backing_file"].startswith(str(scratch_in))
        assert scratch["device"]["disk"] and "rotational" in scratch["device"]
    assert left_behind(scratch_in) == []


@pytest.mark.parametrize("table, message", [
    ('sysctl = { "vm.no_such_setting" = "1" }', "no sysctl vm.no_such_setting on this kernel"),
    (f'sysfs = {{ "{SYSFS}x" = "1" }}', f"no sysfs file {SYSFS}x"),
    ('sysctl = { "kernel.osrelease" = "1.0" }', "kernel.osrelease is read-only"),
    (f'sysctl = {{ "{SYSCTL}" = "500" }}', f"the kernel refuses '500' for {SYSCTL} (Invalid argument)"),
    (f'sysfs = {{ "{SYSFS}" = "lots" }}', f"the kernel refuses 'lots' for {SYSFS}"),
    ('scratch = "{in}/missing"', "scratch directory {in}/missing does not exist"),
    ('scratch = "/dev/shm"', "is on tmpfs: a disk workload there measures RAM"),
    ('scratch = { fs = "ext4", size = "64T", in = "{in}" }', "GiB free in {in}"),
])
def test_bad_settings_and_scratch_are_one_line_and_change_nothing(shootout, tmp_path, original, scratch_in,
                                                                  table, message):
    toml = tmp_path / "bad.toml"
    toml.write_text(f'[[config]]\nname = "bad"\nspec = "host"\n{table.replace("{in}", str(scratch_in))}\n')
    done = shootout("run", "-f", str(toml), "-c", "bad", "-w", "intmix", "--db", shootout.db)
    assert done.returncode != 0
    assert message.replace("{in}", str(scratch_in)) in " ".join(done.stderr.split())
    assert len(done.stderr.strip().splitlines()) <= 2 and "Traceback" not in done.stderr
    assert machine() == original
    assert left_behind(scratch_in) == []


def test_a_scratch_directory_that_is_not_writable(shootout, tmp_path, scratch_in):
    readonly = scratch_in / "ro"
    readonly.mkdir()
    subprocess.run(["mount", "--bind", "-o", "ro", str(readonly), str(readonly)], check=True)
    try:
        toml = tmp_path / "bad.toml"
        toml.write_text(f'[[config]]\nname = "bad"\nspec = "host"\nscratch = "{readonly}"\n')
        done = shootout("run", "-f", str(toml), "-c", "bad", "-w", "intmix", "--db", shootout.db)
    finally:
        subprocess.run(["umount", str(readonly)], check=True)
    assert done.returncode != 0
    assert f"scratch directory {readonly} is not writable" in done.stderr
    assert list(readonly.iterdir()) == []
