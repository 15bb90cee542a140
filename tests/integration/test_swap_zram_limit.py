"""A zram configuration's max_pool_percent on the real kernel (root, CI), through `shootout run`:
the device's mem_limit is that share of the configuration's memory limit (the machine it
emulates), read back from the device itself while the run goes; the tabs push the device
against it; what happens there is what the run reports, in one line and without a traceback;
and the device is gone afterwards. At the limit the device refuses writes and the kernel cannot
swap those pages out; then either the cgroup's OOM killer takes tabs and the trial ends (its
tabs lost and the refused writes in the recorded amounts), or the kernel retries the swap-out
in vain and the trial times out (measured here both ways, in runs of the same configuration),
and the run's error says the device refused writes. (Its removal after SIGKILL + `shootout doctor` is the same journal
entry as any zram device's: test_swap_setups.test_sigkill_then_doctor_restores_everything and
test_swap_kills cover it.)

zram compares its memory with mem_limit only after zsmalloc has allocated for a write, so the
device may pass the limit by a zspage chain (CONFIG_ZSMALLOC_CHAIN_SIZE pages) per writer at
once: measured here, 64 KiB over a 4.8 MiB limit on 2 CPUs."""

from __future__ import annotations

import gzip
import os
import platform
import re
import sqlite3
import time
from pathlib import Path

from test_swap_setups import gone, run_facts, trials, write_toml

MEMORY_MIB, PERCENT = 48, 10
SETUP = f'{{ kind = "zram", size = "128M", compressor = "lzo", max_pool_percent = {PERCENT} }}'
PAGE = os.sysconf("SC_PAGE_SIZE")
# the device's mem_limit as the kernel holds it: the share, rounded up to whole pages
LIMIT = -(-(MEMORY_MIB << 20) * PERCENT // 100 // PAGE) * PAGE


def chain_pages() -> int:
    """CONFIG_ZSMALLOC_CHAIN_SIZE of this kernel: the most pages zsmalloc allocates at once (default 8)."""
    for path in (Path("/proc/config.gz"), Path(f"/boot/config-{platform.release()}")):
        try:
            with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as fh:
                text = fh.read()
        except OSError:
            continue
        if m := re.search(r"^CONFIG_ZSMALLOC_CHAIN_SIZE=(\d+)", text, re.MULTILINE):
            return int(m[1])
    return 8


def watch(home: Path, child_running, deadline: float) -> tuple[str | None, list[list[int]]]:
    """The zram device the run adds (from its journal) and its mm_stat and io_stat, read 20 times
    a second until it is gone: the kernel's own figures, beside the run's sampler."""
    device, readings = None, []
    while time.time() < deadline:
        if device is None:
            for path in (home / "journal").glob("*.jsonl"):
                if m := re.search(r"zram device (zram\d+)", path.read_text()):
                    device = m[1]
        if device is not None:
            base = Path("/sys/block", device)
            try:  # from its disksize on: the run sets mem_limit before it (hot_add gives a bare device)
                if int((base / "disksize").read_text()):
                    row = ([int(x) for x in (base / "mm_stat").read_text().split()]
                           + [int((base / "io_stat").read_text().split()[1])])
                    # disksize again: mm_stat waits out a reset in progress (the run's end), which
                    # zeroes mem_limit before disksize; a row read across it is not the device's
                    if int((base / "disksize").read_text()):
                        readings.append(row)
            except (OSError, IndexError, ValueError):
                if readings:
                    break  # removed at the run's end
        if not child_running():
            break
        time.sleep(0.05)
    return device, readings


def test_zram_pool_share_is_the_devices_mem_limit_and_the_run_reports_the_limit_hit(require_root, shootout, tmp_path):
    toml = write_toml(tmp_path / "zram.toml", memory=f"{MEMORY_MIB}M",
                      tabs="switches = 60\nmax_seconds = 20\ntimeout_s = 45", zram=SETUP)
    child = shootout.popen("run", "-f", str(toml), "-c", "zram", "-w", "tabs", "--max-rounds", "6",
                           "--budget", "120s", "--partial", "--db", shootout.db)
    try:
        device, readings = watch(tmp_path, lambda: child.poll() is None, time.time() + 600)
        out, err = child.communicate(timeout=600)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
            shootout("doctor")
    assert "Traceback" not in err
    assert device is not None and readings, "the run added no zram device"
    slack = (os.cpu_count() or 1) * chain_pages() * PAGE

    # the share of the memory limit is the device's mem_limit, read from the device itself
    mm = {k: [r[i] for r in readings] for i, k in enumerate(("orig", "compr", "used", "limit", "used_max"))}
    assert set(mm["limit"]) == {LIMIT}, set(mm["limit"])
    # the tabs pressed the device against its limit, and it held there (within the allocation it checks after)
    assert LIMIT - slack <= max(mm["used"]) <= LIMIT + slack, (max(mm["used"]), LIMIT)
    assert max(mm["used_max"]) <= LIMIT + slack, (max(mm["used_max"]), LIMIT)
    assert readings[-1][-1] > 0, "the device refused no write: the tabs never reached its mem_limit"
    why = (r"timed out after \d+ s; the zram device refused [\d,]+ writes at its mem_limit "
           r"\(pages the kernel could not swap out\)")
    said = " ".join((out + err).split())
    with sqlite3.connect(tmp_path / "results.db") as conn:
        kept = conn.execute("select count(*) from runs").fetchone()[0]
    if not kept:  # its only trial timed out: a run that measured nothing is not kept, its one line says why
        assert child.returncode != 0 and re.search(f"error: tabs failed on zram: {why}", said), (out, err)
        gone([f"/dev/{device}"], [])
        assert list((tmp_path / "journal").glob("*.jsonl")) == []
        return
    facts = run_facts(tmp_path / "results.db")["zram"]  # and in the run's facts
    assert facts["swap"]["zram_mem_limit"] == f"{LIMIT} bytes, {PERCENT}% of the configuration's memory limit " \
                                              f"({MEMORY_MIB} MiB)", facts["swap"]
    assert facts["swap"]["setup"] == f"128 MiB zram, lzo, pool <= {PERCENT}% of the {MEMORY_MIB} MiB memory limit"

    found = trials(tmp_path / "results.db")
    assert found
    for t in found:  # also a trial that timed out keeps what the device held
        assert t["in_force"]["swap"]["zram"]["mem_limit"] == LIMIT, t["in_force"]["swap"]
        swap = t["observed"]["swap"]
        assert (LIMIT - slack) / 2**20 <= swap["zram_mem_mib"] <= (LIMIT + slack) / 2**20, swap
        assert swap["zram_failed_writes"] > 0, swap  # at the limit the device refuses writes
    with sqlite3.connect(tmp_path / "results.db") as conn:
        errors = [e for (e,) in conn.execute("select error from trials") if e]
    for t in found:
        if t["values"]:  # the OOM killer took tabs and the trial ended
            assert t["observed"]["memory"]["oom_kills"] >= t["values"]["tabs_killed"] > 0, t
    if not errors:  # every trial ended: the output's recorded amounts say what was lost and refused
        assert child.returncode == 0 and len(found) >= 2, err
        refused = re.search(r"swap\.zram_failed_writes \(pages\) ([\d,.]+)", said)
        lost = re.search(r"tabs_killed \(tabs\) ([\d,.]+)", said)
        assert refused and float(refused[1].replace(",", "")) > 0, out
        assert lost and float(lost[1]) > 0, out
    else:  # the kernel swapped out in vain: the trial timed out, and its error and the run's output say why
        assert len(errors) == 1 and re.fullmatch(why, errors[0]), errors
        assert re.search(why, said), (child.returncode, out, err)
    gone([f"/dev/{device}"], run_facts(tmp_path / "results.db")["zram"]["memory"]["cgroup"])
    assert list((tmp_path / "journal").glob("*.jsonl")) == []
