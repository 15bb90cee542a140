"""The measured clock: effective MHz from a dependent-add loop (clockloop.c), and drop checks.

The loop is compiled on first use with the host's cc into the cache directory; without a
compiler the clock is simply unknown (None) and the reason is logged.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from shootout.paths import cache_dir

log = logging.getLogger(__name__)

DROP_LIMIT = 0.03  # a clock more than 3% below the reference counts as throttling


def _source() -> bytes:
    return resources.files("shootout.conditions").joinpath("clockloop.c").read_bytes()


def clockloop_binary() -> Path | None:
    """Path of the compiled loop (built once per source version), or None with a logged reason."""
    source = _source()
    digest = hashlib.sha256(source).hexdigest()[:16]
    binary = cache_dir() / "conditions" / f"clockloop-{os.uname().machine}-{digest}"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        log.warning("clock not measured: no C compiler (install the Debian package gcc)")
        return None
    binary.parent.mkdir(parents=True, exist_ok=True)
    src = binary.with_suffix(".c")
    src.write_bytes(source)
    tmp = binary.with_name(f"{binary.name}.{os.getpid()}.tmp")
    done = subprocess.run([cc, "-O2", "-o", str(tmp), str(src)], capture_output=True, text=True)
    if done.returncode != 0:
        log.warning("clock not measured: %s failed on clockloop.c: %s", cc, done.stderr.strip()[-300:])
        tmp.unlink(missing_ok=True)
        return None
    os.replace(tmp, binary)  # atomic: concurrent first uses never see a half-written binary
    return binary


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


def measure_mhz(duration_s: float = 0.2) -> float | None:
    """Effective clock of the core this runs on, in MHz (fastest of ten slices of the loop).

    Assumes one cycle per dependent add, true of x86-64 and the common ARM cores; where it
    is not, the figure is off by a constant factor and clock_drop comparisons still hold.
    """
    binary = clockloop_binary()
    if binary is None:
        return None
    values = _run([str(binary), f"{duration_s:.6f}"], timeout=duration_s * 20 + 10)
    mhz = values.get("mhz") if values else None
    return mhz if mhz and mhz > 0 else None


def busy_loop_seconds(iterations: int) -> float | None:
    """Run a fixed amount of the loop (iterations x 100 adds); its wall time in seconds."""
    binary = clockloop_binary()
    if binary is None:
        return None
    values = _run([str(binary), "-n", str(iterations)], timeout=3600)
    return values.get("seconds") if values else None


def clock_drop(before: float | None, after: float | None, limit: float = DROP_LIMIT) -> bool:
    """True when `after` is more than `limit` (a fraction) below `before`; False if either is unknown."""
    if before is None or after is None or before <= 0:
        return False
    return (before - after) / before > limit
