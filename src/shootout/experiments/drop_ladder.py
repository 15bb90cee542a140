"""The packet-drop ladder (Cloudflare's "How to drop 10 million packets per second", and the
XDP paper's): where a 64-byte UDP frame dies in the receiving namespace, one rung per
configuration. The rungs are compared by the receive path's CPU time per packet (the headline);
the rate, counted at the receiver, is flagged where it sits at the generator's own ceiling. `shootout doctor` lists the rungs this kernel can do;
a configuration whose rung it cannot do is skipped with the reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import NETWORK_NEEDS_ROOT, Experiment, host_ladder
from shootout.net.rungs import RUNGS

if TYPE_CHECKING:
    from shootout.judge.analysis import Analysis
    from shootout.report.text import MetricRow

REPRODUCES = ("A's TC drop rule, extended to the whole ladder of drop points (the reference numbers: "
              "Cloudflare's drop ladder, the XDP paper)")
# docs/writeups.md, "Reference numbers from elsewhere": measured by others, not by the write-up (A)
REFERENCE = ("Cloudflare: in-application drop ~171 kpps vs XDP ~10 Mpps on one CPU (~5,800 vs ~100 ns per packet); "
             "the XDP paper: XDP_DROP ~24 Mpps vs iptables raw ~4.8 Mpps per core (~42 vs ~210 ns per packet)")


def _medians(analysis: Analysis, metric: str) -> tuple[MetricRow | None, dict[str, float]]:
    """drop-rate's row of one metric and its median per rung."""
    from shootout.report.text import metric_rows, row_medians

    row = next((r for r in metric_rows(analysis) if r.workload == "drop-rate" and r.metric == metric), None)
    return row, row_medians(analysis, row) if row is not None else {}


def _per_rung(analysis: Analysis, metric: str) -> str:
    """Each rung's median of one metric, the others' speed-up over the baseline rung beside theirs."""
    from shootout.report.text import fmt_estimate, fmt_value

    row, medians = _medians(analysis, metric)
    if row is None:
        return ""
    compared = {c.config: c for c in row.comparisons}
    parts = []
    for config in analysis.configs:
        comp = compared.get(config.name)
        judged = f" ({fmt_estimate(comp.estimate)}, {comp.verdict})" if comp is not None and row.headline else ""
        parts.append(f"{config.display} {fmt_value(medians.get(config.name), row.unit)}{judged}")
    return "; ".join(parts)


def _ceiling(analysis: Analysis) -> str:
    """'; the generator's own ceiling ...: 1,152.2-1,309.1 kpps', over the rungs' trials."""
    from shootout.report.text import fmt_value

    row, medians = _medians(analysis, "gen_ceiling_kpps")
    if row is None or not medians:
        return ""
    low, high = (fmt_value(f(medians.values()), row.unit) for f in (min, max))
    return f"; the generator's own ceiling (trafgen with nothing receiving): {low if low == high else f'{low} to {high}'}"


def explain(analysis: Analysis) -> list[str]:
    """The rungs' own figures in every layout (a narrow terminal's table shows ratios only), the
    generator's ceiling beside the rates, and the reference numbers said as what they are."""
    lines = [f"drop-ladder: {REPRODUCES}"]
    if cost := _per_rung(analysis, "rx_ns_per_packet"):
        lines.append(f"receive-side CPU time per packet here: {cost}")
    if rates := _per_rung(analysis, "kpps"):
        lines.append(f"rate counted at the receiver here: {rates}" + _ceiling(analysis))
    lines.append(f"reference numbers from elsewhere (measured by others on a NIC, not by the write-up): {REFERENCE}")
    return lines


EXPERIMENT = Experiment(
    name="drop-ladder",
    title="64-byte frames dropped from socket to XDP",
    description="64-byte UDP frames dropped at a socket, an nft rule, tc (cls_bpf), XDP generic and XDP native: "
                "receive-side CPU time per packet, and the rate",
    reproduces=REPRODUCES,
    toml=host_ladder(["drop-rate"], {rung: f'drop = "{rung}"' for rung in RUNGS}),
    sizing=Sizing(round_s=25, prepare_s=60, estimated=True,
                  measured="from rpi-network's trial times of the same workloads (2-core x86-64 VM)"),
    needs_root=NETWORK_NEEDS_ROOT,
    explainer=explain,
)
