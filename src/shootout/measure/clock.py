"""The measured clock: effective MHz from a dependent-add loop (clockloop.c), and drop checks.

The loop is compiled on first use with the host's cc (build.compile_c, cached); without a
compiler the clock is simply unknown (None) and the reason is logged.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from shootout.base.errors import ShootoutError, ToolMissing
from shootout.base.model import Config
from shootout.execution.build import compile_c
from shootout.places.host import HostTarget

log = logging.getLogger(__name__)

# One reading is a snapshot: throttling lasts seconds, and 20 ms read within 2% of 200 ms here
# (fastest of ten slices; every reading of a run takes as long, so they compare alike), at a
# tenth of the cost before every round: on a 0.4 s round, 0.2 s had been a third of the run.
SNAPSHOT_S = 0.02


def clockloop_binary() -> Path | None:
    """Path of the compiled loop (built once per source and compiler), or None with a logged reason."""
    source = resources.files("shootout.measure").joinpath("clockloop.c").read_bytes()
    host = HostTarget(Config(name="host"))
    try:
        return Path(compile_c(host, "clockloop", {"clockloop.c": source}, ["-O2"]).path)
    except ToolMissing:
        log.warning("clock not measured: no C compiler (install the Debian package gcc)")
    except ShootoutError as exc:
        log.warning("clock not measured: %s", exc)
    finally:
        host.close()
    return None


def _run(argv: list[str], timeout: float) -> dict[str, float] | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("clock loop failed: %s", exc)
        return None
    if done.returncode != 0:
        log.warning("clock loop exited %d: %s", done.returncode, done.stderr.strip()[-200:])
        return None
    values = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        try:
            values[key] = float(value)
        except ValueError:
            pass
    return values


def measure_mhz(duration_s: float = SNAPSHOT_S, binary: Path | None = None) -> float | None:
    """Effective clock of the core this runs on, in MHz (fastest of ten slices of the loop).

    Assumes one cycle per dependent add, true of x86-64 and the common ARM cores; where it
    is not, the figure is off by a constant factor and clock_drop comparisons still hold.
    """
    binary = binary or clockloop_binary()
    if binary is None:
        return None
    values = _run([str(binary), f"{duration_s:.6f}"], timeout=duration_s * 20 + 10)
    mhz = values.get("mhz") if values else None
    return mhz if mhz and mhz > 0 else None


def round_clock() -> Callable[[], float | None] | None:
    """The runner's reading before every round, with the loop built once."""
    binary = clockloop_binary()
    return None if binary is None else lambda: measure_mhz(binary=binary)


def busy_loop_seconds(iterations: int) -> float | None:
    """Run a fixed amount of the loop (iterations x 100 adds); its wall time in seconds."""
    binary = clockloop_binary()
    if binary is None:
        return None
    values = _run([str(binary), "-n", str(iterations)], timeout=3600)
    return values.get("seconds") if values else None
