"""What the storage workloads share: the configuration's disk scratch, seen from a workload.

A storage workload writes only files it creates in the scratch, each trial in a fresh
directory it deletes before the trial ends (a btrfs file whose first range did not compress
is marked NOCOMPRESS for good, so a reused file would measure the previous trial). Before
deleting, on btrfs, it asks `compsize` what the trial's files take on disk, so the report
shows the compression ratio beside the throughput.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shootout.base.errors import ShootoutError, ToolMissing, WorkloadError
from shootout.base.model import Config, Metric
from shootout.places.target import Target
from shootout.storage.scratchspec import scratch_spec
from shootout.workloads.contract import Context, Workload
from shootout.workloads.shell import q

COMPSIZE_PACKAGE = "btrfs-compsize"
ALGORITHMS = ("none", "zlib", "lzo", "zstd")  # the "Type" rows compsize may print below TOTAL
_COMPSIZE_ROW = re.compile(r"^(\S+)\s+\d+%\s+(\d+)\s+(\d+)\s+(\d+)\s*$")


@dataclass(frozen=True)
class DiskScratch:
    path: str  # inside the target
    filesystem: str
    mount_options: str

    @property
    def btrfs(self) -> bool:
        return self.filesystem == "btrfs"

    @property
    def compresses(self) -> bool:
        """btrfs mounted with compress= or compress-force= (O_DIRECT would bypass the compressor)."""
        return self.btrfs and any(o.startswith("compress") for o in self.mount_options.split(","))

    def facts(self) -> dict[str, object]:
        return {"scratch_filesystem": self.filesystem, "scratch_mount_options": self.mount_options,
                "scratch_compresses": self.compresses}


def wants_compsize(config: Config) -> bool:
    """A scratch shootout makes as btrfs gets compsize into the userspace."""
    spec = scratch_spec(config)
    return spec is not None and spec.fs == "btrfs"


class ScratchWorkload(Workload):
    """A workload writing into the disk scratch: on a btrfs scratch shootout makes, it needs compsize."""

    def required_packages(self, target: Target) -> list[str]:
        return super().required_packages(target) + ([COMPSIZE_PACKAGE] if wants_compsize(target.config) else [])

    def check_tools(self, target: Target) -> None:
        super().check_tools(target)
        if wants_compsize(target.config) and target.which("compsize") is None:
            raise ToolMissing("compsize", COMPSIZE_PACKAGE, where=target.config.display)


def free_bytes(target: Target, path: str) -> int | None:
    """Free bytes where `path` lives, as the target sees it (a remote machine's or a VM's own
    disk too); None when it cannot tell."""
    try:
        result = target.run(["stat", "-f", "-c", "%a %S", path], timeout=60)
    except (ShootoutError, OSError):
        return None
    words = result.stdout.split()
    if result.exit_status != 0 or len(words) != 2 or not all(w.isdigit() for w in words):
        return None
    return int(words[0]) * int(words[1])


def open_disk(ctx: Context, need_bytes: int) -> DiskScratch:
    """The configuration's disk scratch, checked to have room for need_bytes on this side."""
    path = ctx.target.scratch("disk")
    facts = ctx.target.scratch_facts() or {}
    free = free_bytes(ctx.target, path)
    if free is not None:
        if need_bytes > free:
            raise WorkloadError(f"{ctx.name}: needs {need_bytes / 2**20:.0f} MiB in the scratch, "
                                f"{free / 2**20:.0f} MiB are free there",
                                "give the scratch a larger size = ... or the workload a smaller size_mib")
    return DiskScratch(path, str(facts.get("filesystem") or ""), str(facts.get("mount_options") or ""))


def fresh_dir_setup(scratch: DiskScratch) -> str:
    """sh: a fresh directory $d in the scratch, deleted when the script exits (also on failure)."""
    return f'd=$(mktemp -d {q(scratch.path)}/shootout-io.XXXXXX)\ntrap \'rm -rf "$d"\' EXIT'


def compsize_command(path: str, tag: str) -> str:
    """sh: what compsize says of path, each line prefixed 'compsize TAG ' (nothing when it fails)."""
    return f'compsize -b {path} 2>/dev/null | sed "s/^/compsize {tag} /" || true'


def parse_compsize(stdout: str, tag: str) -> dict[str, tuple[int, int]]:
    """compsize rows of one tag -> {TOTAL|algorithm: (disk bytes, uncompressed bytes)}."""
    rows = {}
    prefix = f"compsize {tag} "
    for line in stdout.splitlines():
        if line.startswith(prefix) and (m := _COMPSIZE_ROW.match(line.removeprefix(prefix).strip())):
            rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return rows


def compsize_metrics(prefix: str, what: str) -> tuple[Metric, ...]:
    """The metrics compsize_values records for one file or directory (names start with prefix)."""
    out = [Metric(f"{prefix}compress_x", "x", f"btrfs: uncompressed / disk bytes of {what} (compsize TOTAL)")]
    for algo in ALGORITHMS:
        out += [Metric(f"{prefix}{algo}_disk_mib", "MiB", f"btrfs: disk usage of {what}'s {algo} extents (compsize)"),
                Metric(f"{prefix}{algo}_raw_mib", "MiB", f"btrfs: uncompressed size of {what}'s {algo} extents")]
        if algo != "none":
            out.append(Metric(f"{prefix}{algo}_x", "x", f"btrfs: uncompressed / disk bytes of {what}'s {algo} extents"))
    return tuple(out)


def compsize_values(stdout: str, tag: str, prefix: str) -> dict[str, float]:
    """compsize's TOTAL ratio and its rows per algorithm (disk and uncompressed MiB, ratio) of one tag."""
    rows = parse_compsize(stdout, tag)
    values: dict[str, float] = {}
    if (total := rows.get("TOTAL")) and total[0] > 0:
        values[f"{prefix}compress_x"] = total[1] / total[0]
    for algo in ALGORITHMS:
        if (row := rows.get(algo)) is None:
            continue
        values[f"{prefix}{algo}_disk_mib"] = row[0] / 2**20
        values[f"{prefix}{algo}_raw_mib"] = row[1] / 2**20
        if algo != "none" and row[0] > 0:
            values[f"{prefix}{algo}_x"] = row[1] / row[0]
    return values
