"""VPN throughput: iperf3 TCP through a WireGuard or OpenVPN tunnel between two namespaces.

The tunnel is a configuration setting (vpn = { kind = ..., cipher = ... }), so "WireGuard vs
OpenVPN" is one run with two configurations, and "OpenVPN on i386 vs amd64" is another; the
tunnel each configuration brings up is recorded with its trials as what is compared. The
parameter `tunnel` fixes the kind for the workload instead (its other options, the cipher and
WireGuard's implementation, stay the configuration's): a run of two userspaces can then ask
"64 vs 32 bits" of WireGuard and of OpenVPN as two workloads ([[workload]] tables with
builtin = "vpn", rpi-network), not as four configurations crossed with every other workload.
Each trial brings the tunnel up with the configuration's own daemons, moves data through it
and takes it down; its rusage covers the daemons, whose CPU time is most of a VPN's cost.

The parameter `affinity` ("N,M", "auto" or "", as tcp-veth's) pins each side to one CPU: side
a's tunnel daemon and iperf3 client to N, side b's daemon and iperf3 server to M, so that each
end of the tunnel has a core of its own, as the two ends of a real tunnel (two machines, or two
containers on a Pi 4's four cores) do; left to the scheduler on a 2-core machine, the four busy
processes share two CPUs differently from trial to trial. Measured with
benchmarks/openvpn_noise.py (OpenVPN, 3 s trials): pinned, 12-18% more throughput and almost no
drops at the tun queue; the trial-to-trial spread, though, is the machine's (CPU seconds per GiB
vary as much as Mbit/s, even with the retransmits gone), not the scheduler's. Unpinned by
default, so the tunnel is measured as the system places it; rpi-network pins OpenVPN's
(single-threaded), not wireguard-go's, whose goroutines would lose the second CPU.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.net import cpustat, iperf
from shootout.net.options import NetOptions, net_options
from shootout.net.script import script_text, section
from shootout.net.tunnels import INNER_B, VPN_KINDS, check_tunnel, tunnel
from shootout.workloads.contract import Context, Prepared, Tool
from shootout.workloads.net import (
    IPERF3,
    NSENTER,
    RETRANSMITS,
    TCP_METRICS,
    NetWorkload,
    affinity,
    tcp_metrics,
)
from shootout.workloads.shell import q

CONFIGURED = "configuration"  # the `tunnel` parameter's default: the configuration's vpn setting


class Vpn(NetWorkload):
    spec = WorkloadSpec(
        name="vpn",
        category="vpn",
        description="iperf3 TCP through a tunnel between two namespaces: WireGuard (kernel or wireguard-go) "
                    "or OpenVPN with a pinned cipher, as the configuration says; affinity \"N,M\" gives each "
                    "end (its daemon and iperf3) a CPU of its own, as two machines have",
        metrics=tuple(m for m in TCP_METRICS if m.name != "mbit_s_parallel"),
        headline="mbit_s",
        recorded=(RETRANSMITS,),
        reproduces="A: OpenVPN and WireGuard throughput between two containers",
    )
    # both kinds' programs: a run may compare them, and every one of them is verified
    tools = (IPERF3, NSENTER, Tool("ip", "iproute2"), Tool("wireguard-go", "wireguard-go"),
             Tool("wg", "wireguard-tools"), Tool("openvpn", "openvpn"))
    quick = {"seconds": 1, "tunnel": CONFIGURED, "affinity": ""}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        # affinity "N,M": side a (daemon, iperf3 client) on CPU N, side b on CPU M; "auto": 0,1
        # on two CPUs or more; "" leaves them to the scheduler
        return {"seconds": 5, "tunnel": CONFIGURED, "affinity": ""}

    @staticmethod
    def options(ctx: Context) -> NetOptions:
        """The tunnel's options: the configuration's, its kind replaced by the `tunnel` parameter's."""
        options, kind = net_options(ctx.config), ctx.params.get("tunnel", CONFIGURED)
        if kind == CONFIGURED:
            return options
        if kind not in VPN_KINDS:
            raise UsageError(f"{ctx.name}: tunnel = {kind!r} is not a choice",
                             f"use one of: {CONFIGURED} (the configuration's vpn), {', '.join(VPN_KINDS)}")
        return replace(options, vpn=kind)

    def prepare(self, ctx: Context) -> Prepared:
        options = self.options(ctx)
        topo = self.topology(ctx, vpn=options)
        tun = tunnel(options, topo)
        plan = tun.plan(ctx.target)
        for name, content in plan.files.items():
            ctx.put(name, content)
        a, b = topo.sides
        cpus = affinity(ctx.params.get("affinity", ""), ctx.name)
        cpu_a, _, cpu_b = cpus.partition(",")
        # The trial's script is a file (it depends on the tunnel, which argv() does not see); its
        # argument is the transfer's duration.
        body = script_text(f"cd {q(ctx.workdir())} || exit 1", *tun.up(a, b, (cpu_a, cpu_b)),
                           cpustat.snapshot("before"), section("iperf3-single"),
                           iperf.exchange(b.enter, a.enter, INNER_B, '"$1"', 1, cpus),
                           cpustat.snapshot("after"), *tun.down(), *tun.report())
        return Prepared(files={"script": ctx.put("trial.sh", body)},
                        facts={"tunnel": {"kind": tun.kind, **plan.facts}},
                        versions={"iperf3": tool_version(ctx.target, ["iperf3", "--version"]), **plan.versions})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return ["sh", prepared.files["script"], iperf.whole_seconds(params["seconds"])]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        sections = result.sections()
        check_tunnel(sections)
        return tcp_metrics(result, {"single": iperf.parse_iperf3(sections.get("iperf3-single", ""))})


WORKLOADS = (Vpn,)
