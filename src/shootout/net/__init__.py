"""Network topologies for the net and vpn workloads, built and removed by shootout itself.

Data flow, top to bottom:
    options.py    a configuration's network options, as parts/network.py (the network part:
                  parsing, checking, and the run's session of namespaces) parsed them
    topology.py   two namespaces (netns.py, each held by holder.py) joined by a veth pair
    offloads.py   ethtool -K / -k on both peers;  rungs.py  the drop points (nft, tc, XDP; drop.bpf.c)
    tunnels.py    WireGuard / OpenVPN inside a trial (keys.py makes their keys and certificates)
    script.py     the trial's sh script;  iperf.py, counters.py  what the trial prints, parsed
The workloads themselves are workloads/net.py (tcp-veth, drop-rate) and workloads/vpn.py.
"""

from __future__ import annotations

from shootout.execution.tools import Tool

# Machine tools shootout runs on the host to build topologies (the programs measured are
# the configuration's own, declared by the workloads).
HOST_TOOLS = (
    Tool("unshare", "util-linux"),
    Tool("nsenter", "util-linux"),
    Tool("ip", "iproute2"),
    Tool("tc", "iproute2"),
    Tool("ethtool", "ethtool"),
    Tool("sysctl", "procps"),
    Tool("nft", "nftables"),
    Tool("clang", "clang"),
)
