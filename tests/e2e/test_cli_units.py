"""A [[workload]] whose unit `show` and the reports would not know is refused before anything runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from shootout.store import Store

_FILE = '''
[[workload]]
name = "load"
command = "echo 'load: 42'"
regex = 'load: ([0-9]+)'
unit = "pct"
direction = "higher"
'''


def test_unknown_unit_is_a_one_line_error_and_nothing_is_stored(tmp_path: Path) -> None:
    (tmp_path / "pct.toml").write_text(_FILE)
    done = subprocess.run([sys.executable, "-m", "shootout", "run", "--file", str(tmp_path / "pct.toml"), "-c", "host",
                           "--aa", "--budget", "1m"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SHOOTOUT_HOME": str(tmp_path / "home")})
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "unknown unit 'pct'" in lines[0]
    assert "MB/s" in lines[0] and "ops/s" in lines[0]  # the units it could use instead
    db = tmp_path / "home" / "results.db"
    if db.exists():
        assert Store(f"sqlite:///{db}").list_runs() == []
