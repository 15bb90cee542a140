"""docs/writeups.md, A, the CPU and memory part: "Run a 64-bit OS on your Raspberry Pi 4".

The write-up compared Raspbian (armv7) with Debian aarch64 on the same Pi 4: Dhrystone, SHA-1 of
a 2 GB sparse file, an mlock()ed RAM buffer written and read back, and lame and flac encoding
of a 23.5-minute track on a ramfs. Here the two sides are the native userspace and its 32-bit
companion of the same Debian release on this machine's kernel (arm64/armhf on a Pi 4,
amd64/i386 on a PC). The network half of the write-up is the rpi-network experiment.
"""

from shootout.experiments.base import Experiment

EXPERIMENT = Experiment(
    name="rpi64",
    description="native 64-bit userspace vs its 32-bit companion: Dhrystone-style integers, SHA-1, "
                "RAM, lame and flac (the CPU half of the 64-bit Raspberry Pi write-up)",
    reproduces="A, 'Run a 64-bit OS on your Raspberry Pi 4' (Pi 4, Raspbian armv7 vs Debian aarch64)",
    toml="""
[run]
workloads = ["intmix", "sha1-sparse", "membw", "lame", "flac"]

[params."sha1-sparse"]
size = 2000000000  # the write-up's 2 GB
""",
    found={
        "intmix": "Dhrystone, 64-bit faster",
        "sha1-sparse": "SHA-1 of a 2 GB sparse file, 64-bit faster",
        "membw": "RAM written and read back (mlock), 64-bit faster",
        "lame": "MP3 encoding, 64-bit faster",
        "flac": "FLAC encoding, 64-bit faster",
    },
)
