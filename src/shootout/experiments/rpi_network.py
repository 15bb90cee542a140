"""docs/writeups.md, A, the network part: "Run a 64-bit OS on your Raspberry Pi 4".

The write-up ran iperf3 between two containers over a veth pair with the fake offloads off,
the drop rate of 64-byte frames against a TC drop rule, and WireGuard against OpenVPN between
containers. Here the containers are network namespaces shootout makes and removes, and the
two sides are a 64-bit and a 32-bit userspace of the same Debian release on this machine's
kernel: amd64/i386 on a PC, arm64/armhf on a Pi 4 or an ARM server, as the write-up.
tcp-veth and drop-rate do not depend on the VPN, so the two configurations of one userspace
are an A/A pair for them: their spread is the noise floor beside the 64-vs-32 verdicts.
"""

from shootout.experiments.base import Experiment, NETWORK_NEEDS_ROOT
from shootout.experiments.sizing import Sizing


def _config(name: str, arch: str, vpn: str) -> str:
    return f'''
[[config]]
name = "{name}"
spec = "debian:bookworm:{arch}"
veth = {{ offloads = "off" }}
drop = "tc"
vpn = {vpn}
'''


EXPERIMENT = Experiment(
    name="rpi-network",
    description="64-bit vs 32-bit userspace: iperf3 over veth (offloads off), 64-byte drop rate at a tc "
                "drop rule, WireGuard and OpenVPN between namespaces (the network half of the write-up)",
    reproduces="A, 'Run a 64-bit OS on your Raspberry Pi 4', network section (iperf3, TC drop, WireGuard/OpenVPN)",
    toml='''
[run]
configs = ["$native-wireguard", "$companion-wireguard", "$native-openvpn", "$companion-openvpn"]
workloads = ["tcp-veth", "drop-rate", "vpn"]

[params.tcp-veth]
seconds = 2

[params.drop-rate]
seconds = 1.5

[params.vpn]
seconds = 2
''' + "".join(_config(f"{arch}-{kind}", arch, vpn) for kind, vpn in (
        ("wireguard", '{ kind = "wireguard" }'),  # the kernel's if it has one, else wireguard-go
        ("openvpn", '{ kind = "openvpn", cipher = "AES-256-GCM" }')) for arch in ("$native", "$companion")),
    sizing=Sizing(round_s=40, prepare_s=90,
                  measured="2-core x86-64 VM, 2026-11-26: rounds of 36-38 s while others used 1 CPU",
                  note="2 s of traffic per iperf3 and VPN measurement and 1.5 s of frames per drop count "
                       "instead of the workloads' 5 and 3: rounds of 1m08s-1m25s at those would need 21 "
                       "minutes for the 12 rounds a first verdict on 9 comparisons needs"),
    needs_root=NETWORK_NEEDS_ROOT,
    found={
        "tcp-veth": "iperf3 between containers over veth, offloads off, in Mbit/s (no 64-vs-32 verdict stated)",
        "drop-rate": "64-byte frames against a TC drop rule: the 64-bit kernel a bit faster",
        "vpn": "between containers: 64-bit WireGuard faster; OpenVPN and 32-bit WireGuard CPU-bound",
    },
)
