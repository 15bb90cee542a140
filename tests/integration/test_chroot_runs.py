"""Runs inside the userspaces: a SIGKILLed run leaves no mount even before `doctor` and
resumes without a duplicated trial; a missing package is installed on first use; the disk
scratch is visible inside a chroot and gone afterwards."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from shared_spaces import AMD64, I386, Spaces, mounts_anywhere

from shootout.base.model import RunSettings
from shootout.measure.runner import Runner, RunRequest
from shootout.places.chroot import ChrootTarget, named_userspace_config
from shootout.store import Store
from shootout.system.journal import Journal, journal
from shootout.userspace.packages import installed_versions
from shootout.userspace.registry import get_ready
from shootout.workloads.contract import Tool
from shootout.workloads.user import CommandWorkload

SRC = Path(__file__).resolve().parents[2] / "src"


def _trials(db: Path) -> list[tuple]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("select round, workload, config from trials").fetchall()
    except sqlite3.OperationalError:  # the schema is not created yet
        return []


def _others(home: Path) -> dict[str, int]:
    """Mounts under home in every mount namespace but this test process's own."""
    own = os.readlink("/proc/self/ns/mnt")
    return {ns: n for ns, n in mounts_anywhere(home).items() if ns != own}


def test_sigkill_of_a_chroot_run_leaves_no_mount_and_resume_completes(spaces: Spaces, tmp_path: Path) -> None:
    spaces.need(AMD64)
    spaces.need(I386)
    toml = tmp_path / "shootout.toml"
    toml.write_text('[[workload]]\nname = "nap"\ncommand = "sleep 0.05"\n'
                    '[[workload]]\nname = "count"\ncommand = "seq 1 20000 | wc -l"\n')
    db = tmp_path / "r.db"
    env = {**os.environ, "SHOOTOUT_HOME": str(spaces.home), "PYTHONPATH": str(SRC), "SHOOTOUT_LOAD_WAIT": "0s"}
    configs = [f"userspace:{AMD64}", f"userspace:{I386}"]
    args = [sys.executable, "-m", "shootout", "run", "-c", configs[0], "-c", configs[1], "--file", str(toml),
            "-w", "nap", "-w", "count", "--seed", "9", "--max-rounds", "8", "--threshold", "50%",
            "--db", f"sqlite:///{db}"]
    child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while len(_trials(db)) < 10:
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read() if child.stderr else ""
            time.sleep(0.05)
        namespace = os.readlink(f"/proc/{child.pid}/ns/mnt")
        held = _others(spaces.home).get(namespace, 0)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert held >= 15  # .sessions, and root, proc, sys, dev, dev/pts, dev/shm, /tmp of each userspace
    deadline = time.monotonic() + 10
    while _others(spaces.home):  # no doctor, no next run: the kernel alone
        assert time.monotonic() < deadline, _others(spaces.home)
        time.sleep(0.05)
    before = _trials(db)
    assert 10 <= len(before) < 8 * 4, "the kill should land mid-run"
    done = subprocess.run([*args[:3], "run", "--resume", "last", "--db", f"sqlite:///{db}"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    after = _trials(db)
    assert max(Counter(after).values()) == 1  # nothing doubled
    # every round up to the last one each workload needed, on both sides (a 50% threshold
    # decides each by round 7, the first round the sequential rule may look, or 8 at most)
    last = {w: max(r for r, name, _ in after if name == w) for w in ("nap", "count")}
    assert set(last.values()) <= {7, 8}
    expected = {(r, w, c) for w in last for r in range(0, last[w] + 1) for c in configs}
    assert set(after) == expected and set(before) <= set(after)
    assert _others(spaces.home) == {}
    # the counters pass ran inside each userspace (valgrind installed there on first use), every
    # process of the pipeline under cachegrind
    counted = Store(f"sqlite:///{db}").get_run("last").counters["count"]
    assert {c: r["source"] for c, r in counted.items()} == dict.fromkeys(configs, "cachegrind"), done.stderr
    assert all(r["processes"] >= 2 and r["counts"]["instructions"] > 0 for r in counted.values())


class BcAndIozone(CommandWorkload):
    """A workload that needs a package from main and one from non-free."""

    tools = (Tool("bc", "bc"), Tool("iozone", "iozone3"))
    components = ("non-free",)


def test_a_package_a_workload_needs_is_installed_on_first_use(spaces: Spaces, tmp_path: Path) -> None:
    spaces.need(I386)
    config = named_userspace_config(I386)
    root = get_ready(I386).root
    with journal() as j:  # start from a userspace without them, and with main only
        target = ChrootTarget(config, j)
        try:
            target.run(["dpkg", "--purge", "bc", "iozone3"], timeout=300)
            sources = target.read("/etc/apt/sources.list").decode()
            target.put(sources.replace(" non-free", "").encode(), "/etc/apt/sources.list")
        finally:
            target.close()
    assert not {"bc", "iozone3"} & set(installed_versions(root))
    started = time.time()
    work = BcAndIozone({"name": "bc-iozone", "command": "echo '2^10' | bc | grep -qx 1024 && iozone -v >/dev/null"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = Runner(store, Journal(tmp_path)).start(
        RunRequest([config], [work], RunSettings(seed=1, min_rounds=1, max_rounds=1, counters=False)))
    trials = store.trials(run_id)
    assert store.get_run(run_id).status == "complete", [t.error for t in trials]
    assert trials and all(t.ok for t in trials)
    meta = get_ready(I386).meta
    versions = installed_versions(root)
    for package in ("bc", "iozone3"):
        assert meta["packages"][package] == versions[package]
        assert meta["installed_on_use"][package]["at"] >= started
    assert "non-free" in (root / "etc/apt/sources.list").read_text()


def test_disk_scratch_is_bind_mounted_inside_and_gone_after_close(spaces: Spaces) -> None:
    spaces.need(I386)
    with journal() as j:
        target = ChrootTarget(named_userspace_config(I386), j)
        try:
            inside = target.scratch("disk")
            assert target._scratch_area is not None
            host = target._scratch_area.host_path
            target.run(["sh", "-c", f"echo written-inside > {inside}/f"])
            assert Path(host, "f").read_text() == "written-inside\n"
            assert target.run(["findmnt", "-n", inside]).exit_status == 0  # a mount point inside
        finally:
            target.close()
    assert not Path(host).exists() and target.close_errors == []
    with pytest.raises(FileNotFoundError):
        Path(host, "f").read_text()
