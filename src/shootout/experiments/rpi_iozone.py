"""docs/writeups.md, D, the storage part of "Raspberry Pi OS: 32-bit vs 64-bit Benchmarking":
iozone3 on the SD card and a USB3 SSD, `iozone -e -I -a -s 100M -r 4k -r 512k -r 16M -i 0 -i 1 -i 2`.

Here the two sides are the native userspace and its 32-bit companion on this machine's kernel,
writing into the same kind of scratch (a directory under /var/tmp unless the user's shootout.toml
says otherwise). The write-up's 64-bit advantage on the Pi 4 came from the 64-bit *kernel*
reading the USB3 SSD faster; with one kernel for both sides, a userspace difference in I/O
should be small, and the report says whether it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shootout.experiments.base import Experiment
from shootout.experiments.sizing import Sizing

if TYPE_CHECKING:
    from shootout.analysis import Analysis

# Not this write-up's (D gives its iozone results as charts, no figures in the text restated in
# docs/writeups.md): E's (Pi3Desk's) Pi 3 figures, USB SSD and SD card, kB/s, 4k records, for scale.
PUBLISHED = {"write_4k": (10885, 3061), "read_4k": (11881, 9279), "randwrite_4k": (9815, 3346)}


def explain(analysis: Analysis) -> list[str]:
    by_id = {c.name: c.display for c in analysis.configs}
    lines = ["rpi-iozone: D, 'Raspberry Pi OS: 32-bit vs 64-bit' (iozone3 on SD card and USB3 SSD): "
             "on the Pi 4 the 64-bit kernel read the USB3 SSD much faster; on the 3B+ 32-bit won USB SSD I/O"]
    for comp in analysis.comparisons:
        if comp.workload != "iozone" or (comp.metric not in PUBLISHED and not comp.headline):
            continue
        measured = ", ".join(f"{by_id[c]} {v:,.0f} KiB/s" for c, v in comp.medians.items())
        text = f"{comp.metric}: {measured}; {by_id[comp.config]} vs {by_id[comp.baseline]} "
        text += f"{comp.estimate.ratio:.2f}× [{comp.estimate.low:.2f}, {comp.estimate.high:.2f}]" if comp.estimate else "n/a"
        if comp.metric in PUBLISHED:
            ssd, sd = PUBLISHED[comp.metric]
            text += (f"; D gives no figure; for scale, E (Pi3Desk, a Pi 3 on USB2): USB SSD {ssd:,} kB/s, "
                     f"SD card {sd:,} kB/s")
        lines.append(text)
    lines.append("One kernel serves both userspaces here, so this isolates the userspace's share; "
                 "the Pi 4's 64-bit gain came from its kernel's USB3 driver, which this cannot show.")
    return lines


EXPERIMENT = Experiment(
    name="rpi-iozone",
    description="iozone's published matrix in the native 64-bit userspace vs its 32-bit companion "
                "(the storage part of the 32-vs-64-bit Raspberry Pi write-up)",
    reproduces="D, 'Raspberry Pi OS: 32-bit vs 64-bit Benchmarking' (iozone3, SD card and USB3 SSD)",
    toml="""
[run]
workloads = ["iozone"]

[params.iozone]
size_mib = 100
""",
    sizing=Sizing(round_s=30, prepare_s=60, measured="a guess: not yet measured as a whole here"),
    found={"iozone": "Pi 4: 64-bit kernel reads the USB3 SSD much faster; Pi 3B+: 32-bit wins USB SSD I/O"},
    explainer=explain,
)
