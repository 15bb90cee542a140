"""Honest conditions on this real machine: clock loop, facts, kernel log, monitor, preflight, tune."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from shootout.base.model import Config
from shootout.conditions import governor
from shootout.conditions.machinefacts import machine_facts
from shootout.conditions.monitor import Monitor
from shootout.conditions.preflight import _window, preflight
from shootout.conditions.throttling import read_kernel_log
from shootout.measure import clock
from shootout.places.host import HostTarget
from shootout.system.journal import Journal


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_measure_mhz_is_plausible_and_cached(home: Path) -> None:
    mhz = clock.measure_mhz()
    assert mhz is not None and 200 < mhz < 8000, mhz
    binary = clock.clockloop_binary()
    assert binary is not None and binary.is_relative_to(home / "cache" / "host")
    built = binary.stat().st_mtime_ns
    assert clock.measure_mhz(0.05) is not None
    assert binary.stat().st_mtime_ns == built  # compiled once


@contextmanager
def _spinning_thread() -> Iterator[None]:
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        yield
    finally:
        stop.set()
        spinner.join()


@contextmanager
def _spinning_process() -> Iterator[None]:
    spinner = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def _gate_window() -> tuple[float, float]:
    busy, runq, _ = _window(Path("/"))
    assert busy is not None and runq is not None
    return busy, runq


def test_the_gate_leaves_out_shootouts_own_start_up_but_not_others() -> None:
    """The early window runs while shootout imports: its own busy thread is not a busy machine,
    another process's is (each against a window with neither, as the machine may be busy)."""
    busy, runq = _gate_window()
    with _spinning_thread():
        own_busy, own_runq = _gate_window()
    with _spinning_process():
        other_busy, other_runq = _gate_window()
    share = 100 / (os.cpu_count() or 1)  # one CPU's share of the machine
    assert own_busy < busy + share / 4 and own_runq < runq + 0.5, (busy, runq, own_busy, own_runq)
    assert other_busy > busy + share / 2 and other_runq > runq + 0.5, (busy, runq, other_busy, other_runq)


def test_busy_loop_scales_with_work() -> None:
    small = clock.busy_loop_seconds(2_000_000)
    large = clock.busy_loop_seconds(8_000_000)
    assert small is not None and large is not None
    assert 2.0 < large / small < 8.0  # 4x the work; generous for a shared machine


def test_no_compiler_means_unknown_clock(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(HostTarget, "which", lambda self, name: None)
    assert clock.measure_mhz() is None
    assert "no C compiler" in caplog.text and "gcc" in caplog.text


def test_machine_facts_here() -> None:
    f = machine_facts()
    assert f["cores"] == os.cpu_count()
    assert f["kernel"] == os.uname().release
    assert f["arch"] == os.uname().machine
    assert f["memory_bytes"] and f["memory_bytes"] > 100 * 2**20
    assert f["machine_id"] and f["machine_id"] == machine_facts()["machine_id"]


def test_target_facts_of_the_host() -> None:
    target = HostTarget(Config("host"))
    try:
        f = target.facts()
        sizing = target.probe()
    finally:
        target.close()
    assert sizing.cores == len(os.sched_getaffinity(0))
    assert sizing.memory_bytes == machine_facts()["memory_bytes"]
    assert 0 < (sizing.available_bytes or 0) < sizing.memory_bytes
    assert "l1" in sizing.caches_kib and "l2" in sizing.caches_kib
    assert f["uname_m"] == os.uname().machine
    assert f["libc"] and f["libc"].startswith("glibc")
    if shutil.which("dpkg"):
        expected = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
        assert f["dpkg_arch"] == expected
    assert f["distro"]


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="writing to /dev/kmsg needs root")
def test_kernel_log_timestamps_map_to_unix_time() -> None:
    marker = f"shootout self-test marker {uuid.uuid4()}"  # matches no event pattern on purpose
    fd = os.open("/dev/kmsg", os.O_WRONLY)
    try:
        os.write(fd, f"<6>{marker}\n".encode())
    finally:
        os.close(fd)
    records = read_kernel_log()
    assert records is not None
    found = [ts for ts, msg in records if marker in msg]
    assert len(found) == 1
    assert abs(found[0] - time.time()) < 5


def test_monitor_on_this_machine() -> None:
    mon = Monitor(interval_s=0.1)
    with mon:
        t0 = time.time()
        clock.busy_loop_seconds(3_000_000)
        t1 = time.time()
    samples = mon.samples()
    assert len(samples) >= 2
    assert all(s["load1"] is not None and s["runq"] is not None for s in samples)
    assert any(s["steal_pct"] is not None for s in samples)
    w = mon.window(t0, t1)
    assert w["samples"] >= 1 and w["max_load"] is not None and w["cpus"] == os.cpu_count()
    assert mon.cpu_s < 0.05 * len(samples)  # under 50 ms of CPU per sample, far under in practice


def test_preflight_here(tmp_path: Path) -> None:
    pf = preflight(tune=False, journal=None, load_wait_s=0, clock=clock.measure_mhz)
    text = "\n".join(pf.lines)
    assert "load:" in text and "governor:" in text and "virtualization:" in text
    assert "measured clock:" in text and "MHz" in text
    assert "kernel log:" in text
    assert pf.facts["conditions"]["measured_mhz"] > 200


def test_tune_here_changes_nothing_or_restores(tmp_path: Path) -> None:
    before = governor.governors()
    (tmp_path / "j").mkdir()
    j = Journal(tmp_path / "j")
    try:
        lines = governor.tune(j)
        if not before:
            assert lines == [governor.NO_CPUFREQ]
            assert j.pending == [] and not j.path.exists()
        else:
            assert set(governor.governors().values()) <= {"performance"} | set(before.values())
    finally:
        assert j.undo() == []
    assert governor.governors() == before


def test_overhead_benchmark_runs() -> None:
    from shootout.measure.overhead import measure

    r = measure(runs=6, interval_s=0.02, seconds=0.05)
    assert r["median_with_s"] > 0 and r["median_without_s"] > 0
    assert r["estimate"] is not None and r["estimate"].n == 6
    assert r["verdict"] in {"faster", "slower", "same", "inconclusive"}
    assert 0 < r["monitor_cpu_ms_per_sample"] < 50


def test_the_gate_names_the_process_that_keeps_the_machine_busy() -> None:
    from shootout.conditions.preflight import wait_for_idle

    cpus = os.cpu_count() or 1
    # One spinning process per CPU: busy by any measure, whatever else runs here.
    spinners = [subprocess.Popen(["bash", "-c", "while :; do :; done"]) for _ in range(cpus)]
    try:
        time.sleep(0.3)
        gate = wait_for_idle(1.5, cpus)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert not gate.idle
    assert gate.busiest and any(f"(pid {s.pid})" in line for s in spinners for line in gate.busiest), gate.busiest
