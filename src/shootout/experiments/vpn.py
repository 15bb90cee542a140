"""WireGuard against OpenVPN with each pinned AEAD cipher, between two namespaces of this host
(WireGuard is the kernel's when it has the module, else a current wireguard-go built from the Go
module proxy; the trial records which, and the paragraph says why the answer may differ)."""

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import NETWORK_NEEDS_ROOT, Experiment, host_ladder

EXPERIMENT = Experiment(
    name="vpn",
    title="WireGuard vs OpenVPN: throughput and CPU",
    description="WireGuard vs OpenVPN (AES-256-GCM, CHACHA20-POLY1305): Mbit/s and CPU seconds per GiB",
    reproduces="A's WireGuard against OpenVPN between containers",
    toml=host_ladder(["vpn"], {
        "wireguard": 'vpn = { kind = "wireguard" }',
        "openvpn-aes": 'vpn = { kind = "openvpn", cipher = "AES-256-GCM" }',
        "openvpn-chacha": 'vpn = { kind = "openvpn", cipher = "CHACHA20-POLY1305" }',
    }),
    sizing=Sizing(round_s=20, prepare_s=60, estimated=True,
                  measured="from rpi-network's trial times of the same workloads (2-core x86-64 VM)"),
    needs_root=NETWORK_NEEDS_ROOT,
    found={"vpn": "between containers (as here): OpenVPN CPU-bound, no figure given; over the Pi 4's "
                  "gigabit port: WireGuard (kernel) near line rate, OpenVPN about 10x slower"},
)
