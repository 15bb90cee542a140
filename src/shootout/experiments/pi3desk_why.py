"""Why pi3desk's figures differ from E's, from what the run measured and knows.

Zeros: btrfs stores 1 GiB of zeros in 1/32 of its size (compsize here), so a 30 MB/s link would
carry ~960 MB/s of them; a zeros rate below that is set on this side of the link, by the
compressor and btrfs's write path on this machine's CPU, as E's 123 MB/s (far below its link's
960) was by a Pi 3's. The realistic corpus is shootout's own mix (inputs.write_corpus), which
compresses better than E's desktop data did; fio on a compressing btrfs runs buffered where ext4
runs with O_DIRECT (O_DIRECT there would write uncompressed), so its rows compare two I/O paths.
"""

from __future__ import annotations

from collections import Counter
from statistics import median
from typing import TYPE_CHECKING, Any

from shootout.workloads.inputs import CORPUS_KINDS

if TYPE_CHECKING:
    from shootout.judge.analysis import Analysis, Comparison

E_ZEROS_MBPS = 123  # E: 1 GiB of zeros, dd conv=fsync, btrfs compress=zlib, Pi 3 on a 30 MB/s link
E_ON_DISK = 0.63  # E's compsize: 8.8 GB of data in 5.6 GB on disk
E_ZLIB_ON_DISK = 0.42  # ... its zlib-compressed extents
E_CPU = "a Pi 3's four Cortex-A53 cores at 1.2 GHz"
AT_LINK = 0.90  # a rate at 90% or more of what the link carries at the file's ratio is bound by the link
KIND_NAMES = {"text": "text", "code": "C-like source", "binary": "binary records",
              "compressed": "random bytes standing in for compressed files"}


def comparison_of(analysis: Analysis, config: str, workload: str, metric: str) -> Comparison | None:
    """config's comparison with the baseline on one workload's metric (pi3desk's paragraph reads them too)."""
    return next((c for c in analysis.comparisons if c.workload == workload and c.metric == metric
                 and c.config == config), None)


def median_of(analysis: Analysis, config: str, workload: str, metric: str) -> float | None:
    comp = comparison_of(analysis, config, workload, metric)
    return comp.medians.get(config) if comp is not None else None


def _cpu(analysis: Analysis) -> str:
    machine: dict[str, Any] = analysis.facts.machine
    model = machine.get("cpu_model") or "this machine's CPU"
    clocks = [c[1] for c in machine.get("clock_mhz") or [] if len(c) > 1 and c[1]]
    return model + (f" (measured ~{median(clocks):,.0f} MHz)" if clocks else "")


def zeros(analysis: Analysis) -> list[str]:
    """Whether the zeros rates were the link's or the CPU's, and so why they are not E's 4.1×."""
    rows, allowed = [], []
    for config in analysis.configs[1:]:
        rate = median_of(analysis, config.name, "dd-write", "zeros_mbps")
        ratio = median_of(analysis, config.name, "dd-write", "zeros_compress_x")
        bps = (config.parts.get("throttle") or {}).get("bps")
        if not (rate and ratio and bps and ratio > 1):
            continue
        carried = bps / 1e6 * ratio
        allowed.append((bps / 1e6, ratio))
        bound = "the link" if rate >= AT_LINK * carried else "this side of the link"
        rows.append(f"{config.display} {rate:,.0f} MB/s ({rate / (bps / 1e6):.1f}× the link; at its compsize ratio "
                    f"{ratio:.2f}× the link carries {carried:,.0f} MB/s: set by {bound})")
    if not rows:
        return []
    link, ratio = allowed[0]
    cpu_bound = any("this side" in r for r in rows)
    line = "zeros: " + "; ".join(rows)
    if cpu_bound:
        line += (f". Below what the link carries, the compressor and btrfs's write path on this CPU set the rate: "
                 f"{_cpu(analysis)}")
    line += (f". E's {E_ZEROS_MBPS} MB/s ({E_ZEROS_MBPS / link:.1f}× its {link:g} MB/s link) was also far below the "
             f"{link * ratio:,.0f} MB/s its link would carry zeros at that ratio: set by {E_CPU}. "
             "The zeros rows compare CPUs, not the links; the realistic data compares the setups")
    return [line]


def corpus_mix() -> str:
    counts = Counter(CORPUS_KINDS)
    return ", ".join(f"{n / len(CORPUS_KINDS):.0%} {KIND_NAMES.get(k, k)}" for k, n in counts.items())


def corpus(analysis: Analysis) -> list[str]:
    """The realistic corpus against E's desktop data: how much each stored on disk."""
    stored = []
    links = [t["bps"] / 1e6 for c in analysis.configs if (t := c.parts.get("throttle"))]
    for config in analysis.configs[1:]:
        ratio = median_of(analysis, config.name, "dd-write", "corpus_compress_x")
        if ratio:
            stored.append(f"{config.display} {1 / ratio:.0%}")
    if not stored:
        return []
    return [f"realistic data: shootout's corpus ({corpus_mix()}) took {', '.join(stored)} of its size on disk; "
            f"E's desktop data took {E_ON_DISK:.0%} (its zlib extents {E_ZLIB_ON_DISK:.0%}): a desktop holds more "
            "already-compressed files (media, packages, archives) and its text squeezes less, so this corpus gains "
            "more over the link than E's data would"
            + (f"; at {E_ON_DISK:.0%} on disk a {links[0]:g} MB/s link carries at most {links[0] / E_ON_DISK:,.0f} MB/s "
               "of it" if links else "")]


def fio_paths(analysis: Analysis) -> list[str]:
    """fio's I/O mode per configuration, when it differs (the O_DIRECT pitfall on a compressing btrfs)."""
    modes = {c.display: analysis.facts.workload(c.name, "fio").get("direct")
             for c in analysis.configs}
    if None in modes.values() or len(set(modes.values())) < 2:
        return []
    direct = [n for n, d in modes.items() if d]
    buffered = [n for n, d in modes.items() if not d]
    ratio = [r for c in analysis.configs[1:] if (r := median_of(analysis, c.name, "fio", "compress_x"))]
    data = (f"; fio's data is incompressible (compsize {min(ratio):.2f}×), so its rows show no compression gain"
            if ratio and min(ratio) < 1.05 else "")
    return [f"fio: {', '.join(direct)} with O_DIRECT, {', '.join(buffered)} buffered with end_fsync (O_DIRECT on a "
            "compressing btrfs falls back to writes without compression: docs/writeups.md's pitfall, avoided): "
            "its random 4 KiB rows compare two I/O paths as well as the filesystems" + data]
