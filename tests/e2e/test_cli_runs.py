"""`shootout runs` into a pipe: plain lines with every cell whole, as the README promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from shootout.base.model import Config, Metric, Run, RunSettings, WorkloadSpec
from shootout.base.runfacts import RunFacts
from shootout.store import Store

CONFIGS = ["btrfs-zstd-throttled-30MBps-on-the-usb-ssd", "ext4-plain-throttled-30MBps-on-the-usb-ssd",
           "swap-zram-lz4-with-half-the-memory"]
WORKLOADS = ["dd-zeros-then-a-realistic-corpus", "small-files", "iozone", "sha1-sparse", "tabs"]


def test_runs_into_a_pipe_keeps_every_configuration_name_whole(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    Store(url).create_run(Run(
        id=0, created_at=1_700_000_000.0, status="complete", settings=RunSettings(seed=1),
        configs=[Config(name=n, target="host") for n in CONFIGS],
        workloads=[WorkloadSpec(name=n, category="storage", description=n, metrics=(Metric("wall", "s"),),
                                headline="wall") for n in WORKLOADS],
        params={}, facts=RunFacts()))
    done = subprocess.run([sys.executable, "-m", "shootout", "runs", "--db", url], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].split()[0] == "1" and lines[0].endswith("complete  0 trials")
    assert all(len(line) <= 80 for line in lines)
    words = " ".join(done.stdout.split())  # wrapped between names, each name whole
    assert f"configurations: {', '.join(CONFIGS)}" in words and f"workloads: {', '.join(WORKLOADS)}" in words
