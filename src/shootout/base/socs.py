"""What is known of a SoC that a machine may not say itself: data only, read by every layer."""

from __future__ import annotations

# Cache sizes per SoC where the kernel lists none under /sys (a Pi 4's does not), from the
# SoC makers' documentation; KiB, per core unless "shared". A SoC not here: "unknown".
KNOWN_CACHES: dict[str, dict[str, str]] = {
    "BCM2711": {"l1d": "32K", "l1i": "48K", "l2": "1024K shared"},  # Pi 4, Pi 400, CM4: Cortex-A72
    "BCM2712": {"l1d": "64K", "l1i": "64K", "l2": "512K", "l3": "2048K shared"},  # Pi 5: Cortex-A76
    "BCM2837": {"l2": "512K shared"},  # Pi 3B+: Cortex-A53 (its L1 sizes are not published)
}


def known_caches_kib(chip: str | None) -> dict[str, int]:
    """The SoC's known data/unified cache sizes in KiB per level ('l1'..'l3'); {} when unknown."""
    known = KNOWN_CACHES.get(chip or "", {})
    return {key[:2]: int(size.split("K")[0]) for key, size in known.items() if key != "l1i"}
