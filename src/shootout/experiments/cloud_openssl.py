"""C: ARM against Intel cloud instances with `openssl speed -multi`, and performance per price.

The user names the machines (-c ssh:HOST, or groups of instances from --file) and their
prices (--price NAME=PRICE); the run measures the write-up's algorithms at its 16384-byte
blocks on every machine at once (lanes.py), -multi with each machine's own CPUs, and the report
sets the kB/s beside the write-up's and divides each speed-up by the price ratio, interval
included."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import Experiment
from shootout.workloads.crypto import NOEVP_PATHS, metric_name

if TYPE_CHECKING:
    from shootout.judge.analysis import Analysis

ALGORITHMS = ("md5", "sha256", "aes-128-cbc", "aes-192-cbc", "aes-256-cbc", "bf-cbc")
# The write-up swept 16-16384-byte blocks; its figures, the headline and the per-price line are at
# 16384 bytes, and the sweep made a round six times as long (see the sizing note).
SIZES = (16384,)
WRITEUP_SIZES = (16, 64, 256, 1024, 8192, 16384)  # its sweep, with openssl speed's own 3 s per test
# docs/writeups.md, section C: kB/s at 16384-byte blocks, openssl speed -multi 16
WRITEUP = {
    "sha256": {"a1.4xlarge": 18_250_851, "m5.4xlarge": 3_480_366, "c5.4xlarge": 3_818_106},
    "aes-128-cbc": {"a1.4xlarge": 1_768_281, "m5.4xlarge": 1_143_499, "c5.4xlarge": 1_254_206},
    "md5": {"a1.4xlarge": 5_963_896, "m5.4xlarge": 8_071_796, "c5.4xlarge": 8_855_148},
    "bf-cbc": {"a1.4xlarge": 1_540_768, "m5.4xlarge": 1_928_681},
}
WRITEUP_PRICES = "a1.4xlarge $0.408/h, m5.4xlarge $0.768/h, m5.2xlarge $0.384/h, c5.4xlarge $0.68/h"
TOML = f"""
[run]
workloads = ["openssl-speed"]

[params.openssl-speed]
algorithms = [{", ".join(f'"{a}"' for a in ALGORITHMS)}]
sizes = [{", ".join(map(str, SIZES))}]
multi = true
threads = 0  # -multi with as many processes as each machine has CPUs
forms = ["evp", "noevp"]  # -evp ALG (the headline), and ALG alone as the write-up named them
"""


def _metric(alg: str, size: int, form: str = "evp") -> str:
    return metric_name(alg, size, True, form)


def _by_path() -> dict[str, list[str]]:
    """The code path each form takes, with the write-up's algorithms that take it."""
    out: dict[str, list[str]] = {}
    for alg in ALGORITHMS:
        if alg in NOEVP_PATHS:
            out.setdefault(NOEVP_PATHS[alg], []).append(alg)
    return out


def _kbs(value: float) -> str:
    return f"{value:,.0f}"


def _crypto_instructions(analysis: Analysis) -> list[str]:
    """Each measured machine's AES and SHA instructions, beside the write-up's instances': the
    a1's Graviton has the ARMv8 crypto extensions (AES, SHA-1, SHA-256), the m5's Xeon AES-NI but
    no SHA extensions, which is most of the write-up's 5x on sha256."""
    found = []
    for config in analysis.configs:
        flags = set(analysis.facts.side_value(config.name, "target", "machine", "cpu_flags", default=[]))
        if flags:
            has = sorted(flags & {"aes", "sha_ni", "sha1", "sha2"})
            found.append(f"{config.display} {', '.join(has) if has else 'none'}")
    if not found:
        return []
    return ["AES and SHA instructions of the machines measured: " + "; ".join(found) + " (the write-up's a1.4xlarge: "
            "ARMv8 crypto extensions, AES and SHA-256 in hardware; m5.4xlarge and c5.4xlarge: AES-NI, no SHA "
            "extensions)"]


def explain(analysis: Analysis) -> list[str]:
    lines = [f"cloud-openssl: {EXPERIMENT.reproduces} ({EXPERIMENT.cited})",
             "kB/s with openssl speed -multi (as many processes as the machine has CPUs), median over the rounds "
             "(and a group's machines):"]
    for config in analysis.configs:
        for alg in ALGORITHMS:
            for form, said in (("evp", "-evp"), ("noevp", "without -evp")):
                cells = [f"{size}: {_kbs(statistics.median(v))}" for size in WRITEUP_SIZES
                         if (v := analysis.values.get(("openssl-speed", _metric(alg, size, form), config.name)))]
                if cells:
                    lines.append(f"  {config.display}, {alg} {said}: " + ", ".join(cells))
    lines.append("the write-up named the algorithms without -evp; " + "; ".join(
        f"{', '.join(algs)}: {path}" for path, algs in _by_path().items()))
    for alg, found in WRITEUP.items():
        lines.append(f"  the write-up at 16384 bytes, {alg}: "
                     + ", ".join(f"{kind} {_kbs(v)}" for kind, v in found.items()))
    lines += _crypto_instructions(analysis)
    run = analysis.runs[0]
    prices, unit = run.settings.prices, run.settings.price_unit
    base = analysis.configs[0]
    if not prices or base.name not in prices:
        return lines + ["performance per price: no prices stored with the run (run --price NAME=PRICE)"]
    lines.append(f"performance per price against {base.display} ({prices[base.name]:g} {unit}), speed-up divided "
                 f"by the price ratio, with its interval (the write-up's prices: {WRITEUP_PRICES}):")
    wanted = {"geomean_16384_mt": "geomean of the algorithms at 16384 bytes", **{_metric(a, 16384): a for a in ALGORITHMS}}
    for config in analysis.configs[1:]:
        if config.name not in prices:
            continue
        ratio = prices[config.name] / prices[base.name]
        cells = []
        for comp in analysis.comparisons:
            if comp.config != config.name or comp.metric not in wanted or comp.estimate is None:
                continue
            est = comp.estimate
            cells.append(f"{wanted[comp.metric]} {est.ratio / ratio:.2f}x [{est.low / ratio:.2f}, {est.high / ratio:.2f}]"
                         + (f" ({', '.join(comp.flags)})" if comp.flags else ""))
        lines.append(f"  {config.display} ({prices[config.name]:g} {unit}, {ratio:.2f}x the price): "
                     + ("; ".join(cells) or "no interval (too few rounds)"))
    return lines


EXPERIMENT = Experiment(
    name="cloud-openssl",
    title="openssl speed per price on machines you name",
    description="openssl speed -multi on the machines you name (ssh, groups of instances), kB/s and performance "
                "per price",
    reproduces="C, ARM vs Intel cloud instances: openssl speed -multi, and performance per price",
    toml=TOML,
    sizing=Sizing(round_s=30, prepare_s=30, estimated=True,
                  measured="two local ssh machines in parallel on a 2-core x86-64 VM, 2026-11-26: rounds of 12 s "
                           "with -evp alone, a verdict at round 11, 139 s in all (benchmarks/cloud_openssl_local.py); "
                           "twice that with the forms without -evp beside it; openssl speed -seconds sets the "
                           "round, so 16-vCPU instances take as long",
                  note="16384-byte blocks only, where the write-up's figures, the headline and performance per "
                       "price are read (its sweep over 16-16384 bytes: shootout run -w openssl-speed on the same "
                       "machines, without --experiment), and 1 s per algorithm instead of openssl's 3 s: "
                       "the sweep made rounds of 73 s, and the 11 rounds a first verdict needs took over 12 "
                       "minutes"),
    writeup_params={"openssl-speed": {"sizes": list(WRITEUP_SIZES), "seconds": 3}},
    writeup_sizing=Sizing(round_s=440, prepare_s=30, limit_s=120 * 60, estimated=True,
                          measured="estimated from its measured sweep: rounds of 73 s at 1 s a test with -evp alone, "
                                   "three times that at openssl's 3 s, twice that with both forms"),
    writeup_note="openssl's six block sizes, 16-16384 bytes, at its own 3 s per test",
    explainer=explain,
    machines=True,
)
