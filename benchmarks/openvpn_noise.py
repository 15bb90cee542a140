"""Per-trial noise of iperf3 through OpenVPN (the rpi-network experiment's vpn-openvpn), by variant.

Brings up the workload's own topology (two namespaces, a veth pair with its offloads off) and
OpenVPN tunnel (the same configuration files, the host's openvpn and iperf3), then runs short
iperf3 trials through it, the variants interleaved trial by trial so that load drift falls on
all of them alike. For each trial: Mbit/s, TCP retransmits per GiB, drops at the sender's tun
queue and UDP receive-buffer errors on the receiver. Prints per variant: median, cv, and the
medians of the loss counters. Needs root; run it under the bench lock:

    flock -o /tmp/shootout-bench.lock env PYTHONPATH=$PWD/src SHOOTOUT_HOME=/tmp/vpn-probe-home \\
        python3 benchmarks/openvpn_noise.py --trials 12 --seconds 3 base w256k

A variant is a name in VARIANTS: extra iperf3 client options, extra openvpn configuration lines,
a txqueuelen for the tun devices, CPU pinning.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from shootout.net import iperf, offloads
from shootout.net.topology import Topology
from shootout.net.tunnels import INNER_B, OpenVpn
from shootout.system.journal import journal


@dataclass(frozen=True)
class Variant:
    iperf: str = ""  # extra client options
    conf: tuple[str, ...] = ()  # extra openvpn lines (both ends)
    txqueuelen: int | None = None
    pin: tuple[str, str, str, str] | None = None  # taskset cpu lists: iperf3 client, openvpn a, openvpn b, server
    notes: dict[str, str] = field(default_factory=dict)


VARIANTS = {
    "base": Variant(),
    "w64k": Variant(iperf="-w 64K"),
    "w128k": Variant(iperf="-w 128K"),
    "w256k": Variant(iperf="-w 256K"),
    "w512k": Variant(iperf="-w 512K"),
    "fast-io": Variant(conf=("fast-io",)),
    "buf1m": Variant(conf=("sndbuf 1048576", "rcvbuf 1048576")),
    "txq2000": Variant(txqueuelen=2000),
    "txq100": Variant(txqueuelen=100),
    "pin": Variant(pin=("0", "0", "1", "1")),
    "pin-buf1m": Variant(conf=("sndbuf 1048576", "rcvbuf 1048576"), pin=("0", "0", "1", "1")),
    "pin-w128k": Variant(iperf="-w 128K", pin=("0", "0", "1", "1")),
    "pin-w256k": Variant(iperf="-w 256K", pin=("0", "0", "1", "1")),
    "fq": Variant(iperf="--fq-rate 600M"),
}


def trial(workdir: str, topo: Topology, tun: OpenVpn, v: Variant, seconds: int) -> dict[str, float]:
    a, b = topo.sides
    pin = v.pin or ("", "", "", "")
    ts = [f"taskset -c {c} " if c else "" for c in pin]
    lines = [f"cd {workdir} || exit 1",
             f"{b.enter} {ts[2]}openvpn --config server.conf >ovpn-b.log 2>&1 & tun_b=$!",
             f"{a.enter} {ts[1]}openvpn --config client.conf >ovpn-a.log 2>&1 & tun_a=$!",
             "i=0; until grep -q 'Initialization Sequence Completed' ovpn-a.log && "
             "grep -q 'Initialization Sequence Completed' ovpn-b.log; do i=$((i+1)); "
             "[ $i -lt 2000 ] || exit 1; sleep 0.01; done"]
    if v.txqueuelen:
        lines += [f"{a.enter} ip link set dev {tun.if_a} txqueuelen {v.txqueuelen}",
                  f"{b.enter} ip link set dev {tun.if_b} txqueuelen {v.txqueuelen}"]
    lines += [f"{b.enter} cat /proc/net/snmp >snmp-before",
              f"{b.enter} {ts[3]}iperf3 -s -1 -B {INNER_B} -p {iperf.PORT} >/dev/null 2>&1 & srv=$!", "sleep 0.2",
              f"{a.enter} {ts[0]}iperf3 -c {INNER_B} -p {iperf.PORT} -t {seconds} {v.iperf} -J >iperf.json",
              "wait $srv",
              f"{b.enter} cat /proc/net/snmp >snmp-after",
              f"{a.enter} ip -s -j link show dev {tun.if_a} >tun-a.json",
              "kill -TERM $tun_a $tun_b; wait $tun_a; wait $tun_b"]
    before_ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["sh", "-c", "\n".join(lines)], check=True, timeout=seconds + 60)
    after_ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after_ru.ru_utime - before_ru.ru_utime) + (after_ru.ru_stime - before_ru.ru_stime)
    with open(f"{workdir}/iperf.json") as f:
        r = iperf.parse_iperf3(f.read())
    with open(f"{workdir}/tun-a.json") as f:
        tx = json.load(f)[0]["stats64"]["tx"]

    def udp(name: str) -> dict[str, int]:
        with open(f"{workdir}/{name}") as f:
            rows = [line.split() for line in f if line.startswith("Udp:")]
        return dict(zip(rows[0][1:], map(int, rows[1][1:])))

    before, after = udp("snmp-before"), udp("snmp-after")
    return {"mbit_s": r.mbit_s, "cpu_s_per_gib": cpu_s / r.gib, "retr_per_gib": (r.retransmits or 0) / r.gib,
            "tun_tx_drop": tx.get("dropped", 0), "udp_rcvbuf_err": after["RcvbufErrors"] - before["RcvbufErrors"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", choices=sorted(VARIANTS))
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=3)
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')}  {os.popen('uptime').read().strip()}")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in args.variants}
    with journal() as j, tempfile.TemporaryDirectory(prefix="vpn-probe-") as workdir:
        topo = Topology("openvpn probe", j).open()
        try:
            a, b = topo.sides
            offloads.apply(a.ns, a.dev, "off")
            offloads.apply(b.ns, b.dev, "off")
            tun = OpenVpn(topo, "AES-256-GCM")
            files = tun.plan(_HostPlace()).files
            for round_no in range(args.trials):
                for name in [n for n in args.variants for _ in range(2)]:  # back-to-back pairs, as a round
                    v = VARIANTS[name]
                    for fname, content in files.items():
                        text = content
                        if fname.endswith(".conf") and v.conf:
                            text = content + "\n".join(v.conf).encode() + b"\n"
                        with open(f"{workdir}/{fname}", "wb") as f:
                            f.write(text)
                    os.chmod(f"{workdir}/server.key", 0o600)
                    os.chmod(f"{workdir}/client.key", 0o600)
                    t = trial(workdir, topo, tun, v, args.seconds)
                    results[name].append(t)
                    print(f"{round_no + 1:2} {name:10} {t['mbit_s']:8.1f} Mbit/s {t['cpu_s_per_gib']:6.2f} s/GiB retr/GiB {t['retr_per_gib']:8.0f}"
                          f"  tun tx drops {t['tun_tx_drop']:6.0f}  udp rcvbuf errs {t['udp_rcvbuf_err']:6.0f}",
                          flush=True)
        finally:
            topo.close()
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')}  {os.popen('uptime').read().strip()}")
    # cv: over all trials; paired: the spread of log(second/first) within back-to-back pairs over
    # sqrt(2), the per-trial noise a round's paired comparison sees
    print(f"{'variant':10} {'trials':>6} {'Mbit/s':>8} {'cv%':>5} {'paired%':>7} {'s/GiB':>6} {'cv%':>5}"
          f" {'paired%':>7} {'retr/GiB':>9} {'tun drop':>8} {'rcvbuf':>7}")
    for name, rows in results.items():
        if len(rows) < 4:
            continue
        cols = []
        for key in ("mbit_s", "cpu_s_per_gib"):
            xs = [r[key] for r in rows]
            pairs = [math.log(xs[i + 1] / xs[i]) for i in range(0, len(xs) - 1, 2)]
            cols.append((statistics.median(xs), statistics.stdev(xs) / statistics.mean(xs) * 100,
                         statistics.stdev(pairs) / math.sqrt(2) * 100))
        med = {k: statistics.median(r[k] for r in rows) for k in ("retr_per_gib", "tun_tx_drop", "udp_rcvbuf_err")}
        (m1, c1, p1), (m2, c2, p2) = cols
        print(f"{name:10} {len(rows):6} {m1:8.1f} {c1:5.1f} {p1:7.1f} {m2:6.2f} {c2:5.1f} {p2:7.1f}"
              f" {med['retr_per_gib']:9.0f} {med['tun_tx_drop']:8.0f} {med['udp_rcvbuf_err']:7.0f}")


class _HostPlace:
    """Just enough of a Place for OpenVpn.plan(): `openvpn --version` on this machine."""

    def run(self, argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":
    main()
