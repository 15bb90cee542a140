"""The packet-drop ladder (Cloudflare's "How to drop 10 million packets per second", and the
XDP paper's): where a 64-byte UDP frame dies in the receiving namespace, one rung per
configuration. The rungs are compared by the receive path's CPU time per packet (the headline);
the rate, counted at the receiver, is flagged where it sits at the generator's own ceiling. `shootout doctor` lists the rungs this kernel can do;
a configuration whose rung it cannot do is skipped with the reason."""

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import NETWORK_NEEDS_ROOT, Experiment, host_ladder
from shootout.net.rungs import RUNGS

EXPERIMENT = Experiment(
    name="drop-ladder",
    description="64-byte UDP frames dropped at a socket, an nft rule, tc (cls_bpf), XDP generic and XDP native: "
                "receive-side CPU time per packet, and the rate",
    reproduces="A's TC drop rule, extended to the whole ladder of drop points (the reference numbers: "
               "Cloudflare's drop ladder, the XDP paper)",
    toml=host_ladder(["drop-rate"], {rung: f'drop = "{rung}"' for rung in RUNGS}),
    sizing=Sizing(round_s=25, prepare_s=60, measured="from rpi-network's trial times of the same workloads (2-core x86-64 VM)"),
    needs_root=NETWORK_NEEDS_ROOT,
    found={"drop-rate": "Cloudflare: in-application drop ~171 kpps vs XDP ~10 Mpps on one CPU (~5,800 vs "
                        "~100 ns per packet); the XDP paper: XDP_DROP ~24 Mpps vs iptables raw ~4.8 Mpps per core "
                        "(~42 vs ~210 ns per packet)"},
)
