"""iperf3 between the namespaces: the shell lines of a trial, and its JSON output as a record.

A trial starts a one-off server (`-s -1`) on side b, waits until it listens, runs the client
on side a with `-J`, and waits for the server to exit, so both ends are children of the
trial and its rusage covers them. Debian bookworm's iperf3 3.12 runs all streams in one
thread; later versions use one thread per stream (a confounder worth knowing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from shootout.base.errors import WorkloadError
from shootout.net.script import wait_for

PORT = 5201
MBIT = 1e6
GIB = 2.0**30


@dataclass(frozen=True)
class IperfResult:
    version: str
    protocol: str
    streams: int
    seconds: float  # the receiver's measuring interval
    bytes: int  # received
    retransmits: int | None  # TCP sender's; None when iperf3 does not report them
    congestion: str | None

    @property
    def mbit_s(self) -> float:
        return self.bytes * 8 / self.seconds / MBIT

    @property
    def gib(self) -> float:
        return self.bytes / GIB


def parse_iperf3(text: str) -> IperfResult:
    """One `iperf3 -c ... -J` document; iperf3's own error message becomes a WorkloadError."""
    try:
        doc: dict[str, Any] = json.loads(text)
    except json.JSONDecodeError:
        first = (text.strip().splitlines() or ["<no output>"])[0]
        raise WorkloadError(f"iperf3 printed no JSON (first line: {first[:120]!r})",
                            "run the trial's iperf3 command by hand") from None
    if doc.get("error"):
        raise WorkloadError(f"iperf3: {doc['error']}", "see the trial's stderr for the server side")
    try:
        start, end = doc["start"], doc["end"]
        received = end["sum_received"]
        sent = end.get("sum_sent", {})
        return IperfResult(
            version=start.get("version", "unknown"),
            protocol=start["test_start"]["protocol"],
            streams=int(start["test_start"]["num_streams"]),
            seconds=float(received["seconds"]),
            bytes=int(received["bytes"]),
            retransmits=int(sent["retransmits"]) if "retransmits" in sent else None,
            congestion=end.get("sender_tcp_congestion"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise WorkloadError(f"iperf3 JSON lacks {exc}", "is this iperf3 3.x with -J?") from None


def whole_seconds(seconds: float) -> str:
    """iperf3 -t takes whole seconds (at least one)."""
    return str(max(1, int(seconds)))


def exchange(server: str, client: str, addr: str, seconds: str, streams: int, affinity: str = "") -> str:
    """Shell lines: a server on one side bound to addr, a client on the other; prints the client's JSON.

    server and client are the sides' enter prefixes (namespace.enter); seconds is a shell word
    (whole_seconds(), or "$1" in a script that gets it as an argument); affinity "N,M" pins the
    client to CPU N and the server to CPU M for the test (iperf3 -A), "" leaves both unpinned."""
    pin = f" -A {affinity}" if affinity else ""
    port_hex = f"{PORT:04X}"
    return "\n".join([
        f"{server} iperf3 -s -1 -B {addr} -p {PORT} >/dev/null 2>iperf3-server.err & srv=$!",
        wait_for(f"{server} grep -q ':{port_hex} 00000000:0000 0A' /proc/net/tcp", "the iperf3 server"),
        f"{client} iperf3 -c {addr} -p {PORT} -t {seconds} -P {streams}{pin} -J || kill $srv 2>/dev/null",
        "wait $srv || cat iperf3-server.err >&2",
    ])
