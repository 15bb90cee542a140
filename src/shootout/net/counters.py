"""Packet counters of the receiving namespace, and where the packets stopped.

The drop-rate trial prints two snapshots of namespace b (`date +%s.%N`, then
`cat /proc/net/dev /proc/net/snmp` run inside it) around a steady window of the generator's
traffic. The count is taken at the receiver, at the layer of the drop point:
    socket rung  Udp InDatagrams   (datagrams the application read)
    nft rung     Ip InReceives     (packets that reached IP, where the prerouting hook runs)
    link rungs   rx_packets of the receiving veth (tc and XDP act before IP)
and the deeper counters must not move: packets that got past the drop point mean the rung
is not doing what it says. The generator's own ceiling is counted the same way, at the
tx_dropped of a veth whose peer is down (`ceiling`); the socket rung's reader reports its
own CPU time and datagrams (`reader_cost`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from shootout.base.errors import WorkloadError

# Tolerated leak past the drop point, as a fraction of the counted packets.
LEAK_TOLERANCE = 0.01


@dataclass(frozen=True)
class Snapshot:
    at: Decimal  # Unix time with nanoseconds
    rx_packets: int  # of the receiving device
    rx_dropped: int
    ip: dict[str, int]
    udp: dict[str, int]


def _net_dev_fields(text: str, dev: str) -> list[int]:
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if sep and name.strip() == dev:
            return [int(field) for field in rest.split()]
    raise WorkloadError(f"device {dev} is not in /proc/net/dev of the receiving namespace",
                        "the namespace was removed during the trial")


def parse_net_dev(text: str, dev: str) -> tuple[int, int]:
    """(rx_packets, rx_dropped) of dev from /proc/net/dev."""
    fields = _net_dev_fields(text, dev)
    return fields[1], fields[3]


def _stamped(text: str) -> tuple[Decimal, str]:
    lines = text.strip().splitlines()
    if not lines or not re.fullmatch(r"\d+\.\d+", lines[0].strip()):
        raise WorkloadError("a counter snapshot has no timestamp", "the trial script was cut short")
    return Decimal(lines[0].strip()), "\n".join(lines[1:])


def parse_snmp(text: str) -> dict[str, dict[str, int]]:
    """/proc/net/snmp: pairs of lines `Proto: names...` / `Proto: values...`."""
    tables: dict[str, dict[str, int]] = {}
    header: dict[str, list[str]] = {}
    for line in text.splitlines():
        proto, sep, rest = line.partition(":")
        if not sep or not re.fullmatch(r"[A-Za-z]+", proto):
            continue
        words = rest.split()
        if proto not in header:
            header[proto] = words
        elif proto not in tables:
            tables[proto] = {k: int(v) for k, v in zip(header[proto], words)}
    return tables


def parse_snapshot(text: str, dev: str) -> Snapshot:
    """One snapshot section: the timestamp line, then /proc/net/dev and /proc/net/snmp."""
    at, body = _stamped(text)
    rx, dropped = parse_net_dev(body, dev)
    snmp = parse_snmp(body)
    if "Ip" not in snmp or "Udp" not in snmp:
        raise WorkloadError("no Ip/Udp counters in /proc/net/snmp of the receiving namespace",
                            "check that /proc is mounted in the target")
    return Snapshot(at, rx, dropped, snmp["Ip"], snmp["Udp"])


@dataclass(frozen=True)
class Count:
    packets: int
    seconds: float
    leaked: int  # packets seen past the drop point

    @property
    def pps(self) -> float:
        return self.packets / self.seconds


def count(before: Snapshot, after: Snapshot, layer: str) -> Count:
    """Packets the drop point took between the snapshots; a rung that leaks is an error."""
    seconds = float(after.at - before.at)
    rx = after.rx_packets - before.rx_packets
    ip_in = after.ip["InReceives"] - before.ip["InReceives"]
    udp = {k: after.udp.get(k, 0) - before.udp.get(k, 0) for k in ("InDatagrams", "NoPorts", "InErrors")}
    if layer == "socket":
        packets, leaked, past = udp["InDatagrams"], 0, ""
    elif layer == "ip":
        packets, leaked, past = ip_in, sum(udp.values()), "UDP"
    elif layer == "link":
        packets, leaked, past = rx, ip_in, "IP"
    else:
        raise ValueError(layer)
    if seconds <= 0:
        raise WorkloadError(f"the counting window lasted {seconds} s", "the clock (date +%s.%N) is unusable")
    if packets <= 0:
        raise WorkloadError(f"no packet reached the drop point (rx {rx}, IP {ip_in}, UDP {udp['InDatagrams']})",
                            "see the generator's output in the trial's stderr/stdout")
    if leaked > LEAK_TOLERANCE * packets:
        raise WorkloadError(f"{leaked} of {packets} packets got past the drop point to {past}",
                            "the rung is not dropping: check its read-back in the run's facts")
    return Count(packets, seconds, leaked)


def ceiling(before: str, after: str, dev: str) -> float:
    """Packets per second the generator pushed into dev, a veth whose peer is down: every frame
    is dropped at the carrier check (tx_dropped), before any receive path."""
    (t0, b), (t1, a) = _stamped(before), _stamped(after)
    fb, fa = _net_dev_fields(b, dev), _net_dev_fields(a, dev)
    sent = (fa[9] + fa[11]) - (fb[9] + fb[11])  # tx packets + tx dropped
    if sent <= 0 or t1 <= t0:
        raise WorkloadError(f"the generator sent nothing into {dev} while its ceiling was measured",
                            "see the generator's output in the trial's stdout")
    return sent / float(t1 - t0)


_READER = re.compile(r"^received (\d+)\s+cpu_ns (\d+)\s*$", re.M)


def reader_cost(text: str) -> float:
    """CPU seconds per datagram of the socket rung's reader (udpsink's own rusage over its life)."""
    m = _READER.search(text)
    if not m or int(m.group(1)) == 0:
        raise WorkloadError("the UDP sink did not report what it read and its CPU time",
                            f"it said: {(text.strip().splitlines() or ['nothing'])[-1][:120]}")
    return int(m.group(2)) / 1e9 / int(m.group(1))


_TRAFGEN_SENT = re.compile(r"^\s*(\d+)\s+packets outgoing", re.M)


def trafgen_sent(text: str) -> int | None:
    """Packets trafgen says it sent (a cross-check only: the rate is counted at the receiver)."""
    m = _TRAFGEN_SENT.search(text)
    return int(m.group(1)) if m else None
