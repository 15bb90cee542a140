"""SIGKILL of `shootout run` with each swap kind (root, CI): zram, zswap in front of a swap
file, and a plain swap file, killed inside a trial (then doctor), and its resumed run killed
while a trial's swap is being switched on (then the next resume). After each, doctor and
`run --resume last` must leave nothing: no swap area of the run in /proc/swaps (under any
name: once the run's private mount namespace is gone /dev/zram1 shows as /zram1, and a file on
a filesystem mounted at D as a path relative to D's root), none of its zram devices in
/sys/block, zswap as it was, no work directory on /dev/shm, no journal; and the last resumed
run completes, measuring every trial with only its configuration's swap.

Each run has a zswap configuration: its statistics need debugfs, whose mount moves the run
into a private mount namespace, as a real run with zswap does. Swap files go onto a small
ext4 filesystem of the test's own (a loop device mounted in the host's namespace), as on a
machine with a separate data disk. Only what these runs create is checked: other tests and
runs share this machine."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from kill_sweep import Watched

from shootout.swap import swaps, zswap
from shootout.system.mountns import in_host_mounts

OTHER = {  # the second configuration of each run (a zswap one: see above)
    "zram": ("zswap", '{ kind = "zswap", size = "128M", compressor = "lzo-rle" }'),
    "zswap": ("none", '"none"'),
    "disk": ("zswap", '{ kind = "zswap", size = "128M", compressor = "lzo-rle" }'),
}


def setup_of(kind: str, data: Path) -> str:
    return {"zram": '{ kind = "zram", size = "128M", compressor = "lzo" }',
            "zswap": f'{{ kind = "zswap", size = "128M", compressor = "lzo-rle", on = "{data}" }}',
            "disk": f'{{ kind = "disk", size = "128M", on = "{data}" }}'}[kind]


@pytest.fixture
def data_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 MiB ext4 filesystem mounted (in the host's mount namespace) at a directory of its own."""
    image, point = tmp_path / "data.img", tmp_path / "data"
    point.mkdir()
    with open(image, "wb") as fh:
        fh.truncate(256 << 20)
    subprocess.run(["mkfs.ext4", "-q", str(image)], check=True, capture_output=True)
    in_host_mounts(lambda: subprocess.run(["mount", "-o", "loop", str(image), str(point)], check=True,
                                          capture_output=True))
    # The run checks that its swap directory is mounted where its parent (this test) sees it, as a
    # user's shell would. Tests that made userspaces earlier moved this process into a private
    # mount namespace: mount the same device (one filesystem, not a second loop) here too.
    private = os.readlink("/proc/self/ns/mnt") != in_host_mounts(lambda: os.readlink("/proc/thread-self/ns/mnt"))
    if private:
        (device,) = subprocess.run(["losetup", "-n", "-O", "NAME", "-j", str(image)], capture_output=True,
                                   text=True, check=True).stdout.split()
        subprocess.run(["mount", device, str(point)], check=True, capture_output=True)
    yield point
    if private:
        subprocess.run(["umount", str(point)], capture_output=True)

    def release() -> list[str]:
        """Unmount; a swap file still on keeps the filesystem (and its loop device) alive in a
        killed run's mount namespace even once unmounted here: mount it again to turn it off."""
        subprocess.run(["umount", str(point)], capture_output=True)
        time.sleep(0.5)  # the loop device is freed once the filesystem is
        held = subprocess.run(["losetup", "-n", "-O", "NAME", "-j", str(image)], capture_output=True,
                              text=True).stdout.split()
        for device in held:
            subprocess.run(["mount", device, str(point)], capture_output=True)
            for f in point.glob("shootout-swap-*"):
                subprocess.run(["swapoff", str(f)], capture_output=True)
                f.unlink()
            subprocess.run(["umount", str(point)], capture_output=True)
        return held

    held = in_host_mounts(release)
    assert held == [], f"a swap file kept {point}'s filesystem alive after umount"


class Run(Watched):
    """A `shootout run` of the test's (kill_sweep.Watched: the work directories of its processes,
    by their cwd, never by name), with its journal's records and its trial's pids."""

    def __init__(self, shootout: Any, *args: str) -> None:  # conftest's Shootout
        super().__init__(in_host_mounts(lambda: shootout.popen(*args)))
        self.shootout = shootout
        self.records: list[dict[str, Any]] = []
        self.trial_pids: list[int] = []

    def look(self) -> None:
        for path in (self.shootout.home / "journal").glob("*.jsonl"):
            try:
                lines = path.read_text().splitlines()
            except FileNotFoundError:
                continue
            for line in lines:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # being written
                if "description" in record and record not in self.records:
                    self.records.append(record)
        super().look()

    @property
    def described(self) -> list[str]:
        return [r["description"] for r in self.records]

    def running_trial(self) -> bool:
        for procs in Path("/sys/fs/cgroup/memory").glob(f"shootout-{self.child.pid}-*/trial-*/cgroup.procs"):
            try:
                if len(pids := [int(p) for p in procs.read_text().split()]) >= 3:  # the driver and its tabs
                    self.trial_pids = pids
                    return True
            except FileNotFoundError:
                continue
        return False

    def kill(self) -> None:
        super().kill()
        self.look()  # the journal as the kill left it

    def finish(self, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        deadline = time.monotonic() + timeout
        while self.child.poll() is None:
            self.look()
            assert time.monotonic() < deadline, "the run did not finish"
            time.sleep(0.1)
        out, err = self.child.communicate()
        self.look()
        return subprocess.CompletedProcess(self.child.args, self.child.returncode, out, err)


def listed(path: str) -> list[str]:
    """The /proc/swaps names that may be `path`: itself, or a suffix of it from a "/" on (the
    name a reader outside the mount namespace the area was turned on in sees)."""
    names = [line.split()[0].replace("\\040(deleted)", "") for line in Path("/proc/swaps").read_text().splitlines()[1:]]
    return [n for n in names if n == path or (n.startswith("/") and path.endswith(n))]


def swap_paths(descriptions: list[str]) -> list[str]:
    """The swap files and zram devices a run's journal recorded."""
    text = " | ".join(descriptions)
    return [*re.findall(r"create swap file (\S+)", text),
            *(f"/dev/{n}" for n in re.findall(r"zram device (zram\d+)", text))]


def area_of(kind: str, paths: list[str], data: Path) -> str:
    """The path of the kind's own swap area among the run's."""
    if kind == "zram":
        return next(p for p in paths if p.startswith("/dev/zram"))
    return next(p for p in paths if p.startswith(f"{data}/"))


def nothing_left(runs: list[Run], zswap_before: dict[str, str], shootout: Any) -> None:
    paths = sorted({p for run in runs for p in swap_paths(run.described)})
    assert paths, "the runs recorded no swap area"
    on = [name for p in paths for name in listed(p)]
    assert on == [], f"still swapping on {on} (/proc/swaps: {Path('/proc/swaps').read_text()})"
    for path in paths:
        if path.startswith("/dev/zram"):
            assert not Path("/sys/block", Path(path).name).exists(), f"{path} was not removed"
        else:
            assert not Path(path).exists(), path
    assert zswap.parameters() == zswap_before
    left = sorted(d for run in runs for d in run.workdirs if Path(d).exists())
    assert left == [], f"work directories left on /dev/shm: {left}"
    assert list((shootout.home / "journal").glob("*.jsonl")) == []
    assert not [p for run in runs for p in run.trial_pids if psutil.pid_exists(p)
                and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


def clean_up(runs: list[Run], shootout: Any) -> None:
    """Undo and remove what the runs recorded, so a failing test leaves nothing on either."""
    if list((shootout.home / "journal").glob("*.jsonl")):
        in_host_mounts(lambda: shootout("doctor"))
    for path in sorted({p for run in runs for p in swap_paths(run.described)}):
        if listed(path) and Path(path).exists():
            subprocess.run(["swapoff", path], capture_output=True)
        device = Path("/sys/block", Path(path).name)
        if path.startswith("/dev/zram") and device.exists():
            subprocess.run(["sh", "-c", f"echo 1 > {device}/reset && echo {device.name[4:]} > "
                                        "/sys/class/zram-control/hot_remove"], capture_output=True)


def trial_rows(shootout: Any) -> list[tuple[int, str, str, dict[str, Any]]]:
    with sqlite3.connect(shootout.home / "results.db") as conn:
        rows = conn.execute("select round, workload, config, in_force from trials").fetchall()
    return [(r, w, c, json.loads(i or "{}")) for r, w, c, i in rows]


def check_resumed(shootout: Any, before: list[tuple[int, str, str, dict[str, Any]]], kind: str, other: str,
                  machine_swap: str, zswap_before: dict[str, str]) -> None:
    """The resumed run completed, measured nothing twice, and its trials had only their own swap."""
    after = trial_rows(shootout)
    keys = [(r, w, c) for r, w, c, _ in after]
    assert [k for k, n in Counter(keys).items() if n > 1] == []
    assert len(after) > len(before)
    with sqlite3.connect(shootout.home / "results.db") as conn:
        assert conn.execute("select status from runs order by id desc limit 1").fetchone()[0] == "complete"
    new = after[len(before):]
    assert {c for _, _, c, _ in new} == {kind, other}
    for _, _, config, in_force in new:
        state = in_force["swap"]
        assert state["machine_swap"] == machine_swap, (config, state)  # nothing the killed run left on
        if config == "none":
            assert state["area"] == "none"
        else:
            assert state["area"].startswith("partition" if config == "zram" else "file"), (config, state)
        enabled = {"zswap": "Y", "none": zswap_before["enabled"]}.get(config, "N")
        assert state["zswap"]["enabled"] == enabled, (config, state)


@pytest.mark.parametrize("kind", ["zram", "zswap", "disk"])
def test_sigkill_of_a_swap_run_leaves_nothing_after_doctor_and_resume(require_root, shootout, tmp_path, data_disk,
                                                                      kind):
    """Killed inside a trial of the kind, then doctor; its resumed run killed while the kind's area
    is switched on before a trial, then resumed again: that run undoes what the kill left, and
    completes. One chain per kind rather than a run per moment: each kill is the same."""
    zswap_before = zswap.parameters()
    machine_swap = ", ".join(f"{a.path} ({a.size_kib >> 10} MiB)" for a in swaps.areas()) or "none"
    other, other_setup = OTHER[kind]
    toml = tmp_path / "swap.toml"
    toml.write_text(f'[[config]]\nname = "{kind}"\nmemory = "48M"\nswap = {setup_of(kind, data_disk)}\n\n'
                    f'[[config]]\nname = "{other}"\nmemory = "48M"\nswap = {other_setup}\n\n'
                    "[params.tabs]\ntabs = 4\nswitches = 60\nmax_seconds = 30\n")
    run = Run(shootout, "run", "-f", str(toml), "-c", kind, "-c", other, "-w", "tabs", "--min-rounds", "6",
              "--max-rounds", "6", "--budget", "10m", "--db", shootout.db)
    runs = [run]
    try:
        try:  # inside a trial of the kind, its area on
            run.until(lambda: bool(swap_paths(run.described)), "the swap areas made")
            mine = area_of(kind, swap_paths(run.described), data_disk)
            run.until(lambda: bool(listed(mine)) and run.running_trial()
                      and (kind != "zswap" or zswap.parameters()["enabled"] == "Y"), f"a trial of {kind}")
        finally:
            run.kill()
        assert listed(mine)  # the kill left it on
        before = trial_rows(shootout)
        doctor = in_host_mounts(lambda: shootout("doctor"))  # doctor first, then the resume finds nothing to undo
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert f"undid: swapon {mine}" in doctor.stdout and "could not undo" not in doctor.stderr
        nothing_left(runs, zswap_before, shootout)

        run = Run(shootout, "run", "--resume", "last", "--db", shootout.db)
        runs.append(run)
        try:  # its area switched on before a trial: kill at once
            run.until(lambda: bool(swap_paths(run.described)), "the resumed run's swap areas made")
            mine = area_of(kind, swap_paths(run.described), data_disk)
            run.until(lambda: f"swapon {mine}" in run.described, f"swapon {mine}")
        finally:
            run.kill()
        assert "left by a killed run" not in run.said
        # the next resume undoes what the killed run left, then measures; doctor finds nothing
        resumed = Run(shootout, "run", "--resume", "last", "--db", shootout.db)
        runs.append(resumed)
        done = resumed.finish()
        assert done.returncode == 0, done.stderr[-3000:]
        assert f"undid a change left by a killed run: swapon {mine}" in done.stderr
        assert "could not undo" not in done.stderr
        doctor = in_host_mounts(lambda: shootout("doctor"))
        assert doctor.returncode == 0 and "no changes left behind by earlier runs" in doctor.stdout, doctor.stdout
        check_resumed(shootout, before, kind, other, machine_swap, zswap_before)
        nothing_left(runs, zswap_before, shootout)
    finally:
        clean_up(runs, shootout)


def test_a_swap_area_a_killed_run_left_on_is_refused_in_one_line(require_root, shootout, tmp_path):
    """As after an undo that failed (or an older shootout's kill): an area at shootout's own
    priority that no live run holds. Measuring swap setups beside it would mix them, so the
    run refuses, naming doctor, and leaves nothing of its own."""
    zswap_before = zswap.parameters()
    area = Path("/var/tmp") / f"shootout-swap-test-left-{tmp_path.name}"
    subprocess.run(["fallocate", "-l", "32M", str(area)], check=True)
    area.chmod(0o600)
    try:
        subprocess.run(["mkswap", "-q", str(area)], check=True)
        subprocess.run(["swapon", "-p", str(swaps.PRIORITY), str(area)], check=True)
        toml = tmp_path / "swap.toml"
        toml.write_text('[[config]]\nname = "zswap"\nmemory = "48M"\n'
                        'swap = { kind = "zswap", size = "64M", compressor = "lzo-rle" }\n\n'
                        '[[config]]\nname = "none"\nmemory = "48M"\nswap = "none"\n\n'
                        "[params.tabs]\ntabs = 4\nswitches = 20\nmax_seconds = 30\n")
        run = Run(shootout, "run", "-f", str(toml), "-c", "zswap", "-c", "none", "-w", "tabs", "--max-rounds", "6",
                  "--budget", "20s", "--partial", "--db", shootout.db)
        done = run.finish()
        assert done.returncode != 0
        error = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(error) == 1 and str(area) in error[0] and "`shootout doctor`" in error[0], done.stderr
        assert "Traceback" not in done.stderr
        assert listed(str(area)) == [str(area)] and not swap_paths(run.described)  # no area of its own made
        assert zswap.parameters() == zswap_before
        assert list((shootout.home / "journal").glob("*.jsonl")) == []
        with sqlite3.connect(shootout.home / "results.db") as conn:
            assert conn.execute("select count(*) from trials").fetchone()[0] == 0
    finally:
        subprocess.run(["swapoff", str(area)], capture_output=True)
        area.unlink()
