"""zram devices of shootout's own: added, configured and formatted through the journal, then
reset and removed. The machine's own zram devices are never touched.

A zram device is compressed RAM, created here through /sys/class/zram-control/hot_add: it is
the one block device shootout writes to (mkswap), and only to devices it added itself.
The kernel chooses the device number when hot_add is read, so the journal entry that removes
the device can only be written right after; a kill in that instant leaves an empty,
unconfigured device (no memory in use) that `zramctl` shows and `shootout doctor` cannot know.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.execution.fsread import read_text, under
from shootout.swap import swaps
from shootout.system.journal import Journal

CONTROL = "/sys/class/zram-control"
MM_STAT = ("orig_data_size", "compr_data_size", "mem_used_total", "mem_limit", "mem_used_max",
           "same_pages", "pages_compacted", "huge_pages", "huge_pages_since")
IO_STAT_FAILED_WRITES = 1  # io_stat: failed_reads failed_writes invalid_io notify_free

# Reset and remove the device if it still exists (replayed after a kill it may be gone). The
# kernel refuses both while the device is open (a swap area still on): its journal entry is
# then kept, and tried again after the swapoff (system.journal).
_REMOVE = ('d=/sys/block/zram$1; [ -e "$d" ] || exit 0; '
           'echo 1 2>/dev/null > "$d/reset" || { echo "zram$1 is in use, the kernel refused its reset" >&2; exit 1; }; '
           'echo "$1" > /sys/class/zram-control/hot_remove')


def present(root: Path = Path("/")) -> bool:
    return under(root, f"{CONTROL}/hot_add").exists()


def absent_reason() -> str:
    return "this kernel has no zram (/sys/class/zram-control is missing; load the zram module: modprobe zram)"


def algorithms(text: str) -> list[str]:
    """'lzo [lzo-rle] lz4' (comp_algorithm) -> the names, the one in force without brackets."""
    return [name.strip("[]") for name in text.split()]


def any_algorithms(root: Path = Path("/")) -> list[str] | None:
    """The algorithms an existing zram device offers (they are the same for every device)."""
    for path in sorted(under(root, "/sys/block").glob("zram*/comp_algorithm")):
        if (text := read_text(root, path)) is not None:
            return algorithms(text)
    return None


@dataclass(frozen=True)
class ZramDevice:
    number: int
    entry: int  # the journal entry that resets and removes it

    @property
    def dev(self) -> str:
        return f"/dev/zram{self.number}"

    def sysfs(self, root: Path = Path("/")) -> Path:
        return under(root, f"/sys/block/zram{self.number}")


def _set(device: ZramDevice, name: str, value: str, root: Path) -> None:
    path = device.sysfs(root) / name
    try:
        path.write_text(value)
    except OSError as exc:
        offered = algorithms(read_text(root, device.sysfs(root) / "comp_algorithm") or "")
        hint = f"zram here offers: {', '.join(offered)}" if name == "comp_algorithm" else "see dmesg"
        raise TargetError(f"zram{device.number} refused {name} = {value!r}: {exc.strerror or exc}", hint) from None


def add(journal: Journal, disksize: int, compressor: str | None, mem_limit: int | None,
        root: Path = Path("/")) -> ZramDevice:
    """A new zram device of `disksize` bytes (uncompressed), formatted as swap, not yet active."""
    if not present(root):
        raise TargetError(absent_reason())
    try:
        number = int(under(root, f"{CONTROL}/hot_add").read_text())
    except OSError as exc:
        raise TargetError(f"cannot add a zram device: {exc.strerror or exc}", "run as root") from None
    entry = journal.record(f"zram device zram{number}",
                           {"argv": ["sh", "-c", _REMOVE, "shootout-zram-remove", str(number)]})
    device = ZramDevice(number, entry)
    try:
        if compressor:
            _set(device, "comp_algorithm", compressor, root)
        if mem_limit:
            _set(device, "mem_limit", str(mem_limit), root)
        _set(device, "disksize", str(disksize), root)
        for _ in range(100):  # devtmpfs makes the node; give it a moment
            if Path(device.dev).exists():
                break
            time.sleep(0.01)
        swaps.mkswap(device.dev)
        _check(device, compressor, mem_limit, root)
    except BaseException:
        journal.undo_entry(entry)
        raise
    return device


def page_aligned(size: int) -> int:
    """The kernel keeps a mem_limit in whole pages, rounded up (and mm_stat shows it so)."""
    page = os.sysconf("SC_PAGE_SIZE")
    return -(-size // page) * page


def _check(device: ZramDevice, compressor: str | None, mem_limit: int | None, root: Path) -> None:
    """Read the device back: a setting it did not keep would measure another setup than asked."""
    held = state(device, root)
    wanted = {"comp_algorithm": compressor, "mem_limit": page_aligned(mem_limit) if mem_limit else None}
    for name, value in wanted.items():
        if value is not None and held.get(name) != value:
            raise TargetError(f"zram{device.number} did not keep {name} = {value!r} (it holds {held.get(name)!r})",
                              "see dmesg")


def state(device: ZramDevice, root: Path = Path("/")) -> dict[str, object]:
    """What is in force on the device: algorithm, sizes, its memory use (mm_stat) and the
    writes it refused (io_stat: a write that would pass mem_limit fails, and the page stays)."""
    base = device.sysfs(root)
    offered = read_text(root, base / "comp_algorithm") or ""
    in_force = next((n.strip("[]") for n in offered.split() if n.startswith("[")), "")
    fields = (read_text(root, base / "mm_stat") or "").split()
    io = (read_text(root, base / "io_stat") or "").split()
    return {"device": device.dev, "comp_algorithm": in_force,
            "disksize": int(read_text(root, base / "disksize") or 0),
            **{k: int(v) for k, v in zip(MM_STAT, fields, strict=False)},
            **({"failed_writes": int(io[IO_STAT_FAILED_WRITES])} if len(io) > IO_STAT_FAILED_WRITES else {})}


def restart_peak(device: ZramDevice, root: Path = Path("/")) -> None:
    """mem_used_max from now on (the kernel sets it to the memory in use): one trial's exact
    peak, which a sampler a few times a second could miss."""
    _set(device, "mem_used_max", "0", root)
