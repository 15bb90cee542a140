"""VPN throughput: iperf3 TCP through a WireGuard or OpenVPN tunnel between two namespaces.

The tunnel is a configuration setting (vpn = { kind = ..., cipher = ... }), so "WireGuard vs
OpenVPN" is one run with two configurations, and "OpenVPN on i386 vs amd64" is another.
Each trial brings the tunnel up with the configuration's own daemons, moves data through it
and takes it down; its rusage covers the daemons, whose CPU time is most of a VPN's cost.
"""

from __future__ import annotations

from typing import Any

from shootout.model import Metric, WorkloadSpec
from shootout.net import iperf
from shootout.net.part import NetOptions
from shootout.net.script import script_text, section
from shootout.net.tunnels import INNER_B, check_tunnel, tunnel
from shootout.targets.base import Target
from shootout.targets.process import ProcResult
from shootout.workloads.base import Prepared, Tool
from shootout.workloads.net import NSENTER, TCP_METRICS, NetWorkload, tcp_metrics
from shootout.workloads.shell import parse_sections, tool_version


class Vpn(NetWorkload):
    spec = WorkloadSpec(
        name="vpn",
        category="vpn",
        description="iperf3 TCP through a tunnel between two namespaces: WireGuard (kernel or wireguard-go) "
                    "or OpenVPN with a pinned cipher, as the configuration says",
        metrics=tuple(m for m in TCP_METRICS if m.name != "mbit_s_parallel"),
        headline="mbit_s",
        reproduces="A: OpenVPN and WireGuard throughput between two containers",
    )
    tools = (Tool("iperf3", "iperf3"), NSENTER)
    packages = ("iperf3", "iproute2", "wireguard-go", "wireguard-tools", "openvpn")

    def default_params(self) -> dict[str, Any]:
        return {"seconds": 5}

    @classmethod
    def quick_params(cls) -> dict[str, Any]:
        return {"seconds": 2}

    def prepare(self, target: Target, params: dict[str, Any]) -> Prepared:
        self.check_tools(target)
        options = NetOptions.of(target.config)
        session = self.session(target)
        topo = session.topology(self.spec.name)
        tun = tunnel(options.vpn, topo, cipher=options.cipher, wireguard=options.wireguard)
        plan = tun.plan(target)
        for name, content in plan.files.items():
            self.put(target, name, content)
        a, b = topo.sides
        # The trial's script is a file: it depends on the tunnel, which argv() does not see.
        body = script_text(*tun.up(a, b), section("iperf3-single"),
                           iperf.exchange(b.enter, a.enter, INNER_B, params["seconds"], 1), *tun.down(), *tun.report())
        facts = {"iperf3": tool_version(target, ["iperf3", "--version"]), "tunnel": {"kind": tun.kind, **plan.facts},
                 "network": options.describe(), "in_force": session.readback()[self.spec.name]}
        return Prepared(files={"script": self.put(target, f"{topo.tag}-vpn.sh", body)}, facts=facts)

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return ["sh", prepared.files["script"]]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        sections = parse_sections(result.stdout)
        check_tunnel(sections)
        return tcp_metrics(result, {"single": iperf.parse_iperf3(sections.get("iperf3-single", ""))})


WORKLOADS = (Vpn,)
