"""What a desktop and a build do to a disk: unpack a source tree of many small files into the
scratch, stat them, read them, delete them; files per second of the whole cycle (the headline)
and of each step.

The headline is the cycle's: files / (create + stat + read + delete seconds), the time the work
takes, each step weighted by its time, as a user waits for it. The geometric mean of the four
steps' rates (the headline before) stays as a sub-metric: it weighs a stat pass of ~6 ms like
an unpack of ~350 ms, and the two short, CPU-bound steps (stat, delete) vary 9-15% from trial
to trial on a 2-core VM where the link-bound unpack and read vary 0.4-6%, so the short steps
set its noise (benchmarks/results/storage-rpi-iozone-pi3desk.txt, pi3desk).

The tree is generated (the compress workload's corpus cut into files of 1-16 KiB, 100 to a
directory) and unpacked from an uncompressed tar in the work directory (tmpfs), so tar's own
cost is small beside the filesystem's. Each step that writes ends with `sync -f`, so what it
dirtied is written inside its own time, every trial alike: create and delete, and read too,
whose first reading of a freshly unpacked file updates its atime (relatime: ctime >= atime), a
metadata write per file; left unsynced, those were written wherever a commit fell (btrfs every
30 s, ext4's journal every 5 s, or delete's own sync). A trial starts from a synced scratch
(untimed), so nothing an earlier trial left is written inside it, and then sends PRIME_MIB of
random data through the link and deletes it (untimed too): the cgroup throttle that emulates a
slow link lets a burst through after the device was idle. Unprimed, ext4's unpack of 1,000
files took 149-268 ms when it was the first trial after the round's fstrim and ~310 ms
otherwise; primed, 372-396 ms, the link's rate: the timed steps measured the throttle's credit,
the main noise of ext4's cycle (cv 0.05-0.08 unprimed, 0.010 primed). Before the read step every
file's cached pages are dropped (`dd iflag=nocache count=0`, coreutils' documented way for one
file), so reading reaches the device instead of measuring RAM; stat may still find the inodes
cached, as on a real machine after an unpack.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from statistics import geometric_mean
from typing import Any

from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.workloads import inputs, shell
from shootout.workloads.contract import Context, Prepared, Tool
from shootout.workloads.diskscratch import (
    ScratchWorkload,
    compsize_command,
    compsize_metrics,
    compsize_values,
    fresh_dir_setup,
    open_disk,
)
from shootout.workloads.shell import Step, step_seconds

STEPS = ("create", "stat", "read", "delete")
PER_DIR = 100
PRIME_MIB = 8  # untimed, before the unpack: more than the 3-5 MB a 30 MB/s throttle let through early


def write_tree_tar(path: Path, files: int, seed: int = 1) -> None:
    """An uncompressed tar of `files` files cut from the corpus: sizes 1-16 KiB, PER_DIR per directory."""
    corpus = inputs.corpus(max(1, files * 16 // 1024 + 1), seed).path.read_bytes()
    rng = inputs.Rng(seed, 7)
    sizes = 1024 + rng.below(files, 15 * 1024)
    offset = 0
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for i, size in enumerate(sizes):
            info = tarfile.TarInfo(f"tree/d{i // PER_DIR:04d}/f{i:06d}.c")
            info.size, info.mtime = int(size), 0
            tar.addfile(info, io.BytesIO(corpus[offset:offset + int(size)]))
            offset += int(size)


def tree_tar(files: int) -> inputs.Input:
    return inputs.cached("tree", "tar", {"files": files, "v": 1}, lambda p: write_tree_tar(p, files))


class SmallFiles(ScratchWorkload):
    spec = WorkloadSpec(
        name="small-files",
        category="storage",
        description="unpack, stat, read and delete a tree of small files in the scratch "
                    "(files/s of the whole cycle; each step's beside)",
        metrics=(Metric("cycle_files_s", "items/s", "files through the whole cycle (unpack, stat, read, delete) "
                        "per second of its total time: how long the work takes"),
                 Metric("geomean", "items/s", "geometric mean of the four steps' files per second"),
                 *(Metric(f"{s}_files_s", "items/s", f"{s}: files per second") for s in STEPS),
                 *compsize_metrics("tree_", "the tree")),
        headline="cycle_files_s",
        reproduces="E: does a compressing btrfs make a desktop's real work faster?",
    )
    tools = (Tool("tar", "tar"), Tool("find", "findutils"), Tool("dd", "coreutils"), Tool("sync", "coreutils"),
             Tool("date", "coreutils"), Tool("bash", "bash"), Tool("head", "coreutils"))
    quick = {"files": 500}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"files": 5000}

    def prepare(self, ctx: Context) -> Prepared:
        tar = tree_tar(int(ctx.params["files"]))
        scratch = open_disk(ctx, 2 * tar.size + PRIME_MIB * 2**20)
        src = inputs.place(ctx.target, tar)
        # `a; b`, not `a && b`: under set -e a failing tar or rm must end the trial
        steps = [Step("create", f'tar -xf {src} -C "$d"; sync -f "$d"'),
                 Step("stat", 'find "$d/tree" -type f -exec stat -c %s {} + > /dev/null'),
                 Step("read", 'find "$d/tree" -type f -exec cat {} + > /dev/null; sync -f "$d"'),
                 Step("delete", 'rm -rf "$d/tree"; sync -f "$d"')]
        # Untimed, between stat and read: drop each file's cached pages; compsize before delete.
        drop = "find \"$d/tree\" -type f -exec sh -c 'for f; do dd if=\"$f\" iflag=nocache count=0 status=none; done' sh {} +"
        between = "\n".join(([compsize_command('"$d/tree"', "tree")] if scratch.btrfs else []) + [drop])
        # Untimed: what earlier trials left is written now, then PRIME_MIB of incompressible data
        # through the link, so the timed unpack never starts on credit a throttle kept from idleness
        prime = (f'head -c {PRIME_MIB * 2**20} /dev/urandom > "$d/prime"; sync -f "$d"; '
                 'rm -f "$d/prime"; sync -f "$d"')
        setup = fresh_dir_setup(scratch) + '\nsync -f "$d"\n' + prime
        script = shell.script(steps[:2], setup=setup, after=between) + "\n" + shell.script(steps[2:])
        return Prepared(files={"script": ctx.put("trial.sh", script)},
                        facts={**scratch.facts(), "input_sha256": tar.sha256},
                        versions={"tar": tool_version(ctx.target, ["tar", "--version"])})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return [shell.SHELL, prepared.files["script"]]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        seconds = step_seconds(result, STEPS)
        values = {f"{s}_files_s": int(params["files"]) / seconds[s] for s in STEPS}
        values["geomean"] = geometric_mean(values.values())
        values["cycle_files_s"] = int(params["files"]) / sum(seconds.values())
        values.update(compsize_values(result.stdout, "tree", "tree_"))
        return values


WORKLOADS = (SmallFiles,)
