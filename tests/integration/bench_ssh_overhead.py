"""Benchmark: what the SSH channel costs per trial, against the same trial on the host.

    SHOOTOUT_HOME=/tmp/x python tests/integration/bench_ssh_overhead.py [--runs 20]

Starts the private test sshd (sshd.py) on 127.0.0.1, so host and "remote" are the same
machine and the difference is the channel alone. The same intmix binary work (calibrated
on the host to about 0.3 s) and an empty command (`true`) run `runs` times on each target,
in pairs whose order alternates. Reports medians of the wall time the trial reports
(measured around the program: by wait4 on the host, by the remote helper over SSH), of the
end-to-end time of Target.run as the runner sees it, and their difference: the overhead.
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from sshd import start_sshd  # noqa: E402

from shootout.base.model import Config  # noqa: E402
from shootout.places.host import HostTarget  # noqa: E402
from shootout.places.ssh import SshTarget  # noqa: E402
from shootout.places.target import Target  # noqa: E402
from shootout.stats import paired_estimate  # noqa: E402
from shootout.system.journal import journal  # noqa: E402
from shootout.workloads.catalogue import workload  # noqa: E402
from shootout.workloads.contract import Context  # noqa: E402


def _timed(target: Target, argv: list[str]) -> tuple[float, float, str]:
    t0 = time.perf_counter()
    result = target.run(argv)
    assert result.exit_status == 0, result.stderr
    return time.perf_counter() - t0, result.wall_s, result.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="shootout-bench-sshd-"))
    server = start_sshd(base)
    try:
        with journal() as j:
            host, remote = HostTarget(Config(name="host")), SshTarget(server.config(), j)
            t0 = time.perf_counter()
            remote.open()
            print(f"ssh target open (connect, helper, session, monitor): {time.perf_counter() - t0:.2f} s")
            w = workload("intmix")
            params = w.default_params(host.probe())
            contexts = {t: Context(t, "intmix", dict(params), j) for t in (host, remote)}
            prepared = {t: w.prepare(contexts[t]) for t in (host, remote)}
            params = w.calibrate(contexts[host], prepared[host])
            data: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
            for i in range(args.runs):
                order = (host, remote) if i % 2 == 0 else (remote, host)
                for target in order:
                    side = "host" if target is host else "ssh"
                    e2e, wall, out = _timed(target, w.argv(prepared[target], params))
                    rate = float(out.split("iter_per_s ")[1].split()[0])
                    data.setdefault(("intmix", side), []).append((e2e, wall, rate))
                    e2e, wall, _ = _timed(target, ["true"])
                    data.setdefault(("true", side), []).append((e2e, wall, math.nan))
            remote.close()
            host.close()
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    print(f"{args.runs} runs each, alternating; medians (the machine is shared: noisy)")
    for name in ("intmix", "true"):
        for side in ("host", "ssh"):
            rows = data[(name, side)]
            e2e = statistics.median(r[0] for r in rows)
            wall = statistics.median(r[1] for r in rows)
            print(f"  {name:6} {side:4}: end-to-end {e2e * 1000:8.1f} ms, trial wall {wall * 1000:8.1f} ms, "
                  f"overhead {(e2e - wall) * 1000:7.1f} ms")
    ratios = [math.log(s[2] / h[2]) for h, s in zip(data[("intmix", "host")], data[("intmix", "ssh")])]
    est = paired_estimate(ratios, 0.95)
    assert est is not None
    print(f"  intmix iter/s, ssh over host: {est.ratio:.3f}x [{est.low:.3f}, {est.high:.3f}] (paired, 95%)")


if __name__ == "__main__":
    main()
