"""WireGuard against OpenVPN with each pinned AEAD cipher, between two namespaces of this host
(WireGuard is the kernel's when it has the module, else wireguard-go; the trial records which)."""

from shootout.experiments.base import Experiment

EXPERIMENT = Experiment(
    name="vpn",
    description="WireGuard vs OpenVPN (AES-256-GCM, CHACHA20-POLY1305): Mbit/s and CPU seconds per GiB",
    reproduces="A's WireGuard against OpenVPN between containers",
    toml='''
[run]
configs = ["wireguard", "openvpn-aes", "openvpn-chacha"]
workloads = ["vpn"]

[[config]]
name = "wireguard"
spec = "host"
vpn = { kind = "wireguard" }

[[config]]
name = "openvpn-aes"
spec = "host"
vpn = { kind = "openvpn", cipher = "AES-256-GCM" }

[[config]]
name = "openvpn-chacha"
spec = "host"
vpn = { kind = "openvpn", cipher = "CHACHA20-POLY1305" }
''',
    found={"vpn": "over gigabit WireGuard near line rate, OpenVPN about 10x slower; between containers "
                  "OpenVPN CPU-bound"},
)
