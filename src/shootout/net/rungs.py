"""The drop ladder: where a 64-byte UDP frame to port 9 dies in the receiving namespace.

    socket       a UDP socket that reads and discards (udpsink.c, run by the trial)
    nft          an nftables rule at prerouting, priority raw: `udp dport 9 counter drop`
    tc           a cls_bpf filter in direct-action mode on the clsact ingress hook (TC_ACT_SHOT);
                 this kernel family may lack act_gact/matchall, cls_bpf needs nothing else
    xdp-generic  XDP_DROP in the stack's generic (skb) XDP hook
    xdp-native   XDP_DROP in veth's own XDP (NAPI) path; for frames sent through the stack,
                 as here, veth needs no program on the peer (that is for XDP_REDIRECT)

Each rung names the layer at which its packets must stop; the workload checks that against
the receiver's own counters, so a rung that silently lets packets through is an error, not
a fast result. Everything is installed inside namespace b and vanishes with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sysconfig
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from shootout.base.errors import ShootoutError, TargetError, UsageError
from shootout.base.paths import cache_dir
from shootout.execution.tools import host_tool
from shootout.net.topology import Topology
from shootout.system.journal import journal

DROP_PORT = 9
NFT_TABLE = "shootout_drop"


def drop_object() -> Path:
    """drop.bpf.c compiled by the host's clang for the BPF target (cached by source and compiler)."""
    clang = host_tool("clang", "clang")
    source = resources.files("shootout.net").joinpath("drop.bpf.c").read_bytes()
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    key = hashlib.sha256(source + version.encode()).hexdigest()[:16]
    out = cache_dir() / "bpf" / f"drop-{key}.o"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        src, obj = Path(tmp) / "drop.bpf.c", Path(tmp) / "drop.o"
        src.write_bytes(source)
        # asm/types.h lives under the multiarch include directory, which -target bpf does not search
        multiarch = sysconfig.get_config_var("MULTIARCH") or ""
        done = subprocess.run([clang, "-O2", "-g", "-target", "bpf", f"-I/usr/include/{multiarch}",
                               "-c", str(src), "-o", str(obj)], capture_output=True, text=True)
        if done.returncode != 0:
            raise TargetError(f"clang cannot build the drop program: {(done.stderr.strip().splitlines() or ['?'])[-1]}",
                              "install clang and linux-libc-dev")
        os.replace(obj, out)  # atomic: two runs building at once both end with a whole object
    return out


@dataclass(frozen=True)
class Rung:
    name: str
    layer: str  # "socket": read by the application; "ip": stopped at IP; "link": stopped before IP
    description: str

    def install(self, topo: Topology) -> None:
        """Put the drop point in namespace b (the socket rung's sink is started by the trial)."""

    def readback(self, topo: Topology) -> str:
        """What is attached now, as the kernel reports it, in one line; TargetError when the
        drop point is gone (a trial must not measure without it)."""
        return "nothing attached (the trial's UDP socket reads the port)"

    def _gone(self, what: str) -> TargetError:
        return TargetError(f"the {self.name} drop point is no longer attached: {what}",
                           "something removed it during the run; run again")


class NftRung(Rung):
    def install(self, topo: Topology) -> None:
        host_tool("nft", "nftables")
        _, b = topo.sides
        rules = (f"table ip {NFT_TABLE} {{ chain pre {{ type filter hook prerouting priority raw; policy accept; "
                 f"udp dport {DROP_PORT} counter drop; }}; }}")
        b.ns.change(["nft", "-f", "-"], ["nft", "delete", "table", "ip", NFT_TABLE], "adding the nft drop rule",
                    stdin=rules)

    def readback(self, topo: Topology) -> str:
        _, b = topo.sides
        rule = nft_rule_summary(json.loads(b.ns.run(["nft", "-j", "list", "table", "ip", NFT_TABLE],
                                                    "nft list table")))
        if not rule:
            raise self._gone(f"table {NFT_TABLE} has no drop rule")
        return f"nft {rule['hook']} priority {rule['prio']}: udp dport {DROP_PORT} drop"


class TcRung(Rung):
    def install(self, topo: Topology) -> None:
        host_tool("tc", "iproute2")
        obj = drop_object()
        _, b = topo.sides
        b.ns.change(["tc", "qdisc", "add", "dev", b.dev, "clsact"], ["tc", "qdisc", "delete", "dev", b.dev, "clsact"],
                    "adding the clsact qdisc")  # its filters go with it
        b.ns.run(["tc", "filter", "add", "dev", b.dev, "ingress", "bpf", "direct-action", "obj", str(obj),
                  "sec", "tc"], "attaching the tc drop program")

    def readback(self, topo: Topology) -> str:
        _, b = topo.sides
        progs = tc_filter_summary(json.loads(b.ns.run(["tc", "-j", "filter", "show", "dev", b.dev, "ingress"],
                                                      "tc filter show")))
        if not progs:
            raise self._gone("no BPF filter at tc ingress")
        return "tc ingress " + ", ".join(f"bpf {p['name']}{' (jited)' if p['jited'] else ''}" for p in progs)


class XdpRung(Rung):
    MODES = {"xdp-generic": ("xdpgeneric", 2), "xdp-native": ("xdpdrv", 1)}  # iproute2 keyword, IFLA mode

    def install(self, topo: Topology) -> None:
        keyword, _ = self.MODES[self.name]
        obj = drop_object()
        _, b = topo.sides
        b.ns.change(["ip", "link", "set", "dev", b.dev, keyword, "obj", str(obj), "sec", "xdp"],
                    ["ip", "link", "set", "dev", b.dev, keyword, "off"], f"attaching the XDP drop program ({keyword})")

    def readback(self, topo: Topology) -> str:
        _, b = topo.sides
        xdp = xdp_summary(json.loads(b.ns.run(["ip", "-j", "link", "show", "dev", b.dev], "ip link show")))
        if xdp["mode"] != self.name:
            raise self._gone(f"XDP mode is {xdp['mode']}")
        return f"{self.MODES[self.name][0]} {xdp['prog']}{' (jited)' if xdp['jited'] else ''}"


RUNGS: dict[str, Rung] = {
    r.name: r for r in (
        Rung("socket", "socket", "a UDP socket that reads and discards"),
        NftRung("nft", "ip", "nftables rule at prerouting (priority raw)"),
        TcRung("tc", "link", "cls_bpf direct-action at tc ingress"),
        XdpRung("xdp-generic", "link", "XDP_DROP, generic (skb) mode"),
        XdpRung("xdp-native", "link", "XDP_DROP, veth native mode"),
    )
}


def rung(name: str) -> Rung:
    try:
        return RUNGS[name]
    except KeyError:
        raise UsageError(f"unknown drop rung {name!r}", "use one of: " + ", ".join(RUNGS)) from None


# -- read-backs: the tools' JSON reduced to what a trial records ------------------------------

def tc_filter_summary(filters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tc -j filter show DEV ingress` -> the BPF programs attached, by name, and whether JIT-compiled."""
    progs = [f["options"]["prog"] for f in filters if f.get("kind") == "bpf" and "prog" in f.get("options", {})]
    return [{"name": p.get("name"), "jited": bool(p.get("jited"))} for p in progs]


def xdp_summary(links: list[dict[str, Any]]) -> dict[str, Any]:
    """`ip -j link show dev DEV` -> the XDP mode (as a rung name) and program attached."""
    xdp = links[0].get("xdp", {}) if links else {}
    modes = {mode: name for name, (_, mode) in XdpRung.MODES.items()}
    prog = xdp.get("prog", {})
    return {"mode": modes.get(xdp.get("mode"), "none"), "prog": prog.get("name"), "jited": bool(prog.get("jited"))}


def nft_rule_summary(listing: dict[str, Any]) -> dict[str, Any]:
    """The drop rule of `nft -j list table`: its hook, priority and counter ({} when there is none)."""
    chain = next((i["chain"] for i in listing.get("nftables", []) if "chain" in i), {})
    for item in listing.get("nftables", []):
        exprs = item.get("rule", {}).get("expr", [])
        counter = next((e["counter"] for e in exprs if "counter" in e), None)
        if any("drop" in e for e in exprs) and counter is not None:
            return {"hook": chain.get("hook"), "prio": chain.get("prio"), "packets": counter["packets"]}
    return {}


@cache
def problem(name: str) -> str | None:
    """Why this kernel or machine cannot do the rung (tried in a throwaway topology), or None."""
    r = rung(name)
    with journal() as j:  # of its own: the probe leaves nothing, even if killed
        topo = Topology(f"probe {name}", j)
        try:
            topo.open()
            r.install(topo)
            r.readback(topo)
        except ShootoutError as exc:
            return exc.message
        finally:
            topo.close()
    return None
