"""`run --size`, `run --set`, `run --experiment` on the user's sides and `experiments show --toml`
from the command line: bad input is one line and a non-zero exit before anything is made; the
printed run file is TOML that names the write-up it reproduces."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest


def shootout(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "SHOOTOUT_HOME": str(home), "SHOOTOUT_LOAD_WAIT": "0s"}
    return subprocess.run([sys.executable, "-m", "shootout", *args], capture_output=True, text=True, timeout=120,
                          env=env, check=False)


@pytest.mark.parametrize(("args", "said"), [
    (["run", "-w", "intmix", "--size", "writeup"], "--size writeup needs --experiment"),
    (["run", "--experiment", "rpi64", "--size", "huge"], "--size 'huge' is not a size"),
    (["run", "-w", "intmix", "--set", "intmix"], "--set 'intmix' is not WORKLOAD.PARAM=VALUE"),
    (["run", "-w", "intmix", "-c", "host", "--set", "intmix.nosuch=1"], "intmix has no parameter 'nosuch'"),
    (["run", "-w", "intmix", "-c", "host", "--set", "intmix.iterations=lots"], "is not a number"),
    (["run", "-e", "rpi64", "-c", "host", "--set", "ptrtree.nodes=5"], "'ptrtree' is not a workload of this run"),
    (["run", "-e", "rpi-network", "-c", "debian:bookworm:amd64", "-c", "debian:bookworm:i386"],
     "would lose: network ("),  # (amd64, i386) on a PC, (arm64, armhf) on ARM
    (["run", "-e", "pi3desk-swap", "-c", "host", "-c", "host+m32"], "would lose: memory"),
    (["experiments", "show"], "experiments show needs an experiment"),
    (["experiments", "--toml"], "--toml and --size need an experiment"),
    (["experiments", "show", "rpi64", "--size", "writeup"], "--size goes with --toml here"),
    (["experiments", "show", "rpi64", "--toml", "--size", "big"], "--size 'big' is not a size"),
])
def test_bad_sizes_sets_and_sides_are_one_line_and_nothing_is_made(tmp_path: Path, args: list[str], said: str) -> None:
    done = shootout(*args, home=tmp_path)
    assert done.returncode != 0 and done.stdout == "", done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and said in line, line
    assert not (tmp_path / "userspaces").exists() or not any((tmp_path / "userspaces").iterdir())


def test_experiments_show_toml_prints_a_run_file_at_either_size(tmp_path: Path) -> None:
    for size, minutes in (("default", 3), ("writeup", 23.5)):
        done = shootout("experiments", "show", "rpi64", "--toml", "--size", size, home=tmp_path)
        assert done.returncode == 0, done.stderr
        data = tomllib.loads(done.stdout)
        assert data["params"]["lame"]["minutes"] == minutes and data["run"]["budget"]
        assert "Run a 64-bit OS on your Raspberry Pi 4" in done.stdout.splitlines()[1]
    listing = shootout("experiments", home=tmp_path)
    assert listing.returncode == 0 and "full size" in listing.stdout
    assert all(len(line) <= 80 for line in listing.stdout.splitlines())
