"""A run starts in well under a second: its modules leave the heavy libraries out.

scipy.stats, scipy.optimize and scipy.signal cost 0.8 s of imports and cryptography 0.1 s;
on a short comparison that was a tenth of the machine time (benchmarks/verdicts.py). `show`
may still load them; `run` must not. Checked in a fresh interpreter, so nothing imported by
another test hides a regression.
"""

from __future__ import annotations

import subprocess
import sys

RUN_PATH = ["shootout.cli.main", "shootout.cli.run", "shootout.request.request", "shootout.request.preparation", "shootout.measure.runner", "shootout.judge.analysis",
            "shootout.report.terminal", "shootout.conditions.preflight", "shootout.judge.noisefloor",
            "shootout.conditions.monitor", "shootout.measure.clock", "shootout.cli.progress"]
HEAVY = ["scipy.stats", "scipy.optimize", "scipy.signal", "cryptography"]


def test_the_run_path_does_not_import_heavy_libraries() -> None:
    code = (f"import importlib, sys\nfor m in {RUN_PATH!r}: importlib.import_module(m)\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"the run path imports {out}"
