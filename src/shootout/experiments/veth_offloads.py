"""TCP between two namespaces over veth with the fake offloads off (the write-up's setting:
`ethtool -K veth0 tx off rx off tso off gro off gso off`) against on (the kernel's default)."""

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import NETWORK_NEEDS_ROOT, Experiment, host_ladder

EXPERIMENT = Experiment(
    name="veth-offloads",
    title="iperf3 over veth, offloads on vs off",
    description="iperf3 over veth with the offloads on vs off (the write-up turned them off)",
    reproduces="A's iperf3 over veth with the fake offloads off; here against them on",
    toml=host_ladder(["tcp-veth"], {"offloads-off": 'veth = { offloads = "off" }',
                                    "offloads-on": 'veth = { offloads = "on" }'}),
    sizing=Sizing(round_s=22, prepare_s=60, estimated=True,
                  measured="from rpi-network's trial times of the same workloads (2-core x86-64 VM)"),
    needs_root=NETWORK_NEEDS_ROOT,
    found={"tcp-veth": "offloads off (ethtool -K veth0 tx off rx off tso off gro off gso off); "
                       "no figure with them on"},
)
