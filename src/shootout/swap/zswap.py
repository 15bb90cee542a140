"""zswap: its parameters set through the journal, the compressors this kernel has, its statistics.

zswap is global: every change records the machine's original value first (once per
parameter) and the journal writes it back on exit and after a kill. The kernel accepts an
unknown compressor name while zswap is off and silently falls back to its default when it is
turned on ("compressor lz4 not available, using default lzo"), so what is in force is always
read back and compared, never assumed. Kernels since 6.15 have no zpool parameter (zsmalloc
only); where it exists it is set and read back like the others.
"""

from __future__ import annotations

import os
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.execution.fsread import read_key_values, read_text, under
from shootout.system.journal import Journal
from shootout.system.mounts import mount

PARAMS = "/sys/module/zswap/parameters"
DEBUGFS = "/sys/kernel/debug"
FIXED_ZPOOL = "zsmalloc"  # the only pool on kernels without the zpool parameter
# Order of writes: pool settings first, `enabled` last; turning off comes first.
ORDER = ("compressor", "zpool", "max_pool_percent", "accept_threshold_percent", "shrinker_enabled", "enabled")
DEBUG_STATS = ("stored_pages", "pool_total_size", "written_back_pages", "reject_compress_poor",
               "reject_compress_fail", "reject_alloc_fail", "reject_kmemcache_fail", "reject_reclaim_fail",
               "pool_limit_hit")


def present(root: Path = Path("/")) -> bool:
    return under(root, PARAMS).is_dir()


def parameters(root: Path = Path("/")) -> dict[str, str]:
    """Every zswap parameter as the kernel shows it now."""
    base = under(root, PARAMS)
    return {p.name: read_text(root, p) or "" for p in sorted(base.iterdir())} if base.is_dir() else {}


def compressors(root: Path = Path("/")) -> list[str]:
    """Compression algorithms the crypto API has registered (/proc/crypto), plus any it could
    load as a module; zswap can use exactly these."""
    names: set[str] = set()
    name = ""
    for line in (read_text(root, "/proc/crypto") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "name":
            name = value.strip()
        elif key.strip() == "type" and value.strip() in ("acomp", "scomp", "compression"):
            names.add(name)
    modules = under(root, f"/lib/modules/{os.uname().release}/kernel/crypto")
    if modules.is_dir():
        names.update(p.name.split(".ko")[0] for p in modules.glob("*.ko*")
                     if p.name.split(".ko")[0] in {"lz4", "lz4hc", "zstd", "842", "lzo", "lzo-rle", "deflate"})
    return sorted(names)


def check(settings: dict[str, str], root: Path = Path("/")) -> str | None:
    """Why these settings cannot be used on this kernel, in one line; None if they may."""
    if not present(root):
        return "this kernel has no zswap (/sys/module/zswap is missing; it needs CONFIG_ZSWAP)"
    have = parameters(root)
    compressor = settings.get("compressor")
    if compressor and compressor not in (known := compressors(root)):
        return f"zswap: this kernel has no compressor {compressor!r} (it has: {', '.join(known) or 'none listed'})"
    zpool = settings.get("zpool")
    if zpool and "zpool" not in have and zpool != FIXED_ZPOOL:
        return f"zswap: this kernel has no zpool choice ({FIXED_ZPOOL} only), {zpool!r} asked"
    unknown = [k for k in settings if k not in have and k != "zpool"]
    if unknown:
        return f"zswap: this kernel has no parameter {unknown[0]!r} (it has: {', '.join(have)})"
    return None


def in_force(root: Path = Path("/")) -> dict[str, str]:
    """The parameters read back, with the zpool made explicit where the kernel has no choice."""
    params = parameters(root)
    params.setdefault("zpool", f"{FIXED_ZPOOL} (fixed)")
    return params


class Zswap:
    """Sets zswap parameters; the first change of each one journals the machine's value."""

    def __init__(self, journal: Journal, root: Path = Path("/")) -> None:
        self.journal = journal
        self.root = root
        self.original = parameters(root)
        self._entries: dict[str, int] = {}  # parameter -> the journal entry that writes it back

    def _write(self, name: str, value: str) -> None:
        path = under(self.root, f"{PARAMS}/{name}")
        if name not in self._entries:
            self._entries[name] = self.journal.record(f"zswap {name} (was {self.original[name]})",
                                                      {"write": str(path), "content": self.original[name]})
        try:
            path.write_text(value)
        except OSError as exc:
            raise TargetError(f"zswap refused {name} = {value!r}: {exc.strerror or exc}",
                              f"compressors here: {', '.join(compressors(self.root))}") from None

    def set(self, wanted: dict[str, str]) -> dict[str, str]:
        """Make `wanted` be in force (only what differs is written); returns what is in force.

        TargetError when the kernel does not keep a value; zswap is then put back as the
        machine had it, so nothing is left active."""
        wanted = {k: v for k, v in wanted.items() if not (k == "zpool" and "zpool" not in self.original)}
        now = parameters(self.root)
        order = sorted(wanted, key=ORDER.index)  # `enabled` last when turning on...
        if wanted.get("enabled") == "N":  # ...and first when turning off
            order = ["enabled", *order[:-1]]
        try:
            for name in order:
                if now.get(name) != wanted[name]:
                    self._write(name, wanted[name])
            got = parameters(self.root)
            wrong = [k for k in wanted if got.get(k) != wanted[k]]
            if wrong:
                k = wrong[0]
                raise TargetError(f"zswap did not keep {k} = {wanted[k]!r} (in force: {got.get(k)!r})",
                                  f"compressors here: {', '.join(compressors(self.root))}")
        except BaseException:
            self.restore()
            raise
        return in_force(self.root)

    def restore(self) -> list[str]:
        """Put back every parameter this object changed (`enabled` first), through the journal."""
        errors: list[str] = []
        for name in sorted(self._entries, key=lambda n: (n != "enabled", ORDER.index(n))):
            errors += self.journal.undo_entry(self._entries.pop(name))
        return errors


def debugfs_mounted(root: Path = Path("/")) -> bool:
    return under(root, f"{DEBUGFS}/zswap").is_dir()


def statistics(root: Path = Path("/")) -> dict[str, int]:
    """zswap's counters: debugfs where mounted (stored_pages, pool_total_size, ...), and the
    pool size and stored size from /proc/meminfo, and swap-in/out/writeback from /proc/vmstat."""
    out: dict[str, int] = {}
    if debugfs_mounted(root):
        for name in DEBUG_STATS:
            text = read_text(root, f"{DEBUGFS}/zswap/{name}")
            if text is not None and text.isdigit():
                out[name] = int(text)
    meminfo = read_key_values(root, "/proc/meminfo")
    for key, name in (("Zswap", "pool_bytes"), ("Zswapped", "stored_bytes")):
        if key in meminfo:
            out[name] = int(meminfo[key].split()[0]) * 1024
    vmstat = read_key_values(root, "/proc/vmstat", sep=" ")
    for key in ("zswpin", "zswpout", "zswpwb"):
        if key in vmstat:
            out[key] = int(vmstat[key])
    return out


def mount_debugfs(journal: Journal, root: Path = Path("/")) -> int | None:
    """Mount debugfs (through the journal) so zswap's own counters can be read; returns the
    journal entry, or None when debugfs is mounted already or this kernel has none."""
    if debugfs_mounted(root) or "debugfs" not in (read_text(root, "/proc/filesystems") or ""):
        return None
    return mount(journal, f"mount debugfs at {DEBUGFS} (zswap statistics)",
                 ["mount", "-t", "debugfs", "debugfs", str(under(root, DEBUGFS))], under(root, DEBUGFS))
