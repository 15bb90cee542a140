"""docs/writeups.md, D, "Raspberry Pi OS: 32-bit vs 64-bit Benchmarking": mbw, and build times.

The write-up ran mbw (memory bandwidth) and timed building iozone3 on each system; on the Pi 3B+
the 32-bit system won both. Here the two sides are the native userspace and its 32-bit companion
on this machine's one kernel: Debian's own mbw in each (the program D named, not shootout's
membw), and each side's own compiler building iozone3 and 7-Zip's lzma program from Debian's source
packages (workloads/sourcebuild.py). The write-up built iozone3 only; 7-Zip it ran as a benchmark
(the `7zip` workload, in kernel-modes), so the 7-Zip build is this experiment's addition: a
larger C++ code base beside iozone's one big C file.
"""

from __future__ import annotations

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import Experiment

EXPERIMENT = Experiment(
    name="rpi-mbw-build",
    title="64-bit vs 32-bit userspace: mbw and builds",
    description="native 64-bit userspace vs its 32-bit companion: Debian's mbw, and the time to build iozone3 "
                "and 7-Zip with each side's compiler (the 32-vs-64-bit Raspberry Pi OS write-up)",
    reproduces="D, 'Raspberry Pi OS: 32-bit vs 64-bit Benchmarking' (Pi 3B+ and Pi 4: mbw, building iozone3)",
    toml="""
[run]
workloads = ["mbw", "iozone-build", "7zip-build"]
""",
    sizing=Sizing(round_s=15, prepare_s=60,
                  measured="2-core x86-64 VM, 2026-11-26, from a fresh home at load 1.2-1.7: userspaces made in 18 s, "
                           "rounds of 10 s (7-Zip's lzma built in 4 s a side); sized at 40 s a round, the run stopped "
                           "at its 14 rounds with mbw undecided; sized at 15 s, 17 rounds and 2 min 27 s in all"),
    found={
        "mbw": "memory bandwidth: 32-bit won on the Pi 3B+",
        "iozone-build": "building iozone3: 32-bit won on the Pi 3B+",
        "7zip-build": "no build of 7-zip (it ran the 7-zip benchmark: decompression preferred 32-bit code)",
    },
)
