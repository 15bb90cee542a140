"""docs/writeups.md, A, the network part: "Run a 64-bit OS on your Raspberry Pi 4".

The write-up ran iperf3 between two containers over a veth pair with the fake offloads off,
the drop rate of 64-byte frames against a TC drop rule, and WireGuard against OpenVPN between
containers, each on the 64-bit and on the 32-bit OS. Here the containers are network
namespaces shootout makes and removes, and the two sides are a 64-bit and a 32-bit userspace
of the same Debian release on this machine's kernel: amd64/i386 on a PC, arm64/armhf on a Pi 4
or an ARM server, as the write-up.

Its questions are "64 vs 32 bits" for each test, so the run has two configurations (the
userspaces) and four workloads: tcp-veth, drop-rate, and the vpn workload twice under its own
names, once per tunnel kind (its `tunnel` parameter; [[workload]] tables with builtin = "vpn").
Four headline comparisons, each of them a question the write-up asks; WireGuard against
OpenVPN on one userspace is the `vpn` experiment's.
"""

from shootout.base.units import fraction
from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import NETWORK_NEEDS_ROOT, Experiment

OWN_THRESHOLD = "5%"  # its [run] threshold, and the Experiment's (said beside its verdicts)


def _config(side: str) -> str:
    # the tunnels' options are the defaults: WireGuard the kernel's if it has one, else wireguard-go;
    # OpenVPN with AES-256-GCM
    return f'''
[[config]]
name = "{side}"
spec = "debian:bookworm:{side}"
veth = {{ offloads = "off" }}
drop = "tc"
'''


EXPERIMENT = Experiment(
    name="rpi-network",
    title="64-bit vs 32-bit userspace: network",
    description="64-bit vs 32-bit userspace: iperf3 over veth (offloads off), 64-byte frames at a tc "
                "drop rule, WireGuard and OpenVPN between namespaces (the network half of the write-up)",
    reproduces="A, 'Run a 64-bit OS on your Raspberry Pi 4', network section (iperf3, TC drop, WireGuard/OpenVPN)",
    toml='''
[run]
configs = ["$native", "$companion"]
workloads = ["tcp-veth", "drop-rate", "vpn-wireguard", "vpn-openvpn"]
threshold = "''' + OWN_THRESHOLD + '''"

[[workload]]
name = "vpn-wireguard"
builtin = "vpn"

[[workload]]
name = "vpn-openvpn"
builtin = "vpn"

[params.tcp-veth]
seconds = 2
parallel = 0
affinity = "auto"

[params.drop-rate]
seconds = 3
ceiling_s = 0.5

[params.vpn-wireguard]
tunnel = "wireguard"
seconds = 3

[params.vpn-openvpn]
tunnel = "openvpn"
seconds = 3
affinity = "auto"
''' + _config("$native") + _config("$companion"),
    sizing=Sizing(round_s=30, prepare_s=90,
                  measured="2-core x86-64 VM, 2026-11-26: rounds of 30 s, 10 min 2 s from a fresh home to the "
                           "last of 20 rounds (load 1.3-2.4, others' tests beside it), 9 min 55 s before "
                           "(load 1.1-1.5)",
                  note="2 s of one iperf3 stream over veth (no parallel phase), 3 s through each tunnel and 3 s "
                       "of frames per drop count, instead of the workloads' 5 s and four more streams. OpenVPN's "
                       "ends each on a CPU of their own (affinity), as two machines' are. Its 64-vs-32 "
                       "difference (~8%) stays undecided at ±5% within 20 rounds on a 2-core machine: its throughput varies "
                       "5-10% from trial to trial on a quiet machine, ~30% with others' tests beside it, and its CPU "
                       "seconds per GiB about as much even with the retransmits gone "
                       "(benchmarks/results/rpi-network-openvpn-noise.txt): the noise is the busy machine's, not the "
                       "tunnel's queues, and ±5% would take ~450-550 rounds"),
    # the write-up names no durations: the workloads' own, five streams over veth, 5 s through each tunnel
    writeup_params={"tcp-veth": {"seconds": 5, "parallel": 4}, "drop-rate": {"ceiling_s": 1.0},
                    "vpn-wireguard": {"seconds": 5}, "vpn-openvpn": {"seconds": 5}},
    writeup_sizing=Sizing(round_s=55, prepare_s=90, limit_s=20 * 60, estimated=True,
                          measured="estimated from its measured 30 s rounds: each side's trials 12.5 s longer "
                                   "(tcp-veth 3 s and its parallel phase 5 s, each tunnel 2 s, the ceiling 0.5 s)"),
    writeup_note="the workloads' own durations (the write-up names none): 5 s of iperf3 and a phase of five "
                 "streams over veth, 5 s through each tunnel, 1 s of the generator's ceiling",
    threshold=fraction(OWN_THRESHOLD, "experiment rpi-network: [run] threshold"),
    threshold_why="on a busy 2-core machine iperf3 over veth and the tick-sampled softirq time of the drop "
                  "rule vary by several percent from trial to trial; ±1% would take hours of rounds",
    needs_root=NETWORK_NEEDS_ROOT,
    found={
        "tcp-veth": "iperf3 between containers over veth, offloads off, in Mbit/s (no 64-vs-32 verdict stated)",
        "drop-rate": "64-byte frames against a TC drop rule: the 64-bit kernel a bit faster (here both sides "
                     "run this machine's one 64-bit kernel: only the generator, trafgen, is 32-bit)",
        "vpn-wireguard": "between containers: 64-bit WireGuard faster, 32-bit WireGuard CPU-bound",
        "vpn-openvpn": "between containers: OpenVPN CPU-bound on both (over the gigabit port the same on both)",
    },
)
