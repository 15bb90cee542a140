"""The main job on brought SD card images against the same job on shootout's own userspaces.

Builds two SD card images (MBR, FAT32 boot partition with cmdline.txt, ext4 root, xz) from the
main job's userspaces debian-bookworm-amd64 and -i386 of a data directory, so both comparisons
run the same packages; then runs `shootout run -c image:A -c image:B` from a fresh data directory
(the unpacking counted) and `shootout run -c debian:bookworm:amd64 -c debian:bookworm:i386` on
the userspaces themselves, and prints: the wall time from the compressed images to the first
trial, each run's wall time, the verdicts side by side (and whether their directions agree),
and each image's sha256 before and after. Root; run under the shared lock:

  flock -o /tmp/shootout-bench.lock .venv/bin/python benchmarks/brought_images.py [--home DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "integration"))
from sdimage import sd_image, sha

SHOOTOUT = [sys.executable, "-m", "shootout"]



def timed_run(args: list[str], home: Path) -> tuple[float, float | None, int]:
    """Wall time of `shootout run ARGS`, the seconds to its first trial (its warm-up line), its exit."""
    env = {**os.environ, "SHOOTOUT_HOME": str(home), "COLUMNS": "80",
           "PYTHONPATH": str(HERE.parent / "src")}
    start, first = time.monotonic(), None
    with subprocess.Popen([*SHOOTOUT, "run", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as child:
        assert child.stdout is not None
        for line in child.stdout:
            if first is None and line.startswith("warm-up:"):
                first = time.monotonic() - start
            print(f"  | {line.rstrip()}", flush=True)
    return time.monotonic() - start, first, child.returncode


def verdicts(home: Path) -> dict[str, tuple[float, str]]:
    """Workload -> (the 32-bit side's speed-up ratio, its verdict), of the data directory's last run."""
    env = {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": str(HERE.parent / "src")}
    rows = json.loads(subprocess.run([*SHOOTOUT, "show", "last", "--json"], env=env, capture_output=True, text=True,
                                     check=True).stdout)
    return {r["workload"]: (r["speedup"], r["verdict"]) for r in rows if r.get("headline")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path.home() / ".local/share/shootout",
                        help="data directory holding the main job's userspaces")
    parser.add_argument("--out", type=Path, default=Path("/var/tmp/shootout-brought-images"))
    opts = parser.parse_args()
    opts.out.mkdir(parents=True, exist_ok=True)
    print(f"load before: {os.getloadavg()[0]:.2f}")
    images = {}
    for arch, disk_id in (("amd64", 0x5AB1E0A1), ("i386", 0x5AB1E0A2)):
        path = opts.out / f"bookworm-{arch}.img.xz"
        if not path.exists():
            t0 = time.monotonic()
            sd_image(opts.home / "userspaces" / f"debian-bookworm-{arch}" / "root", path, disk_id)
            print(f"built {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.monotonic() - t0:.0f} s")
        images[arch] = path
    before = {a: sha(p) for a, p in images.items()}
    fresh = Path(tempfile.mkdtemp(prefix="shootout-images-home-"))
    print("image sides, fresh data directory:")
    wall_i, first_i, rc_i = timed_run(["-c", f"image:{images['amd64']}", "-c", f"image:{images['i386']}"], fresh)
    print(f"load between: {os.getloadavg()[0]:.2f}")
    print("debian: sides, on the userspaces the images were built from:")
    wall_d, first_d, rc_d = timed_run(["-c", "debian:bookworm:amd64", "-c", "debian:bookworm:i386"], opts.home)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    after = {a: sha(p) for a, p in images.items()}
    on_images, on_chroots = verdicts(fresh), verdicts(opts.home)
    print(f"\nimages: exit {rc_i}, {wall_i:.0f} s in all, first trial at {first_i or float('nan'):.0f} s "
          "(from the compressed images: unpacked, inspected, attached)")
    print(f"debian: exit {rc_d}, {wall_d:.0f} s in all, first trial at {first_d or float('nan'):.0f} s")
    print(f"{'workload':<12} {'images':>28} {'debian: chroots':>28}  same direction")
    for workload in sorted(set(on_images) | set(on_chroots)):
        a, b = on_images.get(workload), on_chroots.get(workload)
        same = a is not None and b is not None and (a[0] > 1) == (b[0] > 1)
        cell = (lambda v: f"{(v[0] - 1) * 100:+.1f}% {v[1]}" if v else "—")
        print(f"{workload:<12} {cell(a):>28} {cell(b):>28}  {'yes' if same else 'NO'}")
    for arch in images:
        print(f"sha256 {images[arch].name}: {before[arch][:16]}… before, {after[arch][:16]}… after: "
              f"{'unchanged' if before[arch] == after[arch] else 'CHANGED'}")
    subprocess.run(["rm", "-rf", "--one-file-system", str(fresh)], check=False)


if __name__ == "__main__":
    main()
