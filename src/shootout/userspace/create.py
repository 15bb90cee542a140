"""Create a userspace with mmdebstrap: minbase plus the workloads' packages, versions recorded.

Built under userspaces/.incomplete-NAME and renamed to NAME only when everything succeeded,
so a failed or killed create never leaves anything that looks usable. mmdebstrap (root mode)
downloads with apt, installs the essential set with one dpkg call and the rest with apt
inside the chroot, with dpkg's unsafe-io (the tree is synced once at the end instead of after
every file): faster than debootstrap's package-by-package second stage (1.4x warm, 2x cold here).
Its apt cache is seeded with the packages this user's earlier creates fetched (a persistent
per-arch cache), and what it downloaded joins that cache afterwards.
The root is bind-mounted on itself privately for the duration, so whatever mmdebstrap
mounts inside it is detached with it, by us or by `shootout doctor` after a kill; mmdebstrap
runs in a PID namespace of its own, so a kill of shootout ends its apt and dpkg too.
Like debootstrap, only the release itself is used while building (both sides of the main job
get the same versions); the -updates and -security suites are listed for later installs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from shootout.base.errors import (
    ShootoutError,
    TargetError,
    ToolMissing,
    UsageError,
    require_root,
)
from shootout.base.paths import cache_dir, kept_log, shared_cache_dir
from shootout.execution.tools import CLEAN_PATH, find_tool
from shootout.system.journal import Journal, journal, recover
from shootout.system.mounts import bind_private, mounts_under, safe_rmtree
from shootout.userspace import registry
from shootout.userspace.apt import write_sources
from shootout.userspace.arches import arch as lookup_arch
from shootout.userspace.arches import host_arch
from shootout.userspace.binfmt import ensure_emulation
from shootout.userspace.packages import installed_versions, missing

DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_RELEASE = "bookworm"
MIN_FREE_BYTES = 1_000_000_000  # a full userspace is ~600 MB plus the download cache
_OPTIONS = ("etc/dpkg/dpkg.cfg.d/99mmdebstrap", "etc/apt/apt.conf.d/99mmdebstrap")  # the --dpkgopt it keeps
_ARCHIVES = "var/cache/apt/archives"
# /usr merged by mmdebstrap itself, with usr-is-merged as debootstrap does: without it, apt would
# pull in usrmerge and with it perl (a tenth of the userspace's install time, and not debootstrap's set).
_MERGED_USR = "/usr/share/mmdebstrap/hooks/merged-usr"

Progress = Callable[[str], None]

_running: set[subprocess.Popen[str]] = set()
_running_lock = threading.Lock()


def host_release(os_release: Path = Path("/etc/os-release")) -> str | None:
    """VERSION_CODENAME of the host when it is Debian, else None."""
    fields: dict[str, str] = {}
    try:
        for line in os_release.read_text().splitlines():
            key, _, value = line.partition("=")
            fields[key.strip()] = value.strip().strip('"')
    except OSError:
        return None
    if fields.get("ID") != "debian":
        return None
    return fields.get("VERSION_CODENAME") or None


ROOT_HINT = "run as root or use host and host+m32"  # what a userspace needs root for: chroot, mounts


def require_builder(arch_name: str | None = None) -> None:
    """mmdebstrap, and arch-test, which it needs for an architecture other than the host's."""
    if find_tool("mmdebstrap") is None:
        raise ToolMissing("mmdebstrap", "mmdebstrap")
    if arch_name not in (None, host_arch()) and find_tool("arch-test") is None:
        raise ToolMissing("arch-test", "arch-test")


def check_free_space(directory: Path) -> None:
    st = os.statvfs(directory)
    free = st.f_bavail * st.f_frsize
    if free < MIN_FREE_BYTES:
        raise TargetError(f"not enough free space for a userspace: {free / 1e6:.0f} MB free in {directory}",
                          f"a userspace needs about {MIN_FREE_BYTES / 1e9:.0f} GB while it is built; free some space")


def probe_mirror(mirror: str, release: str, arch_name: str) -> None:
    """Fail early, in one line, when the mirror is unreachable or lacks the release or arch."""
    url = f"{mirror.rstrip('/')}/dists/{release}/Release"
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            text = response.read(4_000_000).decode(errors="replace")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise TargetError(f"release {release!r} is not on the mirror {mirror}",
                              "check the release name (e.g. bookworm, trixie) or pass --mirror") from None
        raise TargetError(f"the mirror {mirror} answered {exc.code} for {release}", "try again or pass --mirror") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TargetError(f"cannot reach the mirror {mirror}: {reason}",
                          "check the network connection or pass --mirror URL") from None
    for line in text.splitlines():
        if line.startswith("Architectures:") and arch_name not in line.split()[1:]:
            raise TargetError(f"release {release} on {mirror} has no {arch_name} packages",
                              "pick another architecture or release")


def preflight(arch_name: str, release: str, mirror: str) -> None:
    """Everything that can be checked before a create touches the disk."""
    lookup_arch(arch_name)
    require_root("creating a userspace", ROOT_HINT)
    require_builder(arch_name)
    check_free_space(registry.userspaces_dir())
    probe_mirror(mirror, release, arch_name)


def abort_all() -> None:
    """Kill every mmdebstrap this process runs (their creates then clean up and fail)."""
    with _running_lock:
        for proc in list(_running):
            _kill(proc)


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stream(argv: list[str], progress: Progress | None, prefix: str, tmp: Path) -> tuple[int, list[str]]:
    """Run argv, passing its output lines to progress; returns (exit status, all lines). Its
    temporary files (mmdebstrap's gpg home) go to tmp, which goes with the half-made userspace
    even when shootout is killed, not to /tmp."""
    tmp.mkdir(exist_ok=True)
    env = {"PATH": CLEAN_PATH, "LC_ALL": "C", "HOME": "/root", "DEBIAN_FRONTEND": "noninteractive",
           "TMPDIR": str(tmp)}
    # setpriv --pdeathsig: if shootout is killed, the PID namespace's keeper dies; --kill-child:
    # then its init does, and with it every apt and dpkg mmdebstrap started.
    keeper = ["setpriv", "--pdeathsig", "KILL", "unshare", "--pid", "--fork", "--kill-child"]
    proc = subprocess.Popen([*keeper, *argv], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            start_new_session=True)
    with _running_lock:
        _running.add(proc)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip()
            lines.append(line)
            if progress and line.startswith(("I: ", "E: ", "W: ")):
                progress(f"{prefix}{line[3:]}")
        return proc.wait(), lines
    except BaseException:
        _kill(proc)
        proc.wait()
        raise
    finally:
        with _running_lock:
            _running.discard(proc)
        safe_rmtree(tmp)  # what mmdebstrap left in it, if anything


def _link_missing(into: Path, debs: Iterable[Path]) -> None:
    for deb in debs:
        if not (into / deb.name).exists():
            with contextlib.suppress(OSError):  # another filesystem: that one is downloaded
                os.link(deb, into / deb.name)


def _arch_cache(release: str, arch_name: str) -> Path:
    """Per-arch download cache, seeded with the packages this user fetched before and the
    arch-independent packages its siblings fetched.

    Per arch so that a create seeds its apt cache with its own arch's files only; seeding by
    hard link shares the files safely since apt checks every cached file's checksum and
    replaces (never rewrites) a file that does not match. (The directories keep the name
    they had when debootstrap filled them: the files are the same.)
    """
    base = cache_dir() / "debootstrap"
    mine = base / f"{release}-{arch_name}"
    mine.mkdir(parents=True, exist_ok=True)
    store = shared_cache_dir() / "debootstrap"
    _link_missing(mine, (store / f"{release}-{arch_name}").glob("*.deb"))
    for sibling in [*base.glob(f"{release}-*"), *store.glob(f"{release}-*")]:
        if sibling != mine:
            _link_missing(mine, sibling.glob("*_all.deb"))
    return mine


def _publish_downloads(cache: Path) -> None:
    """After a create succeeded: its verified packages join the shared store (complete files
    only: each appears there by an atomic rename)."""
    store = shared_cache_dir() / "debootstrap" / cache.name
    with contextlib.suppress(OSError):
        store.mkdir(parents=True, exist_ok=True)
        for deb in cache.glob("*.deb"):
            if (store / deb.name).exists():
                continue
            tmp = store / f".{deb.name}.{os.getpid()}"
            try:
                os.link(deb, tmp)
                os.replace(tmp, store / deb.name)
            except OSError:
                tmp.unlink(missing_ok=True)


def _no_space(name: str) -> TargetError:
    return TargetError(f"no space left on device while creating userspace {name}",
                       f"free space under {registry.userspaces_dir()} (a userspace needs about 1 GB); nothing was kept")


def _failure(name: str, lines: list[str], log: Path | None) -> TargetError:
    st = os.statvfs(registry.userspaces_dir())
    if "No space left on device" in "\n".join(lines) or st.f_bavail * st.f_frsize < 64_000_000:
        return _no_space(name)
    errors = [line[3:] for line in lines if line.startswith("E: ") and "exited with exit code" not in line]
    reason = (errors or [line for line in lines if line.strip()][-1:] or ["no output"])[0]
    hint = f"full log: {log}" if log else "run mmdebstrap by hand to see why"
    return TargetError(f"mmdebstrap failed creating {name}: {reason}", hint)


def _save_log(name: str, lines: list[str]) -> Path | None:
    return kept_log(f"create-{name}.log", ("\n".join(lines) + "\n").encode())


def _builder_argv(root: Path, arch_name: str, release: str, mirror: str, packages: Sequence[str]) -> list[str]:
    """mmdebstrap in root mode (inside our private bind of the root); the apt cache it finds
    in the root (seeded by us) is used and kept, for us to harvest."""
    return ["mmdebstrap", "--mode=root", "--variant=minbase", f"--architectures={arch_name}", "--components=main",
            *([f"--include={','.join(packages)}"] if packages else []), "--dpkgopt=force-unsafe-io",
            "--skip=check/empty,essential/unlink,cleanup/apt/cache", f"--hook-dir={_MERGED_USR}",
            release, str(root), mirror]


def _finish_root(root: Path, release: str, mirror: str) -> None:
    """Settle the tree for use: apt sources with updates and security, no dpkg shortcuts,
    no services, no leftover .debs."""
    write_sources(root, release, mirror)
    for option in _OPTIONS:
        (root / option).unlink(missing_ok=True)
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\n# shootout: never start services inside the userspace\nexit 101\n")
    policy.chmod(0o755)
    for deb in (root / _ARCHIVES).glob("*.deb"):
        deb.unlink()
    (root / "var/cache/shootout").mkdir(parents=True, exist_ok=True)


@contextmanager
def _journal_for(given: Journal | None) -> Iterator[Journal]:
    if given is not None:
        yield given
    else:
        with journal() as j:
            yield j


def create_userspace(
    name: str,
    arch_name: str,
    release: str | None = None,
    *,
    mirror: str = DEFAULT_MIRROR,
    packages: Sequence[str],
    progress: Progress | None = None,
    journal: Journal | None = None,
    checked: bool = False,
) -> registry.Userspace:
    """Build userspace `name` and return it ready; raise a one-line ShootoutError otherwise.

    packages: what to install besides minbase (the workloads' say workloads.debpackages). progress may be
    called from a worker thread. `checked` skips preflight() when the caller already ran it.
    """
    registry.check_name(name)
    release = release or host_release() or DEFAULT_RELEASE
    if not checked:
        preflight(arch_name, release, mirror)
    with registry.locked(name, wait=True):
        for found in registry.find(name):
            if found.state == "ready":
                raise UsageError(f"userspace {name} already exists",
                                 f"use it, or `shootout userspace remove {name}` first")
        with _journal_for(journal) as j:
            with j.lock:
                ensure_emulation(arch_name, j)
            wanted = tuple(packages)
            return _build(name, arch_name, release, mirror, wanted, progress, j)


def _build(name: str, arch_name: str, release: str, mirror: str, packages: tuple[str, ...],
           progress: Progress | None, j: Journal) -> registry.Userspace:
    base = registry.userspaces_dir()
    work = base / f"{registry.INCOMPLETE}{name}"
    if mounts_under(work):
        recover()  # a killed earlier attempt left its mounts: undo them from its journal
    safe_rmtree(work)  # a half-made one from an earlier attempt
    root = work / "root"
    root.mkdir(parents=True)
    started = time.time()
    meta = {"name": name, "arch": arch_name, "release": release, "mirror": mirror, "variant": "minbase",
            "requested": list(packages), "ready": False, "started_at": started, "pid": os.getpid()}
    registry.write_meta(work, meta)
    prefix = f"{name}: "
    bind_id: int | None = None
    lines: list[str] = []
    try:
        cache, archives = _seed_archives(root, release, arch_name)
        with j.lock:
            bind_id = bind_private(j, root, root, f"userspace {name} while it is built")
        rc, lines = _stream(_builder_argv(root, arch_name, release, mirror, packages), progress, prefix, work / "tmp")
        if rc != 0:
            raise _failure(name, lines, _save_log(name, lines))
        with j.lock:
            leftover = j.undo_entry(bind_id)
        bind_id = None
        if leftover or mounts_under(work):
            raise TargetError(f"cannot unmount {root}: {'; '.join(leftover) or 'still mounted'}",
                              "run `shootout doctor`")
        _link_missing(cache, archives.glob("*.deb"))  # what apt fetched (complete: apt renames into place)
        _finish_root(root, release, mirror)
        versions = installed_versions(root)
        if absent := missing(versions, packages):
            raise TargetError(f"packages did not install in {name}: {', '.join(absent)}",
                              "check that they exist for this release and architecture")
        _publish_downloads(cache)
        target = base / name
        _mark_ready(work, target, meta, versions, started)
        if progress:
            progress(f"{prefix}ready in {meta['create_seconds']:.0f} s")
        return registry.Userspace(name, target, "ready", meta)
    except BaseException as exc:
        _discard(work, bind_id, j)
        if isinstance(exc, OSError) and not isinstance(exc, ShootoutError):
            if exc.errno == errno.ENOSPC:
                raise _no_space(name) from None
            raise TargetError(f"creating userspace {name} failed: {exc}", "check the data directory") from None
        raise


def _seed_archives(root: Path, release: str, arch_name: str) -> tuple[Path, Path]:
    """The per-arch apt cache, and the root's archive directory seeded from it by hard links.

    Seeded (and harvested, after the build) outside the bind mount: a hard link cannot cross a
    mount point, even within one filesystem."""
    cache = _arch_cache(release, arch_name)
    archives = root / _ARCHIVES
    archives.mkdir(parents=True)
    _link_missing(archives, cache.glob("*.deb"))
    return cache, archives


def _mark_ready(work: Path, target: Path, meta: dict[str, Any], versions: dict[str, str], started: float) -> None:
    """Write the finished meta, then rename the build to its name: the commit point."""
    os.sync()  # unsafe-io skipped dpkg's fsyncs: make the tree durable before it counts as ready
    meta.update(ready=True, packages=versions, created_at=time.time(),
                create_seconds=round(time.time() - started, 1), builder=_builder_version())
    meta.pop("pid", None)
    registry.write_meta(work, meta)
    safe_rmtree(target)  # an incomplete one left by an interrupted update
    work.rename(target)  # the commit point: from here on it is ready


def _discard(work: Path, bind_id: int | None, j: Journal) -> None:
    """After a failure: the bind mount undone, then the half-made tree removed if nothing holds it."""
    if bind_id is not None:
        with j.lock:
            j.undo_entry(bind_id)
    try:
        safe_rmtree(work)
    except ShootoutError:
        pass  # still mounted by something else: it stays "incomplete", never ready


def _builder_version() -> str:
    done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "mmdebstrap"], capture_output=True, text=True, check=False)
    return f"mmdebstrap {done.stdout.strip() if done.returncode == 0 else '?'}"
