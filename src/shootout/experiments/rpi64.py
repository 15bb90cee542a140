"""docs/writeups.md, A, the CPU and memory part: "Run a 64-bit OS on your Raspberry Pi 4".

The write-up compared Raspbian (armv7) with Debian aarch64 on the same Pi 4: Dhrystone, SHA-1 of
a 2 GB sparse file, an mlock()ed RAM buffer written and read back (a 3 GB one worked in 64-bit
and ran out of memory in 32-bit), and lame and flac encoding of a 23.5-minute track on a ramfs. Here the two sides are the native userspace and its 32-bit
companion of the same Debian release on this machine's kernel (arm64/armhf on a Pi 4,
amd64/i386 on a PC). The network half of the write-up is the rpi-network experiment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import Experiment

if TYPE_CHECKING:
    from shootout.judge.analysis import Analysis, Comparison

# The write-up's 3 GB buffer (2,861 MiB), rounded up to maxalloc's 64 MiB step: the whole of it
# is asked for, so a side either gets it (refused 0) or not, and the verdict says which.
BUFFER_MIB = 2880
REPRODUCES = "A, 'Run a 64-bit OS on your Raspberry Pi 4' (Pi 4, Raspbian armv7 vs Debian aarch64)"
FOUND = {
    "intmix": "Dhrystone, 64-bit faster",
    "sha1-sparse": "SHA-1 of a 2 GB sparse file, 64-bit faster",
    "membw": "RAM written and read back (mlock), 64-bit faster",
    "maxalloc": "a 3 GB buffer worked in 64-bit and ran out of memory in 32-bit",
    "lame": "MP3 encoding, 64-bit faster",
    "flac": "FLAC encoding, 64-bit faster",
}


def _maxalloc(analysis: Analysis, comp: Comparison) -> str:
    """Not a speed: how much each side got of the buffer asked for, and in how many rounds."""
    by_id = {c.name: c.display for c in analysis.configs}
    refused = {a.config: a.values for a in analysis.amounts if a.workload == "maxalloc" and a.name == "refused"}

    def side(config: str) -> str:
        got = comp.medians.get(config)
        rounds = refused.get(config, ())
        whole = f", all of it in {sum(1 for v in rounds if not v)} of {len(rounds)} rounds" if rounds else ""
        return f"{by_id[config]} {got:,.0f} MiB{whole}" if got is not None else f"{by_id[config]} n/a"

    asked = next((r.params.get("maxalloc", {}).get("limit_mib") for r in analysis.runs), None) or BUFFER_MIB
    what = " (3 GB)" if asked == BUFFER_MIB else f" (not the write-up's 3 GB, {BUFFER_MIB:,} MiB)"
    return (f"largest buffer of the {asked:,} MiB asked for{what}: {side(comp.config)}; "
            f"{side(comp.baseline)}; verdict: {comp.verdict}")


EXPERIMENT = Experiment(
    name="rpi64",
    title="64-bit vs 32-bit userspace: CPU, RAM, audio",
    description="native 64-bit userspace vs its 32-bit companion: Dhrystone-style integers, SHA-1, "
                "RAM, the largest buffer, lame and flac (the CPU half of the 64-bit Raspberry Pi write-up)",
    reproduces=REPRODUCES,
    toml=f"""
[run]
workloads = ["intmix", "sha1-sparse", "membw", "maxalloc", "lame", "flac"]

[params.maxalloc]
limit_mib = {BUFFER_MIB}  # the write-up's 3 GB: asked for whole, touched once a trial

[params.lame]
minutes = 3  # the write-up's 23.5 took 1m25s a round with the rest (sizing.note)

[params.flac]
minutes = 3
""",
    sizing=Sizing(round_s=20, prepare_s=60, limit_s=8 * 60,
                  measured="2-core x86-64 VM, 2026-11-29, CPU 1 reserved, SHA-1 of 100 MB: rounds of 18.2-19.3 s "
                           "quiet and beside a load on both CPUs (busy 1.3 s, idle 1.7 s); with 2 GB, 2026-11-26: "
                           "rounds of 21 s, 24-52 s while others used 1.3 CPUs",
                  note="SHA-1 of 50 MB instead of the write-up's 2 GB (a rate: a longer trial pairs no better, "
                       "as noise that comes and goes over seconds outlasts one; it only costs time); "
                       "lame and flac on a 3-minute track instead of its "
                       "23.5-minute one: with that track a round took 1m25s on 2 cores (lame 14-24 s of CPU "
                       "a trial), and the 11 rounds a first verdict needs would not fit 8 minutes; an "
                       "encoder's speed per second of audio does not depend on the track's length"),
    writeup_params={"sha1-sparse": {"size": 2_000_000_000},  # its 2 GB
                    "lame": {"minutes": 23.5}, "flac": {"minutes": 23.5}},  # "Echoes", 23.5 minutes
    writeup_sizing=Sizing(round_s=126, prepare_s=60, limit_s=35 * 60,
                          measured="2-core x86-64 VM, 2026-11-28, at load 1.1-1.9: a warm-up of 124 s and a round "
                                   "of 126 s with the 23.5-minute track (lame 29-39 s a trial, flac 10-16 s); "
                                   "1m25s a round on 2026-11-26"),
    writeup_note="SHA-1 of the write-up's 2 GB; lame and flac encode its 23.5-minute track",
    found=FOUND,
    readings={"maxalloc": _maxalloc},
)
