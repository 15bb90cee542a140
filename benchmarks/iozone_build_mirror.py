"""iozone-build on a git copy of upstream iozone 3.489, since Debian's orig tarball cannot be fetched here.

Write-up D's build time of iozone3, 32- vs 64-bit, on one kernel. The workload
`iozone-build` pins Debian's iozone3_489.orig.tar.gz (non-free), which deb.debian.org answers with
404 from this machine, so its make never ran. mer-tools/iozone (Mer/Jolla's packaging repository)
holds upstream's tree as imported by the commit "[iozone] Update to upstream version 3.489"
(IMPORT below); the commits after it change only rpm/ (the Mer spec), never upstream's files.
This script:

1. makes a tarball in the orig tarball's layout (iozone3_489/docs, iozone3_489/src/current) from
   IMPORT's docs/ and src/ (rpm/ left out: Mer's packaging), `git archive | gzip -n`, and puts it
   in the cache of a SHOOTOUT_HOME of its own, under its own name;
2. runs the real workload (IozoneBuild's prepare/argv/parse, through `shootout run`) on the main
   job's two userspaces, debian:bookworm:amd64 and debian:bookworm:i386, with IozoneBuild's source
   set to a Source naming that tarball and its sha256. The Source is set only inside this process
   (`--inner`): src/ keeps its pinned Debian tarball and has no override;
3. `--arm`: the same through `--emulate` on an arm64 userspace (made here) and a copy of
   /work/test-home's armhf one (function only: emulated, no verdicts; run it under `chrt -i 0`);
4. `--flags`: builds the tree in each userspace with bookworm's dpkg-buildflags as CFLAGS/LDFLAGS
   on make's command line (Debian's rules for iozone3 489-1 are not available here to say what
   the package passes), once, untimed: does the makefile accept them, does the program run.

    flock -o /tmp/shootout-bench.lock /work/main/.venv/bin/python benchmarks/iozone_build_mirror.py \\
        --home /tmp/ioz-home --out benchmarks/results/iozone-build-amd64-i386.txt
    chrt -i 0 /work/main/.venv/bin/python benchmarks/iozone_build_mirror.py --home /tmp/ioz-home --arm \\
        --out benchmarks/results/iozone-build-amd64-i386.txt   # appends
    /work/main/.venv/bin/python benchmarks/iozone_build_mirror.py --home /tmp/ioz-home --flags --out ...

Needs root (userspaces), git, and shootout importable (PYTHONPATH=src, or the repo's venv).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

# a bare clone of github.com/mer-tools/iozone (git clone --bare); IOZONE_MIRROR names another
MIRROR = Path(os.environ.get("IOZONE_MIRROR", "/work/.mirror/mer-tools+iozone/repo"))
REPO = "github.com/mer-tools/iozone"
IMPORT = "cc84d454ba8d52f6f46e95ddedbb7615c85cbbb0"  # "[iozone] Update to upstream version 3.489"
TOP = "iozone3_489"  # the orig tarball's top directory
UPSTREAM_PATHS = ("docs", "src")  # upstream's part of the tree; rpm/ is Mer's
TARBALL = f"iozone3_489+mer-{IMPORT[:8]}.tar.gz"
REVISION = "$Revision: 3.489 $"
TEST_ARMHF = Path("/work/test-home/userspaces/test-armhf")
HERE = Path(__file__).resolve().parent


def git(*args: str) -> str:
    return subprocess.run(["git", f"--git-dir={MIRROR}", *args], check=True, capture_output=True,
                          text=True).stdout


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_tarball(home: Path) -> Path:
    """IMPORT's upstream files as iozone3_489/..., gzip without name or time: the same bytes every time."""
    iozone_c = git("show", f"{IMPORT}:src/current/iozone.c")
    if REVISION not in iozone_c:
        sys.exit(f"{IMPORT[:8]}: src/current/iozone.c does not say {REVISION}")
    sources = home / "cache" / "sources"
    sources.mkdir(parents=True, exist_ok=True)
    path = sources / TARBALL
    archive = subprocess.run(["git", f"--git-dir={MIRROR}", "archive", "--format=tar", f"--prefix={TOP}/", IMPORT,
                              *UPSTREAM_PATHS], check=True, capture_output=True).stdout
    path.write_bytes(subprocess.run(["gzip", "-n", "-9"], input=archive, check=True, capture_output=True).stdout)
    return path


def provenance(tarball: Path) -> list[str]:
    """What the tarball is, from the mirror's own history: the header of the results."""
    touching = git("log", "--all", "--format=%h %ad %s", "--date=short", "--", *UPSTREAM_PATHS).strip().splitlines()
    later = git("log", "--format=%h %s", f"{IMPORT}..3.489+git1").strip().splitlines()
    later_files = git("diff", "--name-only", IMPORT, "3.489+git1").split()
    upstream_later = git("diff", "--name-only", IMPORT, "3.489+git1", "--", *UPSTREAM_PATHS).split()
    docs_from = git("log", "-1", "--format=%h %s", IMPORT, "--", "docs").strip()
    revision_line = next(ln for ln in git("show", f"{IMPORT}:src/current/iozone.c").splitlines() if REVISION in ln)
    makefile_rev = next(ln for ln in git("show", f"{IMPORT}:src/current/makefile").splitlines() if "$Revision" in ln)
    return [
        f"source: {REPO} (git copy at {MIRROR}), commit {IMPORT}",
        f"  ({git('log', '-1', '--format=%s, %an, %ad', '--date=short', IMPORT).strip()})",
        f"  src/current/iozone.c: {revision_line.strip()}; src/current/makefile: {makefile_rev.strip()}",
        "  commits of the mirror that change upstream's files (docs/, src/), all of them upstream imports:",
        *(f"    {ln}" for ln in touching),
        f"  commits after it up to tag 3.489+git1: {'; '.join(later)}; they change {', '.join(later_files)} only"
        + ("" if not upstream_later else f" AND upstream files {upstream_later}"),
        f"tarball: {TARBALL}, sha256 {sha256(tarball)}: git archive {IMPORT[:8]} docs src, prefix {TOP}/, gzip -n -9",
        "remaining differences from Debian's iozone3_489.orig.tar.gz (404 here, so not compared byte for byte):",
        ("  rpm/ (Mer's spec) is left out; docs/ were last changed by the import of 3.420"
         f" ({docs_from}): the 3.478 and 3.489 imports brought src/current only;"),
        "  file times are the commit's, modes git's (644/755); gzip stream and tar headers differ, so the sha256 does;",
        "  whether Debian's orig is upstream's iozone3_489.tar unchanged is not known here. make touches src/current only.",
    ]


def env_for(home: Path) -> dict[str, str]:
    return {**os.environ, "SHOOTOUT_HOME": str(home), "XDG_CACHE_HOME": str(home / "xdg-cache"),
            "PYTHONPATH": os.pathsep.join([str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def inner(home: Path, args: list[str]) -> None:
    """`shootout ARGS` in this process, with iozone-build's source set to the mirror's tarball."""
    from shootout.cli.main import main
    from shootout.workloads import sourcebuild
    from shootout.workloads.compile import Source

    tarball = home / "cache" / "sources" / TARBALL
    sourcebuild.IozoneBuild.source = Source(
        "iozone3", f"3.489 from {REPO} {IMPORT[:8]} (not Debian's orig tarball)", TARBALL, sha256(tarball),
        pool="debian/pool/non-free")
    sys.argv = ["shootout", *args]
    main()


def shootout(home: Path, args: list[str], log: list[str], mirror: bool = True) -> int:
    """One shootout command (with the mirror's source when `mirror`), its output kept in log."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--home", str(home), "--inner", "--", *args] if mirror \
        else [sys.executable, "-m", "shootout", *args]
    log.append(f"$ shootout {shlex.join(args)}" + ("   (iozone-build's source: the mirror tarball)" if mirror else ""))
    proc = subprocess.run(cmd, env=env_for(home), capture_output=True, text=True, check=False)
    log.extend([proc.stdout.rstrip(), proc.stderr.rstrip(), f"(exit {proc.returncode})"])
    print("\n".join(log[-4:]), flush=True)
    return proc.returncode


def stored_facts(home: Path) -> list[str]:
    """What the last run stored about iozone-build on each side: the source it built, with what."""
    import json
    import sqlite3

    with sqlite3.connect(home / "results.db") as db:
        run_id, facts = db.execute("SELECT id, facts FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    lines = [f"stored facts of run {run_id} (results.db), iozone-build per configuration:"]
    for config, per in json.loads(facts).items():
        workload = per.get("workloads", {}).get("iozone-build") if isinstance(per, dict) else None
        if workload:
            lines.append(f"  {config}: source {workload['source']!r}, input_sha256 {workload['input_sha256']}, "
                         f"make {' '.join(workload['make_args'])}, {workload['versions']['compiler']}")
    return lines


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()


def flags_check(home: Path, log: list[str]) -> None:
    """make of the tree in each userspace with bookworm's dpkg-buildflags on make's command line."""
    flags = {name: subprocess.run(["dpkg-buildflags", "--get", name], capture_output=True, text=True,
                                  check=True).stdout.strip() for name in ("CFLAGS", "CPPFLAGS", "LDFLAGS")}
    cflags, ldflags = f"{flags['CFLAGS']} {flags['CPPFLAGS']}", flags["LDFLAGS"]
    log.append(f"bookworm's dpkg-buildflags (host dpkg {subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'dpkg'], capture_output=True, text=True, check=True).stdout}): "
               f"CFLAGS+CPPFLAGS={cflags!r} LDFLAGS={ldflags!r}")
    tarball = home / "cache" / "sources" / TARBALL
    for arch_name, target in (("amd64", "linux-AMD64"), ("i386", "linux")):
        root = home / "userspaces" / f"debian-bookworm-{arch_name}" / "root"
        work = root / "tmp" / "ioz-flags"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        subprocess.run(["tar", "-xzf", str(tarball), "-C", str(work), "--strip-components=1"], check=True)
        script = (f"cd /tmp/ioz-flags/src/current && make -j2 {target} CFLAGS={shlex.quote(cflags)} "
                  f"LDFLAGS={shlex.quote(ldflags)} > ../../make.log 2>&1; echo make exit $?; "
                  "grep -c -i 'warning:' ../../make.log | sed 's/$/ warnings/'; ./iozone -v | grep -m1 Revision; "
                  "grep -m1 -- '-O2 .*iozone.c' ../../make.log | cut -c1-160")
        ran = subprocess.run(["chroot", str(root), "sh", "-c", script], capture_output=True, text=True, check=False)
        log.append(f"{arch_name} userspace, make {target} CFLAGS=... LDFLAGS=...: " +
                   " | ".join(ln.strip() for ln in (ran.stdout + ran.stderr).splitlines()))
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a SHOOTOUT_HOME of this script's own")
    parser.add_argument("--out", type=Path, help="results file (the run's section is written, --arm/--flags append)")
    parser.add_argument("--budget", default="8m")
    parser.add_argument("--arm", action="store_true", help="emulated arm64 and armhf builds instead (no verdicts)")
    parser.add_argument("--flags", action="store_true", help="one make per userspace with dpkg-buildflags")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    home = opts.home.resolve()
    if opts.inner:
        os.environ.update(env_for(home))
        inner(home, opts.rest)
        return
    tarball = make_tarball(home)
    log = [f"# {ln}" for ln in provenance(tarball)]
    head = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    log.append(f"# shootout commit {head}; SHOOTOUT_HOME={home}, XDG_CACHE_HOME={home / 'xdg-cache'}")
    log.append(f"# command: {shlex.join(sys.argv)}")
    log.append(f"# start {time.strftime('%Y-%m-%d %H:%M:%S')} load: {uptime()}")
    if opts.flags:
        flags_check(home, log)
    elif opts.arm:
        if not (home / "userspaces" / "test-armhf").exists():
            # cp -a: the root holds device nodes; the copy is this home's, /work/test-home stays untouched
            (home / "userspaces").mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-a", str(TEST_ARMHF), str(home / "userspaces" / "test-armhf")], check=True)
        shootout(home, ["run", "--emulate", "-c", "debian:bookworm:arm64", "-c", "userspace:test-armhf",
                        "-w", "iozone-build", "--budget", opts.budget], log)
        shootout(home, ["show", "last", "--all"], log, mirror=False)
        log.extend(stored_facts(home))
    else:
        shootout(home, ["run", "-c", "debian:bookworm:amd64", "-c", "debian:bookworm:i386", "-w", "iozone-build",
                        "--budget", opts.budget], log)
        shootout(home, ["show", "last", "--all"], log, mirror=False)
        log.extend(stored_facts(home))
    log.append(f"# end {time.strftime('%Y-%m-%d %H:%M:%S')} load: {uptime()}")
    if opts.out:
        with open(opts.out, "a" if (opts.arm or opts.flags) else "w") as out:
            out.write("\n".join(log) + "\n\n")


if __name__ == "__main__":
    main()
