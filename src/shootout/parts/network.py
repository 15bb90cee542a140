"""Network options of a configuration: veth offloads, the drop rung, the VPN, namespace names.

    [[config]]
    veth = { offloads = "off" }      # "off" (the article's setting, the default) or "on"
    drop = "nft"                     # socket | nft | tc (default) | xdp-generic | xdp-native
    vpn  = { kind = "openvpn", cipher = "AES-256-GCM" }
                                     # kind: wireguard (default) | openvpn; vpn = "openvpn" also works
                                     # cipher (OpenVPN): AES-256-GCM (default) | CHACHA20-POLY1305 | AES-128-GCM
                                     # wireguard: auto (kernel module if present, else go) | kernel |
                                     #   go (a current wireguard-go built from the Go module proxy) |
                                     #   debian (the userspace's own wireguard-go package)
    net  = { pin = "mytest" }        # name the namespaces mytest-<workload>-a/-b under /run/netns

Spec (Config.parts["network"]): the options given, by field name ({"offloads": "on"}); the
rest take their defaults (net/options.py). Each configuration of a ladder run sets one `drop`, of a
VPN run one `vpn`, so one run gives the whole comparison.

The session: a network workload asks for its configuration's topology in prepare()
(`NetSession.topology`): two namespaces joined by a veth pair, the configuration's drop rung
in namespace b if the workload needs one, then the offloads (attaching XDP changes a veth's
GRO/TSO state, so they are set last). Each workload gets a topology of its own: an XDP program
on the veth must not change what TCP over it measures. Before each trial of a configuration,
apply() puts every one of its veths' offloads back to the setting (a no-op when in force, read
back either way) and in_force() reports what the kernel says: the offloads of both peers, the
attached drop point, TCP congestion control, and the tunnel the trial will bring up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.net import offloads, rungs
from shootout.net.netns import PIN_DIR
from shootout.net.options import PART, NetOptions, net_options
from shootout.net.topology import Topology
from shootout.net.tunnels import (
    CIPHERS,
    VPN_KINDS,
    WIREGUARD_IMPLEMENTATIONS,
    kernel_wireguard_problem,
    tunnel_setting,
)
from shootout.parts.part import Part, PartSession
from shootout.storage.scratch import Scratches
from shootout.system.journal import Journal

# key -> (its field when given as a bare string, {sub-key: (field, choices or None for free text)})
_KEYS: dict[str, tuple[str, dict[str, tuple[str, tuple[str, ...] | None]]]] = {
    "veth": ("offloads", {"offloads": ("offloads", offloads.STATES)}),
    "drop": ("rung", {"rung": ("drop", tuple(rungs.RUNGS))}),
    "vpn": ("kind", {"kind": ("vpn", VPN_KINDS), "cipher": ("cipher", CIPHERS),
                     "wireguard": ("wireguard", WIREGUARD_IMPLEMENTATIONS)}),
    "net": ("pin", {"pin": ("pin", None)}),
}
_PIN_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


class NetworkPart(Part):
    name = PART
    keys = tuple(_KEYS)

    def parse(self, table: Mapping[str, Any], where: str) -> dict[str, str]:
        spec: dict[str, str] = {}
        for key, (main, fields) in _KEYS.items():
            if key not in table:
                continue
            given = table[key]
            if isinstance(given, str):
                given = {main: given}
            if not isinstance(given, Mapping):
                raise UsageError(f"{where}: {key} must be a table or a string", f'{key} = {{ {main} = "..." }}')
            if unknown := set(given) - set(fields):
                raise UsageError(f"{where}: unknown key(s) in {key}: {', '.join(sorted(unknown))}",
                                 "allowed: " + ", ".join(fields))
            for sub, value in given.items():
                field, choices = fields[sub]
                if not isinstance(value, str) or (choices is not None and value not in choices):
                    raise UsageError(f"{where}: {key}.{sub} = {value!r} is not a choice",
                                     "use one of: " + ", ".join(choices or ("a name",)))
                spec[field] = value
        if "pin" in spec and (not spec["pin"] or set(spec["pin"]) - _PIN_CHARS or len(spec["pin"]) > 40):
            raise UsageError(f"{where}: net.pin = {spec['pin']!r} is not a usable name",
                             "use up to 40 lower-case letters, digits, - and _")
        options = NetOptions(**spec)
        if options.vpn == "openvpn" and "wireguard" in spec:
            raise UsageError(f"{where}: vpn.wireguard applies to kind = \"wireguard\" only", "drop it, or the kind")
        if options.vpn == "wireguard" and "cipher" in spec:
            raise UsageError(f"{where}: vpn.cipher applies to kind = \"openvpn\" only (WireGuard has one cipher)",
                             "drop it, or set kind = \"openvpn\"")
        return spec

    def problem(self, spec: Mapping[str, str]) -> str | None:
        """Why this machine cannot do what the configuration asks (the kernel is tried for real)."""
        options = NetOptions(**spec)
        if options.pin and (taken := sorted(p.name for p in PIN_DIR.glob(f"{options.pin}-*"))):
            return f"a network namespace named {taken[0]!r} already exists (choose another net.pin)"
        if "drop" in spec and (reason := rungs.problem(options.drop)):
            return f"drop rung {options.drop}: {reason}"
        if options.vpn == "wireguard" and options.wireguard == "kernel" and (reason := kernel_wireguard_problem()):
            return f"kernel WireGuard: {reason}"
        return None

    def open(self, configs: Sequence[Config], journal: Journal, scratches: Scratches) -> NetSession:
        """Always a session: its namespaces are made only when a network workload asks for them."""
        pins = [o.pin for c in configs if (o := net_options(c)).pin]
        if len(set(pins)) != len(pins):
            raise UsageError("two configurations of this run set the same net.pin", "give each its own pin name")
        return NetSession(journal)


@dataclass
class _Wire:
    topo: Topology
    rung: rungs.Rung | None
    vpn: dict[str, str] | None  # the tunnel its trials bring up (tunnel_setting), None without one
    offloads: dict[str, dict[str, str]] = field(default_factory=dict)  # side a/b -> features, as read back


class NetSession(PartSession):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._wires: dict[tuple[str, str], _Wire] = {}  # (configuration, workload) -> its topology

    def topology(self, config: Config, purpose: str, *, drop: bool = False,
                 vpn: NetOptions | None = None) -> Topology:
        """The namespaces of one workload under one configuration, made on first use; vpn: the
        options of the tunnel its trials bring up (the configuration's, or the workload's kind)."""
        if (key := (config.name, purpose)) in self._wires:
            return self._wires[key].topo
        options = net_options(config)
        topo = Topology(purpose, self.journal).open(pin=f"{options.pin}-{purpose}" if options.pin else None)
        wire = _Wire(topo, rungs.rung(options.drop) if drop else None, tunnel_setting(vpn) if vpn else None)
        try:
            if wire.rung is not None:
                wire.rung.install(topo)
            self._set_offloads(wire, options.offloads)
        except BaseException:
            topo.close()
            raise
        self._wires[key] = wire
        return topo

    def _of(self, config: Config) -> list[_Wire]:
        return [wire for (name, _), wire in self._wires.items() if name == config.name]

    @staticmethod
    def _set_offloads(wire: _Wire, wanted: str) -> None:
        wire.offloads = {letter: offloads.apply(side.ns, side.dev, wanted)
                         for letter, side in zip("ab", wire.topo.sides)}

    def apply(self, config: Config) -> None:
        wanted = net_options(config).offloads
        for wire in self._of(config):
            self._set_offloads(wire, wanted)

    def in_force(self, config: Config) -> dict[str, Any]:
        wires = self._of(config)
        if not wires:
            return {}  # no network workload asked for this configuration's namespaces
        a = wires[0].topo.sides[0]
        found: dict[str, Any] = {
            # all of its topologies at once: they are set alike, and a trial's keys must not name its workload
            "offloads": {letter: "; ".join(sorted({offloads.summary(w.offloads[letter]) for w in wires}))
                         for letter in "ab"},
            "tcp_congestion_control": a.ns.run(["sysctl", "-n", "net.ipv4.tcp_congestion_control"],
                                               "reading the TCP congestion control").strip(),
        }
        tunnels: dict[str, dict[str, str]] = {}
        for wire in wires:
            if wire.rung is not None:
                found["drop"] = {"rung": wire.rung.name, "attached": wire.rung.readback(wire.topo)}
            if wire.vpn:
                tunnels[wire.vpn["kind"]] = wire.vpn
        if len(tunnels) == 1:
            found["vpn"] = next(iter(tunnels.values()))
        elif tunnels:  # one VPN workload per kind (vpn's tunnel parameter): each kind's setting
            found["vpn"] = {kind: {k: v for k, v in setting.items() if k != "kind"} for kind, setting in tunnels.items()}
        return found

    def close(self) -> list[str]:
        errors = [error for wire in self._wires.values() for error in wire.topo.close()]
        self._wires.clear()
        return errors
