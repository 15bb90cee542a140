"""Network workloads between two namespaces: TCP over veth, and the packet-drop ladder.

Both ask the run's network part (parts/network.py) for their configuration's namespaces in
prepare(): the veth offloads and the drop rung are configuration settings, applied and read
back before each trial. Each trial is one sh script inside the target that starts the
configuration's own programs (iperf3, trafgen, udpsink) in the namespaces, so both ends of
the traffic are children of the trial and its rusage covers them.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from shootout.base.errors import TargetError, WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.build import build_native
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.net import counters, cpustat, iperf
from shootout.net.options import PART, NetOptions, net_options
from shootout.net.rungs import DROP_PORT, rung
from shootout.net.script import script, section, wait_for
from shootout.net.topology import ADDR_A, ADDR_B, Side, Topology
from shootout.parts.network import NetSession
from shootout.places import kind_of
from shootout.system.affinity import online_cpus
from shootout.workloads.contract import EVERY_CPU, Context, Prepared, Tool, Workload
from shootout.workloads.shell import q

NSENTER = Tool("nsenter", "util-linux")
IPERF3 = Tool("iperf3", "iperf3")


class NetWorkload(Workload):
    """What the network workloads share: root, the run's network session, files in their directory."""

    preinstalled: ClassVar[bool] = False  # their programs come into a userspace on first use
    needs_root: ClassVar[str] = "network namespaces and veth pairs"

    def topology(self, ctx: Context, *, drop: bool = False, vpn: NetOptions | None = None) -> Topology:
        if not kind_of(ctx.config).this_kernel:  # the namespaces are this machine's: entered by /proc/PID
            raise TargetError(f"{self.spec.name} runs on this machine's kernel, not on a {ctx.config.target} target",
                              "use host or a userspace (debian:RELEASE:ARCH) configuration")
        session = ctx.part(PART)
        assert isinstance(session, NetSession)
        return session.topology(ctx.config, self.spec.name, drop=drop, vpn=vpn)

    def cpus(self, params: dict[str, Any]) -> int:
        return EVERY_CPU  # two ends, each pinned by the workload itself (taskset, iperf3 -A)

    @staticmethod
    def side_files(ctx: Context, a: Side, b: Side) -> dict[str, str]:
        """The trial's directory (its cwd) and the sides' enter prefixes, for argv()."""
        return {"dir": ctx.workdir(), "enter_a": a.enter, "enter_b": b.enter, "dev_a": a.dev, "dev_b": b.dev}


def tcp_metrics(result: ProcResult, runs: dict[str, iperf.IperfResult]) -> dict[str, float]:
    """Throughput per phase; CPU per GiB over all phases: the trial's rusage (every program it
    started and reaped) plus the kernel's threads over the transfers (ksoftirqd, where the
    softirq work goes that no process's rusage holds; kworkers, where kernel WireGuard
    encrypts), and the rusage alone beside it; retransmits per GiB whenever iperf3 reports them,
    none included: 0 against another tunnel's thousands is a finding (a recorded amount, since a
    ratio to 0 is undefined)."""
    values = {f"mbit_s{'' if name == 'single' else '_' + name}": r.mbit_s for name, r in runs.items()}
    gib = sum(r.gib for r in runs.values())
    kernel = cpustat.kernel_share(result.sections())
    values["cpu_s_per_gib"] = (result.user_s + result.sys_s + kernel.threads_s) / gib
    values["process_cpu_s_per_gib"] = (result.user_s + result.sys_s) / gib
    values["softirq_s_per_gib"] = kernel.softirq_s / gib
    if any(r.retransmits is not None for r in runs.values()):
        values[RETRANSMITS.name] = sum(r.retransmits or 0 for r in runs.values()) / gib
    return values


TCP_METRICS = (
    Metric("mbit_s", "Mbit/s", "TCP throughput of one stream, as received"),
    Metric("mbit_s_parallel", "Mbit/s", "TCP throughput of `parallel` streams (iperf3 -P), as received"),
    Metric("cpu_s_per_gib", "s/GiB", "CPU seconds per GiB received: the trial's processes (both iperf3 ends, "
                                     "tunnel daemons) and the kernel's threads (ksoftirqd, kworkers) meanwhile"),
    Metric("process_cpu_s_per_gib", "s/GiB", "CPU seconds of the trial's processes alone (rusage) per GiB"),
    Metric("softirq_s_per_gib", "s/GiB", "softirq and irq seconds of every CPU per GiB (from /proc/stat; the "
                                         "part that ran inside the trial's processes is also in their rusage)"),
)
# Counted, not a speed-up: a tunnel with none has 0, and a ratio to 0 is undefined.
RETRANSMITS = Metric("retransmits_per_gib", "retr/GiB", "TCP retransmits per GiB (the sender's, as iperf3 reports)")


class TcpVeth(NetWorkload):
    spec = WorkloadSpec(
        name="tcp-veth",
        category="net",
        description="iperf3 TCP between two network namespaces over a veth pair, one stream and several; "
                    "veth offloads as the configuration says (default off, as in the article)",
        metrics=TCP_METRICS,
        recorded=(RETRANSMITS,),
        headline="mbit_s",
        reproduces="A: iperf3 between two containers over veth, fake offloads off",
    )
    tools = (IPERF3, NSENTER)
    quick = {"seconds": 1, "parallel": 0, "affinity": ""}
    slow = "one stream for 5 s, then several for 5 s"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        # affinity "N,M": the sender on CPU N, the receiver on CPU M (iperf3 -A); "auto": 0,1 on two
        # CPUs or more; "" leaves them to the scheduler
        return {"seconds": 5, "parallel": 4, "affinity": ""}

    def prepare(self, ctx: Context) -> Prepared:
        a, b = self.topology(ctx).sides
        return Prepared(files=self.side_files(ctx, a, b),
                        versions={"iperf3": tool_version(ctx.target, ["iperf3", "--version"])})

    def cpus(self, params: dict[str, Any]) -> int:
        return EVERY_CPU if affinity(params.get("affinity", "")) else 2  # iperf3's two ends

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        f = prepared.files
        phases = [("single", 1)] + ([("parallel", int(params["parallel"]))] if params["parallel"] else [])
        lines = [f"cd {q(f['dir'])} || exit 1", cpustat.snapshot("before")]
        for name, streams in phases:
            lines += [section(f"iperf3-{name}"),
                      iperf.exchange(f["enter_b"], f["enter_a"], ADDR_B, iperf.whole_seconds(params["seconds"]), streams,
                                     affinity(params.get("affinity", "")))]
        return script(*lines, cpustat.snapshot("after"))

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        sections = result.sections()
        names = ["single"] + (["parallel"] if params.get("parallel") else [])
        return tcp_metrics(result, {n: iperf.parse_iperf3(sections.get(f"iperf3-{n}", "")) for n in names})


def affinity(value: object, workload: str = "tcp-veth") -> str:
    """A workload's affinity parameter (tcp-veth's, vpn's), checked: "" or "N,M" (the sender's CPU,
    the receiver's); "auto": CPUs 0 and 1 where there are two or more, else none."""
    text = str(value).replace(" ", "")
    if text == "auto":
        return "0,1" if (os.cpu_count() or 1) >= 2 else ""
    cpus = text.split(",")
    if text and (len(cpus) != 2 or not all(c.isdigit() and int(c) < (os.cpu_count() or 1) for c in cpus)):
        raise WorkloadError(f"{workload}: affinity = {value!r} is not two CPUs of this machine",
                            f'use "N,M" with N and M below {os.cpu_count()} (the sender\'s CPU, the receiver\'s), "auto" or ""')
    return text


def trafgen_config(a: Side, b: Side) -> str:
    """One 64-byte frame on the wire (60 bytes here, the FCS adds 4): UDP from a to port 9 on b.
    trafgen fills in lengths and checksums; the destination MAC is b's, so b's stack takes it."""
    return (f"/* shootout drop-rate: 64-byte frames incl. FCS */\n"
            f"{{ eth(da={b.mac}, sa={a.mac}), ipv4(saddr={ADDR_A}, daddr={ADDR_B}, ttl=64), "
            f"udp(sp=4000, dp={DROP_PORT}), fill(0, 18) }}\n")


# The generator's CPU: trafgen pins its one fork to CPU 0 (--cpus 1). The receive path runs in
# softirq inline on that CPU: steering it to another CPU (RPS) costs an inter-processor
# interrupt per packet batch, measured at ~3 us/packet on a KVM guest, more than any drop point
# (and trafgen's fast path dies with EAGAIN once the remote backlog holds its send buffer).
# The socket rung's reader gets the next CPU, so that it never runs inside that softirq
# (counted apart, by its own rusage).
GEN_CPU = 0


class DropRate(NetWorkload):
    spec = WorkloadSpec(
        name="drop-rate",
        category="net",
        description="64-byte UDP frames from trafgen (one CPU) into a drop point in the other namespace: "
                    "the receive path's CPU time per packet, and the rate counted at the receiver; "
                    "the drop ladder, one rung per configuration (drop = ...)",
        metrics=(
            Metric("rx_ns_per_packet", "ns/pkt",
                   "receive-side CPU time per packet: softirq and irq time of every CPU during the window "
                   "per packet into the receiving veth, plus the socket rung's reader's own CPU time per datagram"),
            Metric("kpps", "kpps", "packets per second taken by the drop point, counted at the receiver"),
            Metric("gen_ceiling_kpps", "kpps",
                   "the generator's own ceiling: trafgen into a veth whose peer is down (no receive path, "
                   "no drop point), measured in the same trial"),
        ),
        headline="rx_ns_per_packet",
        reproduces="A: drop rate of 64-byte frames with a TC drop rule; the Cloudflare/XDP drop ladder",
    )
    tools = (Tool("trafgen", "netsniff-ng"), NSENTER, Tool("timeout", "coreutils"), Tool("taskset", "util-linux"))
    quick = {"seconds": 0.5, "warmup_s": 0.2, "ceiling_s": 0.3}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"seconds": 3.0, "warmup_s": 0.5, "ceiling_s": 1.0}

    def prepare(self, ctx: Context) -> Prepared:
        drop = rung(net_options(ctx.config).drop)
        topo = self.topology(ctx, drop=True)
        a, b = topo.sides
        # The ceiling's veth pair, in namespace a only, its peer left down: trafgen's frames are
        # dropped at the carrier check before any receive path (counted as tx_dropped).
        idle, dead = topo.name("gc"), topo.name("gd")
        if f"{idle}:" not in a.ns.run(["cat", "/proc/net/dev"], "reading /proc/net/dev"):
            a.ns.change(["ip", "link", "add", idle, "type", "veth", "peer", "name", dead],
                        ["ip", "link", "delete", idle], f"creating the generator's ceiling veth {idle}")
            a.ns.run(["ip", "link", "set", idle, "up"], f"ip link set {idle} up")
        files = {**self.side_files(ctx, a, b), "rung": drop.name, "layer": drop.layer, "ceiling_dev": idle,
                 "trafgen_cfg": ctx.put("trafgen.cfg", trafgen_config(a, b))}
        facts: dict[str, Any] = {"generator_cpu": GEN_CPU,
                                 "receive_path": "softirq, inline on the generator's CPU (no packet steering)"}
        if drop.name == "socket":
            sink = build_native(ctx.target, "udpsink")
            files["sink"], facts["binary"] = sink.path, sink.facts
            facts["reader_cpu"] = self.reader_cpu()
        return Prepared(files=files, facts=facts,
                        versions={"trafgen": tool_version(ctx.target, ["trafgen", "--version"])})

    @staticmethod
    def reader_cpu() -> int:
        """The CPU of the socket rung's reader: another than the generator's when there is one."""
        # the machine's online CPUs, not shootout's own: with reserved CPUs it runs on the rest alone
        others = sorted(online_cpus() - {GEN_CPU})
        return others[0] if others else GEN_CPU

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        f = prepared.files
        enter_a, enter_b = f["enter_a"], f["enter_b"]
        # timeout: trafgen forks its sender, and only a signal to the whole group stops both;
        # timeout signals its group, and bounds the sender's life if this script dies.
        # --no-sock-mem: trafgen would otherwise rewrite net.core.[rw]mem_* (global on older kernels)
        limit = params["warmup_s"] + params["seconds"] + 30

        def trafgen(dev: str, out: str) -> str:
            return (f"{enter_a} timeout -s INT {limit:g} trafgen --dev {dev} --conf {q(f['trafgen_cfg'])} "
                    f"--cpus 1 --no-sock-mem --notouch-irq >{out} 2>&1 & gen=$!")

        lines = [f"cd {q(f['dir'])} || exit 1",
                 f'snap() {{ echo "section $1"; date +%s.%N; {enter_b} cat /proc/net/dev /proc/net/snmp; '
                 f'echo "section $1-cpu"; {cpustat.PRINT}; }}',
                 f'snap_a() {{ echo "section $1"; date +%s.%N; {enter_a} cat /proc/net/dev; }}',
                 section("drop"), f"echo 'rung {f['rung']}'; echo 'layer {f['layer']}'; echo 'dev {f['dev_b']}'",
                 f"echo 'ceiling_dev {f['ceiling_dev']}'",
                 # the generator alone first: its ceiling with nothing receiving
                 trafgen(f["ceiling_dev"], "ceiling.out"), f"sleep {params['warmup_s']:g}", "snap_a ceiling-before",
                 f"sleep {params['ceiling_s']:g}", "snap_a ceiling-after", "kill -INT $gen 2>/dev/null; wait $gen"]
        if "sink" in f:
            cpu = prepared.facts.get("reader_cpu", GEN_CPU)
            lines += [f"{enter_b} taskset -c {cpu} {q(f['sink'])} {DROP_PORT} >udpsink.out 2>&1 & sink=$!",
                      wait_for("grep -q ready udpsink.out", "the UDP sink")]
        lines += [trafgen(f["dev_a"], "trafgen.out"),
                  f"sleep {params['warmup_s']:g}", "snap before", f"sleep {params['seconds']:g}", "snap after",
                  "kill -INT $gen 2>/dev/null; wait $gen; status=$?"]
        if "sink" in f:
            lines += ["kill -INT $sink 2>/dev/null; wait $sink", section("udpsink"), "cat udpsink.out"]
        lines += [section("trafgen"), "cat trafgen.out", 'echo "exit status $status"']
        return script(*lines)

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        sections = result.sections()
        info = dict(line.split(" ", 1) for line in sections.get("drop", "").splitlines() if " " in line)
        if not {"rung", "layer", "dev", "ceiling_dev"} <= set(info):
            raise WorkloadError("the drop-rate trial printed no drop section", "the trial script did not start")
        try:
            before = counters.parse_snapshot(sections.get("before", ""), info["dev"])
            after = counters.parse_snapshot(sections.get("after", ""), info["dev"])
            taken = counters.count(before, after, info["layer"])
            ceiling = counters.ceiling(sections.get("ceiling-before", ""), sections.get("ceiling-after", ""),
                                       info["ceiling_dev"])
            softirq_s = cpustat.softirq(cpustat.parse(sections.get("before-cpu", "")),
                                        cpustat.parse(sections.get("after-cpu", "")))
        except WorkloadError as exc:
            said = " / ".join((sections.get("trafgen", "").strip().splitlines() or ["nothing"])[-2:])
            raise WorkloadError(f"{info['rung']} rung: {exc.message}", f"trafgen said: {said}"[:300]) from None
        if softirq_s <= 0:  # sampled at the tick: a window too short or too slow to be hit
            raise WorkloadError(f"{info['rung']} rung: no softirq time was counted in the {taken.seconds:.2f} s window",
                                "lengthen the window (params seconds)")
        cost_s = softirq_s / (after.rx_packets - before.rx_packets)
        if info["rung"] == "socket":
            cost_s += counters.reader_cost(sections.get("udpsink", ""))
        return {"rx_ns_per_packet": cost_s * 1e9, "kpps": taken.pps / 1e3, "gen_ceiling_kpps": ceiling / 1e3}


WORKLOADS = (TcpVeth, DropRate)
