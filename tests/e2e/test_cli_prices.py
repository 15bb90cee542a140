"""`shootout run --price`: a price for no configuration, or none for one, is refused before anything runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shootout.store import Store


@pytest.mark.parametrize("prices, message", [
    (["host=1", "nope=2"], "error: --price names unknown configuration(s) nope (use: host, host+m32)"),
    (["host=1"], "error: no price for configuration host+m32"),
])
def test_bad_prices_are_one_line_errors_before_the_run(tmp_path: Path, prices: list[str], message: str) -> None:
    args = [a for p in prices for a in ("--price", p)]
    done = subprocess.run([sys.executable, "-m", "shootout", "run", "-c", "host", "-c", "host+m32", "-w", "intmix", *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "SHOOTOUT_HOME": str(tmp_path)})
    assert done.returncode == 2 and done.stderr.startswith(message) and len(done.stderr.strip().splitlines()) == 1
    if (tmp_path / "results.db").exists():  # nothing stored
        assert Store(f"sqlite:///{tmp_path / 'results.db'}").list_runs() == []
