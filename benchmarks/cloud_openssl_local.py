"""`shootout run --experiment cloud-openssl` end to end on its defaults (md5, sha256,
aes-128/192/256-cbc, blowfish at 16384-byte blocks, once on one CPU and once with -multi), on two
local "machines" (an sshd each, see tests/integration/sshd.py) priced as the write-up's a1.4xlarge
and m5.4xlarge. Both share this machine's CPUs, so the figures say that the command works, not
how two instance types compare. Needs root. Run under the shared lock:

    flock /tmp/shootout-bench.lock env PYTHONPATH=src python benchmarks/cloud_openssl_local.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from sshd import start_machines, toml_table  # noqa: E402


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="shootout-bench-cloud-"))
    servers = start_machines(base, 2)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "SHOOTOUT_HOME": str(base / "home")}
    names = ("arm-like", "intel-like")
    try:
        machines = base / "machines.toml"
        machines.write_text("".join(toml_table(s, n) for s, n in zip(servers, names)))
        shootout = [sys.executable, "-m", "shootout"]
        print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}", flush=True)
        t0 = time.monotonic()
        # --repeats 0: the two local machines share this machine's CPUs and kernel, so each one's
        # /proc/stat shows the other's trial, running at the same time, as other programs' load, and
        # every attempt would be set aside; machines of their own do not see each other.
        subprocess.run([*shootout, "run", "--experiment", "cloud-openssl", "--file", str(machines),
                        "-c", names[0], "-c", names[1], "--price", f"{names[0]}=0.408", "--price", f"{names[1]}=0.768",
                        "--repeats", "0"],
                       env=env, check=True)
        print(f"wall time {time.monotonic() - t0:.0f} s", flush=True)
        print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}", flush=True)
    finally:
        for server in servers:
            server.stop()


if __name__ == "__main__":
    main()
