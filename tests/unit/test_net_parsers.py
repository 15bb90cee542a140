"""Network parsers on outputs recorded from the real tools (iperf3 3.12, trafgen 0.6.8, ethtool,
nft 1.0.6, iproute2 6.1, OpenVPN 2.6.14, wireguard-go 0.0.20220316), and what they refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shootout.base.errors import WorkloadError
from shootout.execution.process import ProcResult
from shootout.net import counters, cpustat, iperf, offloads, rungs
from shootout.net.tunnels import check_tunnel
from shootout.workloads.net import DropRate, TcpVeth
from shootout.workloads.vpn import Vpn

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "outputs"
RUNGS = ("socket", "nft", "tc", "xdp-generic", "xdp-native")
VPNS = ("wireguard-go", "wireguard-go-debian", "openvpn-aes-256-gcm", "openvpn-chacha20-poly1305")


def parse_sections(stdout: str) -> dict[str, str]:
    return ProcResult(("sh",), 0, stdout, "", 0.0, 0.0, 0.0, 0, 0, 0.0).sections()


def text(name: str) -> str:
    return (FIXTURES / name).read_text()


def recorded(stem: str) -> tuple[ProcResult, dict]:
    meta = json.loads(text(f"{stem}.json"))
    return ProcResult(("sh",), 0, text(f"{stem}.txt"), "", 5.0, meta["user_s"], meta["sys_s"], 1000, 1, 0.0), meta


# -- iperf3 -----------------------------------------------------------------------------------

def test_iperf3_json_of_one_and_four_streams() -> None:
    sections = parse_sections(text("tcp-veth-amd64-host.txt"))
    single = iperf.parse_iperf3(sections["iperf3-single"])
    four = iperf.parse_iperf3(sections["iperf3-parallel"])
    assert (single.streams, four.streams) == (1, 4)
    assert single.protocol == "TCP" and single.version == "iperf 3.12"
    assert single.seconds == pytest.approx(2.0, abs=0.1)
    assert single.mbit_s == pytest.approx(single.bytes * 8 / single.seconds / 1e6)
    assert single.retransmits is not None and single.congestion == "bbr"  # this machine's default


def test_iperf3_error_and_garbage_are_one_line_errors() -> None:
    with pytest.raises(WorkloadError, match="iperf3: unable to connect to server: Connection refused"):
        iperf.parse_iperf3(text("iperf3-3.12-refused.json"))
    with pytest.raises(WorkloadError, match="printed no JSON"):
        iperf.parse_iperf3("iperf3: error - unable to connect\n")
    with pytest.raises(WorkloadError, match="lacks"):
        iperf.parse_iperf3('{"start": {}, "end": {}}')


@pytest.mark.parametrize(("stem", "workload"), [("tcp-veth-amd64-host", TcpVeth)]
                         + [(f"vpn-{v}-amd64-host", Vpn) for v in VPNS])
def test_tcp_workloads_parse_recorded_trials_again(stem: str, workload: type) -> None:
    result, meta = recorded(stem)
    values = workload().parse(result, meta["params"])
    assert values == pytest.approx(meta["values"])
    gib = sum(iperf.parse_iperf3(s).gib for n, s in parse_sections(result.stdout).items() if n.startswith("iperf3"))
    assert values["process_cpu_s_per_gib"] == pytest.approx((meta["user_s"] + meta["sys_s"]) / gib)
    # the kernel's threads over the transfer come on top of the processes' rusage
    kernel = cpustat.kernel_share(parse_sections(result.stdout))
    assert kernel.threads_s > 0 and kernel.softirq_s > 0
    assert values["cpu_s_per_gib"] == pytest.approx((meta["user_s"] + meta["sys_s"] + kernel.threads_s) / gib)
    assert values["softirq_s_per_gib"] == pytest.approx(kernel.softirq_s / gib)


def test_no_retransmits_means_no_retransmit_value() -> None:
    result, meta = recorded("tcp-veth-amd64-host")
    quiet = result.stdout.replace('"retransmits":', '"retransmits_was":')  # as a 3.x build without them
    values = TcpVeth().parse(ProcResult(("sh",), 0, quiet, "", 5.0, 1.0, 1.0, 1, 1, 0.0), meta["params"])
    assert "retransmits_per_gib" not in values and values["mbit_s"] > 0


def test_no_retransmit_at_all_is_a_zero_recorded_beside_the_others_count() -> None:
    """wireguard-go's recorded trial had none: 0 per GiB is its finding against OpenVPN's
    ~150,000, so it is recorded (a ratio to 0 has no meaning, so as an amount with its
    interval, not a speed-up) and shown beside OpenVPN's, not 'n/a'."""
    from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
    from shootout.base.runfacts import RunFacts
    from shootout.judge.analysis import analyze

    counts = {}
    for side in ("wireguard-go", "openvpn-aes-256-gcm"):
        result, meta = recorded(f"vpn-{side}-amd64-host")
        counts[side] = Vpn().parse(result, meta["params"])
    assert counts["wireguard-go"]["retransmits_per_gib"] == 0.0
    assert "retransmits_per_gib" in {m.name for m in Vpn.spec.recorded}
    assert "retransmits_per_gib" not in {m.name for m in Vpn.spec.metrics}
    trials = [Trial(TrialSpec(r, 0, "vpn", side), values, 5.0, 1.0, 1.0, 1, 1, 0, "", 0.0)
              for r in range(1, 9) for side, values in counts.items()]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config(s) for s in counts], [Vpn.spec], {"vpn": {}},
              RunFacts())
    analysis = analyze(run, trials)
    shown = {a.config: a for a in analysis.amounts if a.name == "retransmits_per_gib"}
    assert shown["wireguard-go"].interval.high == 0.0 and shown["openvpn-aes-256-gcm"].interval.low > 100_000
    assert not any(c.metric == "retransmits_per_gib" for c in analysis.comparisons)


# -- the drop ladder ----------------------------------------------------------------------------

@pytest.mark.parametrize("rung", RUNGS)
def test_drop_rate_parses_recorded_trials_again(rung: str) -> None:
    result, meta = recorded(f"drop-rate-{rung}-amd64-host")
    values = DropRate().parse(result, meta["params"])
    assert values == pytest.approx(meta["values"])
    # the cost is measured (softirq time per packet), not the inverse of the rate
    assert "ns_per_packet" not in values and values["rx_ns_per_packet"] != pytest.approx(1e6 / values["kpps"])
    sections = parse_sections(result.stdout)
    softirq = cpustat.softirq(cpustat.parse(sections["before-cpu"]), cpustat.parse(sections["after-cpu"]))
    dev = sections["drop"].split("dev ")[1].split()[0]
    rx = (counters.parse_snapshot(sections["after"], dev).rx_packets
          - counters.parse_snapshot(sections["before"], dev).rx_packets)
    reader = counters.reader_cost(sections["udpsink"]) if rung == "socket" else 0.0
    assert values["rx_ns_per_packet"] == pytest.approx((softirq / rx + reader) * 1e9)
    assert 0 < values["kpps"] < values["gen_ceiling_kpps"]


def test_the_socket_rungs_reader_adds_its_own_cpu_per_datagram() -> None:
    assert counters.reader_cost("ready\nreceived 1000\ncpu_ns 2000000\n") == pytest.approx(2e-6)
    with pytest.raises(WorkloadError, match="did not report"):
        counters.reader_cost("ready\nreceived 1000\n")  # an old sink without its CPU time


def test_cpu_accounting_from_proc_stat_and_kernel_threads() -> None:
    before = cpustat.parse("cpu  100 0 50 1000 0 10 200 5 0 0\ncpu0 50 0 25 500 0 5 100 2 0 0\n")
    after = cpustat.parse("cpu  110 0 60 1100 0 12 300 9 0 0\ncpu0 55 0 30 550 0 6 150 4 0 0\n")
    assert cpustat.softirq(before, after) == pytest.approx(102 / cpustat.USER_HZ)
    assert cpustat.softirq(before, after, "cpu0") == pytest.approx(51 / cpustat.USER_HZ)
    with pytest.raises(WorkloadError, match="no cpu line"):
        cpustat.parse("intr 1 2 3\n")
    # kthreadd's children only (pid 2 itself too); a comm with spaces and parentheses
    dump = ("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 1 2 0 0 20 0 1 0 2 0 0\n"
            "14 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0 0 0 0 300 0 0 20 0 1 0 9 0 0\n"
            "900 (my (odd) app) R 1 900 900 0 -1 4194304 0 0 0 0 700 50 0 0 20 0 1 0 9 0 0\n")
    threads = cpustat.kernel_threads(dump)
    assert set(threads) == {2, 14} and threads[14] == pytest.approx(300 / cpustat.USER_HZ)
    later = cpustat.kernel_threads(dump.replace(" 0 300 0 0", " 0 350 0 0"))
    assert cpustat.kernel_thread_seconds(threads, later) == pytest.approx(50 / cpustat.USER_HZ)


def _relabel(stem: str, layer: str) -> ProcResult:
    result, _ = recorded(stem)
    old = next(line for line in result.stdout.splitlines() if line.startswith("layer "))
    return ProcResult(("sh",), 0, result.stdout.replace(old, f"layer {layer}"), "", 1.0, 1.0, 0.0, 1, 1, 0.0)


def test_a_rung_that_lets_packets_through_is_an_error() -> None:
    # the nft trial's packets reached IP: as a link-layer rung (tc, XDP) that is a leak
    with pytest.raises(WorkloadError, match="got past the drop point to IP"):
        DropRate().parse(_relabel("drop-rate-nft-amd64-host", "link"), {})
    # the socket trial's packets reached UDP: as an nft rung that is a leak
    with pytest.raises(WorkloadError, match="got past the drop point to UDP"):
        DropRate().parse(_relabel("drop-rate-socket-amd64-host", "ip"), {})
    # the tc trial's packets never reached IP: counted at IP there is nothing
    with pytest.raises(WorkloadError, match="no packet reached the drop point"):
        DropRate().parse(_relabel("drop-rate-tc-amd64-host", "ip"), {})


def test_drop_rate_without_its_sections_says_so() -> None:
    with pytest.raises(WorkloadError, match="no drop section"):
        DropRate().parse(ProcResult(("sh",), 1, "", "boom", 0.1, 0, 0, 1, 1, 0.0), {})
    result, _ = recorded("drop-rate-tc-amd64-host")
    cut = result.stdout.split("section after")[0] + "section trafgen\ntrafgen: device not found\n"
    with pytest.raises(WorkloadError, match="no timestamp") as err:
        DropRate().parse(ProcResult(("sh",), 0, cut, "", 1.0, 1.0, 0.0, 1, 1, 0.0), {})
    assert "device not found" in str(err.value)


def test_counters_count_at_the_layer_of_the_rung() -> None:
    def snap(at: str, rx: int, ip: int, udp: int) -> counters.Snapshot:
        return counters.Snapshot(counters.Decimal(at), rx, 0, {"InReceives": ip},
                                 {"InDatagrams": udp, "NoPorts": 0, "InErrors": 0})

    before, after = snap("10.0", 100, 50, 10), snap("12.5", 1100, 950, 10)
    assert counters.count(before, after, "ip").pps == pytest.approx(900 / 2.5)
    with pytest.raises(WorkloadError, match="900 of 1000 packets got past the drop point to IP"):
        counters.count(before, after, "link")
    tolerated = snap("12.5", 1100, 59, 10)  # 9 of 1000 reached IP: within the 1% tolerance
    assert counters.count(before, tolerated, "link").leaked == 9
    with pytest.raises(WorkloadError, match="window lasted"):
        counters.count(after, snap("12.5", 2000, 950, 10), "link")


def test_proc_net_parsers() -> None:
    result, _ = recorded("drop-rate-nft-amd64-host")
    sections = parse_sections(result.stdout)
    dev = sections["drop"].split("dev ")[1].split()[0]
    snap = counters.parse_snapshot(sections["after"], dev)
    assert snap.rx_packets > 0 and snap.ip["InReceives"] > 0 and "RcvbufErrors" in snap.udp
    with pytest.raises(WorkloadError, match="not in /proc/net/dev"):
        counters.parse_snapshot(sections["after"], "nosuchdev")
    assert counters.trafgen_sent(sections["trafgen"]) > 0
    assert counters.trafgen_sent("trafgen: no such device") is None


# -- read-backs ---------------------------------------------------------------------------------

def test_ethtool_features_on_and_off() -> None:
    off = offloads.parse_features(text("ethtool-6.1-k-veth-off.txt"))
    on = offloads.parse_features(text("ethtool-6.1-k-veth-on.txt"))
    assert offloads.mismatches("off", off) == [] and offloads.mismatches("on", on) == []
    assert offloads.mismatches("on", off) == [f"{name}=off" for name in offloads.FEATURES.values()]
    assert off["large-receive-offload"] == "off [fixed]"


def test_rung_read_backs_from_the_tools_json() -> None:
    nft = rungs.nft_rule_summary(json.loads(text("nft-1.0.6-list-table-drop.json")))
    assert nft == {"hook": "prerouting", "prio": -300, "packets": 0}
    assert rungs.tc_filter_summary(json.loads(text("tc-6.1-filter-show-bpf.json"))) == [
        {"name": "tc_drop", "jited": True}]
    assert rungs.xdp_summary(json.loads(text("ip-6.1-link-xdpgeneric.json"))) == {
        "mode": "xdp-generic", "prog": "xdp_drop", "jited": True}
    assert rungs.xdp_summary([{"ifname": "x"}])["mode"] == "none"
    assert rungs.nft_rule_summary({"nftables": []}) == {}


# -- tunnels ------------------------------------------------------------------------------------

def test_openvpn_must_use_the_pinned_cipher() -> None:
    result, _ = recorded("vpn-openvpn-aes-256-gcm-amd64-host")
    check_tunnel(parse_sections(result.stdout))
    swapped = result.stdout.replace("Data Channel: cipher 'AES-256-GCM'", "Data Channel: cipher 'BF-CBC'", 1)
    with pytest.raises(WorkloadError, match=r"used data-channel cipher\(s\) \['BF-CBC'\], not the pinned AES-256-GCM"):
        Vpn().parse(ProcResult(("sh",), 0, swapped, "", 1.0, 1.0, 0.0, 1, 1, 0.0), {"seconds": 2})
    with pytest.raises(WorkloadError, match="did not get to report its tunnel"):
        check_tunnel({})
