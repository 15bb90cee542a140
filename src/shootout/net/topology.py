"""Two network namespaces joined by a veth pair: the wire every network workload uses.

    namespace a (sender, client)            namespace b (receiver, server, drop point)
      lo, veth <dev_a> 192.0.2.1/24  <====>  veth <dev_b> 192.0.2.2/24, lo

Addresses come from TEST-NET-1 (RFC 5737) and live only inside the two namespaces; nothing
is routed anywhere else, so no traffic leaves them. The veth pair is created directly
inside the namespaces (never in the host's), IPv6 is off there (no neighbour discovery
noise in packet counts). Names carry a random tag so that concurrent runs and the tests'
leak checks can tell theirs apart.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass

from shootout.execution.tools import host_tool
from shootout.net.netns import NetNamespace, enter
from shootout.system.journal import Journal

ADDR_A, ADDR_B, PREFIX = "192.0.2.1", "192.0.2.2", 24
IFNAME_MAX = 15  # IFNAMSIZ - 1


@dataclass(frozen=True)
class Side:
    ns: NetNamespace
    dev: str
    addr: str
    mac: str

    @property
    def enter(self) -> str:
        """Shell prefix that runs a command of the target's userspace on this side."""
        return enter(self.ns.path)


class Topology:
    def __init__(self, purpose: str, journal: Journal, *, tag: str | None = None) -> None:
        self.purpose = purpose
        self.tag = tag or secrets.token_hex(3)
        self.dev_a, self.dev_b = f"so{self.tag}a", f"so{self.tag}b"
        self._ns_a = NetNamespace(f"{purpose} a", journal)
        self._ns_b = NetNamespace(f"{purpose} b", journal)
        self.a: Side | None = None
        self.b: Side | None = None

    def name(self, suffix: str) -> str:
        """A device or object name unique to this topology, e.g. the tunnel interfaces."""
        name = f"so{self.tag}{suffix}"
        assert len(name) <= IFNAME_MAX, name
        return name

    def open(self, *, pin: str | None = None) -> Topology:
        host_tool("ip", "iproute2")
        host_tool("sysctl", "procps")
        try:
            for ns, side in ((self._ns_a, "a"), (self._ns_b, "b")):
                ns.start()
                if pin:
                    ns.pin(f"{pin}-{side}")
                ns.run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                        "net.ipv6.conf.default.disable_ipv6=1"], "turning IPv6 off")
                ns.run(["ip", "link", "set", "lo", "up"], "ip link set lo up")
            self._ns_a.change(["ip", "link", "add", self.dev_a, "type", "veth", "peer", "name", self.dev_b,
                               "netns", str(self._ns_b.pid)], ["ip", "link", "delete", "dev", self.dev_a],
                              f"creating the veth pair {self.dev_a}/{self.dev_b}")
            self.a = self._configure(self._ns_a, self.dev_a, ADDR_A)
            self.b = self._configure(self._ns_b, self.dev_b, ADDR_B)
        except BaseException:
            self.close()
            raise
        return self

    @staticmethod
    def _configure(ns: NetNamespace, dev: str, addr: str) -> Side:
        ns.run(["ip", "address", "add", f"{addr}/{PREFIX}", "dev", dev], f"addressing {dev}")
        ns.run(["ip", "link", "set", dev, "up"], f"ip link set {dev} up")
        link = json.loads(ns.run(["ip", "-j", "link", "show", "dev", dev], f"ip link show {dev}"))
        return Side(ns, dev, addr, link[0]["address"])

    @property
    def sides(self) -> tuple[Side, Side]:
        assert self.a is not None and self.b is not None, "topology not open"
        return self.a, self.b

    @property
    def inodes(self) -> list[str]:
        return [ns.inode for ns in (self._ns_a, self._ns_b) if ns.inode]

    def close(self) -> list[str]:
        """Remove both namespaces (and with them everything made inside); what could not be undone."""
        errors = [error for ns in (self._ns_b, self._ns_a) for error in ns.close()]
        self.a = self.b = None
        return errors
