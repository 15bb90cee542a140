"""The preparation step (what is built, compiled or probed before the first trial) is named in
the run's progress output, with what it did; a run refused while preparing says only its error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TICK = '[[workload]]\nname = "tick"\ncommand = "true"\nmetric = "wall"\nunit = "s"\n'


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    toml = tmp_path / "tick.toml"
    toml.write_text(TICK)
    return subprocess.run([sys.executable, "-m", "shootout", "run", "-f", str(toml), *args, "--no-monitor",
                           "--partial", "--budget", "1m", "--max-rounds", "6", "--repeats", "0"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SHOOTOUT_HOME": str(tmp_path), "SHOOTOUT_LOAD_WAIT": "0s"})


def test_the_preparation_step_is_named_with_what_it_did(tmp_path: Path) -> None:
    done = _run(tmp_path, "-c", "host", "-c", "host+m32")
    assert done.returncode == 0, done.stderr
    named = [line for line in done.stderr.splitlines() if line.startswith("preparing configurations: ")]
    assert len(named) == 1 and "built and ran a probe program for host+m32" in named[0], done.stderr


def test_a_preparation_that_did_nothing_says_nothing(tmp_path: Path) -> None:
    done = _run(tmp_path, "-c", "host", "--aa")
    assert done.returncode == 0, done.stderr
    assert "preparing configurations" not in done.stderr
