"""Helpers for tests that run the real `shootout` command in a private data directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


class Shootout:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.db = f"sqlite:///{home / 'results.db'}"
        self.env = {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": str(SRC), "COLUMNS": "200",
                    "SHOOTOUT_LOAD_WAIT": "0s"}  # the test machine is busy by design

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "shootout", *args]

    def __call__(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), env=self.env, capture_output=True, text=True, timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv(*args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def rows(self, ref: str = "last") -> list[dict]:
        done = self("show", ref, "--json", "--db", self.db)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture
def shootout(tmp_path: Path) -> Shootout:
    return Shootout(tmp_path)


@pytest.fixture
def require_root() -> None:
    if os.geteuid() != 0:
        pytest.fail("this test needs root (CI runs as root)")
