"""docs/writeups.md, D, the kernel half: 32-bit kernel + 32-bit userspace, 64-bit kernel + 32-bit
userspace, 64-bit kernel + 64-bit userspace, on one machine.

The write-up rebooted a Pi between images and compared single unpaired runs; here the three
combinations are three VMs of Debian bookworm (i386 with the 686-pae kernel, i386 with the
amd64 kernel through multiarch, amd64), booted once per run with the same vCPUs, memory and
CPU model and measured in interleaved rounds. Its explanation ("the kernel mode determines
the page table structure… how much can be kept in the TLBs") is what ptrtree and memlat
probe; membw, 7zip and flac are the write-up's own. Needs hardware KVM: without it the run
is refused, and --emulate checks only that the three VMs work (no verdicts).

On a Raspberry Pi (3, 4 or 5) it is what the write-up did, across reboots: the sides are
kernel configurations that carry the userspace their trials run in (boots/pimodes.py), the
sides of one kernel share its boots, and each boot measures one block (measure/bootcampaign.py);
`--next-kernel` writes tryboot.txt (config.txt on a Pi 3) for the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import Experiment

if TYPE_CHECKING:
    from shootout.judge.analysis import Analysis

WORKLOADS = ["ptrtree", "memlat", "membw", "7zip", "flac"]


@dataclass(frozen=True)
class KernelModes(Experiment):
    root: Path = Path("/")  # where the board and its boot partition are read (a fake tree in tests)
    system: str = ""  # the system's Debian architecture (dpkg's); "" asks this machine

    def text(self) -> str:
        """Three VMs, or on a Raspberry Pi the kernels and userspaces its boots run."""
        from shootout.arm.board import pi_board

        model = (pi_board(self.root) or {}).get("model") or ""
        if not model.startswith("Raspberry Pi"):
            return super().text()
        from shootout.boots.partition import boot_partition
        from shootout.boots.pimodes import pi_sides, pi_toml
        from shootout.userspace.arches import host_arch

        sides = pi_sides(model, boot_partition(self.root), self.system or host_arch())
        return pi_toml(sides, WORKLOADS)

    def explain(self, analysis: Analysis) -> list[str]:
        """The write-up's lines, and on a Pi 5 that its 32/32 side cannot exist there."""
        from shootout.boots.pimodes import missing_sides

        lines = super().explain(analysis)
        return lines[:1] + missing_sides({c.name for c in analysis.configs}) + lines[1:]


EXPERIMENT = KernelModes(
    name="kernel-modes",
    title="32/32 vs 64/32 vs 64/64 kernel and userspace",
    description="32/32, 64-bit kernel + 32-bit userspace and 64/64 as three VMs of Debian bookworm "
                "(x86: 686-pae and amd64 kernels; on a Raspberry Pi its own kernels across reboots): pointer chasing, "
                "memory latency and bandwidth, 7-zip, FLAC",
    reproduces="D, 'Raspberry Pi OS: 32-bit vs 64-bit Benchmarking' (32/32, 64-bit kernel + 32-bit userspace, 64/64)",
    toml="""
[run]
configs = ["vm:debian:bookworm:i386:686-pae", "vm:debian:bookworm:i386:amd64", "vm:debian:bookworm:amd64:amd64"]
workloads = ["ptrtree", "memlat", "membw", "7zip", "flac"]
""",  # the same as WORKLOADS
    sizing=Sizing(round_s=40, prepare_s=180, estimated=True,
                  measured="a guess from these workloads' trial times on the host: no hardware KVM here to measure it"),
    found={
        "membw": "memory bandwidth: 32-bit won on the Pi 3B+",
        "7zip": "7-zip decompression preferred 32-bit code on both Pis",
        "flac": "FLAC: 64-bit slightly faster on the Pi 4",
    },
)
