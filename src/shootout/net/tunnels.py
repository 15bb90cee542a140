"""VPN tunnels between the two namespaces: WireGuard and OpenVPN, brought up inside a trial.

The tunnel daemons run as children of the trial: openvpn from the configuration's userspace;
WireGuard the kernel's where it has the module, else a current wireguard-go built for the
userspace's architecture (wggo.py), or the userspace's own package on request; they run
as children of the trial, so its rusage holds their CPU time: a VPN's cost is mostly
theirs. Setting up (a TLS handshake for OpenVPN) is inside the trial too; it takes tens of
milliseconds of CPU against seconds of transfer.

    a: 192.0.2.1 (veth) -- tunnel 198.51.100.1/24  <==>  198.51.100.2/24 -- 192.0.2.2 (veth) :b
Both tunnels carry an inner MTU of 1420 (WireGuard's default), so OpenVPN's outer packets
are not fragmented on the 1500-byte veth either.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cache

from shootout.base.errors import TargetError, WorkloadError
from shootout.execution.place import Place
from shootout.execution.versions import tool_version
from shootout.net import wggo
from shootout.net.netns import NetNamespace
from shootout.net.options import NetOptions
from shootout.net.script import wait_for
from shootout.net.topology import ADDR_A, ADDR_B, Side, Topology
from shootout.system.journal import journal

INNER_A, INNER_B, INNER_PREFIX = "198.51.100.1", "198.51.100.2", 24
MTU = 1420
WG_PORT, OVPN_PORT = 51820, 1194
GO_BINARY = "wireguard-go"  # the built one, in the trial's directory
VPN_KINDS = ("wireguard", "openvpn")
CIPHERS = ("AES-256-GCM", "CHACHA20-POLY1305", "AES-128-GCM")
WIREGUARD_IMPLEMENTATIONS = ("auto", "kernel", "go", "debian")


@dataclass
class Plan:
    """Files a trial needs (put into the workload's directory, the trial's cwd), facts, and the
    versions of the tunnel's programs."""

    files: dict[str, bytes]  # name -> content
    facts: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)


@cache
def kernel_wireguard_problem() -> str | None:
    """Why this kernel cannot make a WireGuard device (tried in a throwaway namespace), or None."""
    with journal() as j:  # of its own: the probe leaves nothing, even if killed
        ns = NetNamespace("wireguard probe", j)
        try:
            ns.start()
            ns.change(["ip", "link", "add", "wgprobe", "type", "wireguard"], ["ip", "link", "delete", "wgprobe"],
                      "ip link add type wireguard")
        except TargetError as exc:
            return exc.message
        finally:
            ns.close()
    return None


def wireguard_implementation(requested: str) -> str:
    """"kernel", "go" (a current wireguard-go, built) or "debian" (the userspace's wireguard-go):
    the kernel's module when asked for or present, else a current wireguard-go."""
    if requested in ("go", "debian"):
        return requested
    problem = kernel_wireguard_problem()
    if requested == "kernel" and problem:
        raise TargetError(f"this kernel has no WireGuard: {problem}", 'use vpn = { wireguard = "go" } (wireguard-go)')
    return "kernel" if problem is None else "go"


def tunnel_setting(options: NetOptions) -> dict[str, str]:
    """The tunnel a configuration's trials bring up: what its comparison is about."""
    if options.vpn == "openvpn":
        return {"kind": "openvpn", "cipher": options.cipher}
    implementation = wireguard_implementation(options.wireguard)
    setting = {"kind": "wireguard", "implementation": implementation}
    if implementation == "go":
        setting["release"] = wggo.RELEASE
    return setting


def pinned(cpu: str) -> str:
    """A command prefix that pins the command to one CPU (util-linux taskset, Essential in Debian), or ""."""
    return f"taskset -c {cpu} " if cpu else ""


class Tunnel(ABC):
    kind: str

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.if_a, self.if_b = topo.name("ta"), topo.name("tb")

    @abstractmethod
    def plan(self, target: Place) -> Plan: ...

    @abstractmethod
    def up(self, a: Side, b: Side, cpus: tuple[str, str] = ("", "")) -> list[str]:
        """Shell lines that start the tunnel and wait until it carries traffic; cpus: the CPU each
        side's daemon is pinned to ("" for the scheduler's choice)."""

    def down(self) -> list[str]:
        return ["kill -TERM $tun_a $tun_b 2>/dev/null; wait $tun_a; wait $tun_b"]

    def report(self) -> list[str]:
        """Shell lines that print what check_tunnel() verifies."""
        return [f"echo 'section tunnel'; echo 'kind {self.kind}'"]


class WireGuard(Tunnel):
    kind = "wireguard"

    def __init__(self, topo: Topology, requested: str) -> None:
        super().__init__(topo)
        self.implementation = wireguard_implementation(requested)

    def plan(self, target: Place) -> Plan:
        versions = {"wg": tool_version(target, ["wg", "--version"], r"wireguard-tools v")}
        files: dict[str, bytes] = {}
        if self.implementation == "go":
            arch = target.run(["dpkg", "--print-architecture"], timeout=60).stdout.strip()
            files[GO_BINARY] = wggo.build(arch).read_bytes()
            versions["wireguard-go"] = wggo.describe(arch)
        elif self.implementation == "debian":
            versions["wireguard-go"] = tool_version(target, ["wireguard-go", "--version"], r"wireguard-go v")
        else:
            versions["wireguard (kernel)"] = target.run(["cat", "/sys/module/wireguard/version"]).stdout.strip() or "?"
        problem = kernel_wireguard_problem()
        from shootout.net import (
            keys,  # cryptography: 0.1 s that only tunnels need, not every run
        )

        ka, kb = keys.wireguard_key(), keys.wireguard_key()
        return Plan(files={**files, "wg-a.conf": self._conf(ka.private, kb.public, ADDR_B, INNER_B).encode(),
                           "wg-b.conf": self._conf(kb.private, ka.public, ADDR_A, INNER_A).encode()},
                    facts={"implementation": self.implementation,
                           "kernel_module": "yes" if problem is None else f"no ({problem})"},
                    versions=versions)

    @staticmethod
    def _conf(private: str, peer: str, endpoint: str, allowed: str) -> str:
        return (f"[Interface]\nPrivateKey = {private}\nListenPort = {WG_PORT}\n\n"
                f"[Peer]\nPublicKey = {peer}\nAllowedIPs = {allowed}/32\nEndpoint = {endpoint}:{WG_PORT}\n")

    def up(self, a: Side, b: Side, cpus: tuple[str, str] = ("", "")) -> list[str]:
        # the kernel's WireGuard has no daemon to pin: it encrypts in kworkers
        lines = [f"chmod +x {GO_BINARY} || exit 1"] if self.implementation == "go" else []
        daemon = f"./{GO_BINARY}" if self.implementation == "go" else "wireguard-go"
        for side, dev, var, cpu in ((a, self.if_a, "tun_a", cpus[0]), (b, self.if_b, "tun_b", cpus[1])):
            if self.implementation != "kernel":
                lines += [f"{side.enter} {pinned(cpu)}{daemon} -f {dev} >wg-{dev}.log 2>&1 & {var}=$!",
                          wait_for(f"test -S /var/run/wireguard/{dev}.sock", f"wireguard-go {dev}")]
            else:
                lines += [f"{side.enter} ip link add {dev} type wireguard; {var}="]
        for side, dev, conf, inner in ((a, self.if_a, "wg-a.conf", INNER_A), (b, self.if_b, "wg-b.conf", INNER_B)):
            lines += [f"{side.enter} wg setconf {dev} {conf} || exit 1",
                      f"{side.enter} ip address add {inner}/{INNER_PREFIX} dev {dev} || exit 1",
                      f"{side.enter} ip link set {dev} mtu {MTU} up || exit 1"]
        return lines

    def down(self) -> list[str]:
        if self.implementation != "kernel":  # wireguard-go removes its socket on SIGTERM
            return super().down()
        return []  # kernel devices go with the namespaces


class OpenVpn(Tunnel):
    kind = "openvpn"

    def __init__(self, topo: Topology, cipher: str) -> None:
        super().__init__(topo)
        self.cipher = cipher

    def plan(self, target: Place) -> Plan:
        banner = target.run(["openvpn", "--version"], timeout=60).stdout
        version = next((line for line in banner.splitlines() if line.startswith("OpenVPN ")), "unknown")
        # "DCO version: N/A" unless the kernel has ovpn-dco; said by the same banner
        dco = next((line.split(":", 1)[1].strip() for line in banner.splitlines() if line.startswith("DCO version")),
                   "not reported")
        from shootout.net import keys  # cryptography: only here

        files = dict(keys.openvpn_pki())
        a, b = self.topo.sides
        files["server.conf"] = self._conf("server", b, a, (INNER_B, INNER_A), self.if_b).encode()
        files["client.conf"] = self._conf("client", a, b, (INNER_A, INNER_B), self.if_a).encode()
        return Plan(files=files, facts={"cipher": self.cipher, "data_channel_offload": dco,
                                        "tls": "certificates (ECDSA P-256, throwaway CA)"},
                    versions={"openvpn": " ".join(version.split()[:2])})

    def _conf(self, role: str, me: Side, peer: Side, inner: tuple[str, str], dev: str) -> str:
        other = "client" if role == "server" else "server"
        return "\n".join([
            f"dev {dev}", "dev-type tun", "proto udp", f"local {me.addr}", f"lport {OVPN_PORT}",
            f"remote {peer.addr} {OVPN_PORT}", f"ifconfig {inner[0]} {inner[1]}", f"tls-{role}", "dh none",
            "ca ca.crt", f"cert {role}.crt", f"key {role}.key",
            f"remote-cert-tls {other}",
            # pinned: the only cipher offered, and the one used should negotiation be off
            f"data-ciphers {self.cipher}", f"data-ciphers-fallback {self.cipher}",
            f"tun-mtu {MTU}", "verb 3", "",
        ])

    def up(self, a: Side, b: Side, cpus: tuple[str, str] = ("", "")) -> list[str]:
        return [
            f"{b.enter} {pinned(cpus[1])}openvpn --config server.conf >ovpn-b.log 2>&1 & tun_b=$!",
            f"{a.enter} {pinned(cpus[0])}openvpn --config client.conf >ovpn-a.log 2>&1 & tun_a=$!",
            wait_for("grep -q 'Initialization Sequence Completed' ovpn-a.log", "the OpenVPN client"),
            wait_for("grep -q 'Initialization Sequence Completed' ovpn-b.log", "the OpenVPN server"),
        ]

    def report(self) -> list[str]:
        return [f"echo 'section tunnel'; echo 'kind {self.kind}'; echo 'cipher {self.cipher}'",
                "echo 'section openvpn-a'; cat ovpn-a.log", "echo 'section openvpn-b'; cat ovpn-b.log"]


_DATA_CHANNEL = re.compile(r"Data Channel: cipher '([A-Z0-9-]+)'")


def check_tunnel(sections: dict[str, str]) -> None:
    """From a trial's output: an OpenVPN tunnel used exactly its pinned cipher on both ends."""
    info = dict(line.split(" ", 1) for line in sections.get("tunnel", "").splitlines() if " " in line)
    if "kind" not in info:
        raise WorkloadError("the VPN trial did not get to report its tunnel", "see the trial's stderr")
    if info["kind"] != "openvpn":
        return
    for side in ("a", "b"):
        used = _DATA_CHANNEL.findall(sections.get(f"openvpn-{side}", ""))
        if used != [info.get("cipher")]:
            raise WorkloadError(f"OpenVPN ({side}) used data-channel cipher(s) {used or 'none'}, "
                                f"not the pinned {info.get('cipher')}", "see the OpenVPN log in the trial's output")


def tunnel(options: NetOptions, topo: Topology) -> Tunnel:
    return WireGuard(topo, options.wireguard) if options.vpn == "wireguard" else OpenVpn(topo, options.cipher)
