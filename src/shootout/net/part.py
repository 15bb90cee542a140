"""The network part of a configuration: veth offloads, the drop rung, the VPN.

In shootout.toml, on a [[config]] table (every key optional):

    veth = { offloads = "off" }      # "off" (the article's setting, default) or "on"
    drop = "nft"                     # socket | nft | tc (default) | xdp-generic | xdp-native
    vpn  = { kind = "openvpn", cipher = "AES-256-GCM" }
                                     # kind: wireguard (default) | openvpn; vpn = "openvpn" also works
                                     # cipher (OpenVPN): AES-256-GCM (default) | CHACHA20-POLY1305 | AES-128-GCM
                                     # wireguard: "auto" (kernel module if present, else wireguard-go) | "kernel" | "go"
    net  = { pin = "mytest" }        # name the namespaces mytest-<workload>-a/-b under /run/netns

Each configuration of a ladder run sets one `drop`, of a VPN run one `vpn`, so one run gives
the whole comparison. Lifecycle, for the configuration-part mechanism (issue 10):

    options = NetworkPart.parse(table, where)       NetOptions, or None when no key is set
    reason  = NetworkPart.problem(options)          why this machine cannot do it, or None
    session = NetworkPart.open(options, journal)    once per run and configuration
    session.topology(purpose, drop=...)             a workload's namespaces (made on first use)
    session.apply()                                 before each trial: offloads back to the setting
    session.readback()                              what is in force, to record with the trial
    session.close()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from shootout.errors import UsageError
from shootout.model import Config
from shootout.net import offloads, rungs
from shootout.net.topology import Topology
from shootout.net.tunnels import kernel_wireguard_problem
from shootout.system.journal import Journal

VPN_KINDS = ("wireguard", "openvpn")
CIPHERS = ("AES-256-GCM", "CHACHA20-POLY1305", "AES-128-GCM")
WIREGUARD_IMPLEMENTATIONS = ("auto", "kernel", "go")


@dataclass(frozen=True)
class NetOptions:
    offloads: str = "off"
    drop: str = "tc"
    vpn: str = "wireguard"
    cipher: str = "AES-256-GCM"
    wireguard: str = "auto"
    pin: str | None = None

    # flattened names, as they travel in Config.options until Config has a field for parts
    FLAT: ClassVar[dict[str, str]] = {"veth.offloads": "offloads", "drop": "drop", "vpn.kind": "vpn",
                                      "vpn.cipher": "cipher", "vpn.wireguard": "wireguard", "net.pin": "pin"}

    def __post_init__(self) -> None:
        for value, allowed, key in ((self.offloads, offloads.STATES, "veth.offloads"),
                                    (self.drop, tuple(rungs.RUNGS), "drop"),
                                    (self.vpn, VPN_KINDS, "vpn.kind"),
                                    (self.cipher, CIPHERS, "vpn.cipher"),
                                    (self.wireguard, WIREGUARD_IMPLEMENTATIONS, "vpn.wireguard")):
            if value not in allowed:
                raise UsageError(f"{key} = {value!r} is not a choice", "use one of: " + ", ".join(allowed))

    def flat(self) -> tuple[tuple[str, str], ...]:
        """The settings that differ from the defaults, as Config.options pairs."""
        default = NetOptions()
        return tuple((key, str(getattr(self, attr))) for key, attr in self.FLAT.items()
                     if getattr(self, attr) != getattr(default, attr))

    @classmethod
    def of(cls, config: Config) -> NetOptions:
        """The options a configuration carries (defaults for the rest)."""
        found = {attr: config.option(key) for key, attr in cls.FLAT.items() if config.option(key) is not None}
        return cls(**found)

    def describe(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _table(value: Any, key: str, where: str, main: str) -> dict[str, Any]:
    """A key given as a table, or as a bare string meaning its main field."""
    if isinstance(value, str):
        return {main: value}
    if isinstance(value, Mapping):
        return dict(value)
    raise UsageError(f"{where}: {key} must be a table or a string", f'{key} = {{ {main} = "..." }}')


class NetworkPart:
    KEYS: ClassVar[tuple[str, ...]] = ("veth", "drop", "vpn", "net")
    _FIELDS: ClassVar[dict[str, dict[str, str]]] = {
        "veth": {"offloads": "offloads"}, "drop": {"rung": "drop"},
        "vpn": {"kind": "vpn", "cipher": "cipher", "wireguard": "wireguard"}, "net": {"pin": "pin"},
    }
    _MAIN: ClassVar[dict[str, str]] = {"veth": "offloads", "drop": "rung", "vpn": "kind", "net": "pin"}

    @classmethod
    def parse(cls, table: Mapping[str, Any], where: str) -> NetOptions | None:
        found: dict[str, Any] = {}
        for key in cls.KEYS:
            if key not in table:
                continue
            sub = _table(table[key], key, where, cls._MAIN[key])
            unknown = set(sub) - set(cls._FIELDS[key])
            if unknown:
                raise UsageError(f"{where}: unknown key(s) in {key}: {', '.join(sorted(unknown))}",
                                 "allowed: " + ", ".join(cls._FIELDS[key]))
            for name, value in sub.items():
                found[cls._FIELDS[key][name]] = str(value)
        if not found:
            return None
        try:
            return NetOptions(**found)
        except UsageError as exc:
            raise UsageError(f"{where}: {exc.message}", exc.hint) from None

    @staticmethod
    def problem(options: NetOptions) -> str | None:
        """Why this configuration cannot run here (what depends on the kernel is tried for real)."""
        if reason := rungs.problem(options.drop):
            return f"drop rung {options.drop}: {reason}"
        if options.vpn == "wireguard" and options.wireguard == "kernel" and (reason := kernel_wireguard_problem()):
            return f"kernel WireGuard: {reason}"
        return None

    @staticmethod
    def open(options: NetOptions, journal: Journal | None = None) -> NetSession:
        return NetSession(options, journal)


class NetSession:
    """One configuration's network state during a run: its workloads' topologies."""

    def __init__(self, options: NetOptions, journal: Journal | None = None) -> None:
        self.options = options
        self.journal = journal
        self._own_journal = False
        self._topologies: dict[str, tuple[Topology, rungs.Rung | None]] = {}

    def topology(self, purpose: str, *, drop: bool = False) -> Topology:
        """The namespaces of one workload, made on first use: veth, then the drop rung, then offloads
        (attaching XDP changes a veth's GRO/TSO state, so offloads are set last and read back)."""
        if purpose in self._topologies:
            return self._topologies[purpose][0]
        if self.options.pin and self.journal is None:
            self.journal, self._own_journal = Journal(), True
        pin = f"{self.options.pin}-{purpose}" if self.options.pin else None
        topo = Topology(purpose).open(pin=pin, journal=self.journal)
        rung = rungs.rung(self.options.drop) if drop else None
        try:
            if rung is not None:
                rung.install(topo)
            self._topologies[purpose] = (topo, rung)
            self.apply()
        except BaseException:
            self._topologies.pop(purpose, None)
            topo.close()
            raise
        return topo

    def apply(self) -> dict[str, Any]:
        """Put every veth's offloads to the setting (a no-op when in force); returns the read-back."""
        state: dict[str, Any] = {}
        for purpose, (topo, _) in self._topologies.items():
            state[purpose] = {side.dev: offloads.apply(side.ns, side.dev, self.options.offloads)
                              for side in topo.sides}
        return state

    def readback(self) -> dict[str, Any]:
        """What is in force now: offloads of both peers and the attached drop point, per workload."""
        found: dict[str, Any] = {}
        for purpose, (topo, rung) in self._topologies.items():
            a, _ = topo.sides
            entry: dict[str, Any] = {"offloads": {s.dev: offloads.read(s.ns, s.dev) for s in topo.sides},
                                     "tcp_congestion_control": a.ns.run(
                                         ["sysctl", "-n", "net.ipv4.tcp_congestion_control"], "sysctl").strip()}
            if rung is not None:
                entry["drop"] = {"rung": rung.name, "layer": rung.layer, **rung.readback(topo)}
            found[purpose] = entry
        return found

    @property
    def inodes(self) -> set[str]:
        """Namespaces of this session, as /proc/PID/ns/net names them ("net:[4026532178]")."""
        return {inode for topo, _ in self._topologies.values() for inode in topo.inodes}

    def close(self) -> None:
        for topo, _ in self._topologies.values():
            topo.close()
        self._topologies.clear()
        if self._own_journal and self.journal is not None:
            self.journal.undo()


# -- until the runner opens configuration parts (issue 10) -------------------------------------
# Workloads find their configuration's session here; it is opened on first use and its
# topologies close when the process exits (Topology registers that) or close_sessions() runs.
_SESSIONS: dict[Config, NetSession] = {}


def session_for(config: Config, journal: Journal | None = None) -> NetSession:
    if config not in _SESSIONS:
        _SESSIONS[config] = NetworkPart.open(NetOptions.of(config), journal)
    return _SESSIONS[config]


def close_sessions() -> None:
    for session in _SESSIONS.values():
        session.close()
    _SESSIONS.clear()
