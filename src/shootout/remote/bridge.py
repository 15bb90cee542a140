"""sshfs mounts of a remote's directories: today's Target hands workloads host paths.

Until targets own their files (issue 10: put/read/exists with paths inside the target),
workloads and build.py write into `target.workdir` and `target.cachedir` on the host. For
a remote target those are sshfs mounts of the remote's own work and cache directories,
and the remote's root is mounted read-only so probes (tool_elf) can read its binaries.
Each mount rides the target's ssh control master, so host keys are checked once, the same
way. Mounts go through the journal (fusermount -u); a mount point is never rmtree'd.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from shootout.errors import TargetError, ToolMissing
from shootout.remote.ssh import SshChannel
from shootout.system.journal import Journal


def _fusermount() -> str:
    for name in ("fusermount3", "fusermount"):
        if found := shutil.which(name):
            return found
    raise ToolMissing("fusermount3", "fuse3")


class Bridge:
    """Local mount points of remote directories; mount() returns the host path of one."""

    def __init__(self, channel: SshChannel, journal: Journal) -> None:
        self.channel = channel
        self.journal = journal
        self.base = Path(tempfile.mkdtemp(prefix="shootout-sshfs-"))
        self._entries: list[int] = [journal.record(f"sshfs mount points {self.base}",
                                                   {"argv": ["rmdir", str(self.base)], "tolerate_failure": True})]
        self.mounts: dict[str, Path] = {}  # remote directory -> local mount point

    def mount(self, remote_dir: str, *, read_only: bool = False) -> Path:
        sshfs = shutil.which("sshfs")
        if sshfs is None:
            raise ToolMissing("sshfs", "sshfs")
        point = self.base / f"m{len(self.mounts)}"
        point.mkdir()
        # direct_io: procfs-like files report size 0; the page cache would then read nothing.
        options = ["reconnect", "direct_io", "dir_cache=no", "ServerAliveInterval=15"] + (["ro"] if read_only else [])
        ssh_command = shlex.join(self.channel.client_argv())
        argv = [sshfs, "-o", ",".join(options), "-o", f"ssh_command={ssh_command}",
                f"{self.channel.address.destination}:{remote_dir}", str(point)]
        undo = [{"argv": [_fusermount(), "-u", "-z", str(point)], "tolerate_failure": True},
                {"argv": ["rmdir", str(point)], "tolerate_failure": True}]
        try:
            self._entries.append(self.journal.run(f"sshfs {self.channel.address.destination}:{remote_dir} on {point}",
                                                  argv, undo))
        except subprocess.CalledProcessError as exc:
            raise TargetError(f"cannot mount {remote_dir} of {self.channel.address.destination} with sshfs: "
                              f"{(exc.stderr or '').strip().splitlines()[-1:] or exc.returncode}",
                              "sshfs needs /dev/fuse (the fuse3 package) and the remote's sftp subsystem") from None
        self.mounts[remote_dir] = point
        return point

    def close(self) -> list[str]:
        errors: list[str] = []
        for entry in reversed(self._entries):
            errors += self.journal.undo_entry(entry)
        self._entries = []
        self.mounts = {}
        return errors

    def to_host(self, inside: str) -> Path | None:
        """The host path of a remote path, through the most specific mount; None if unmounted."""
        for remote_dir in sorted(self.mounts, key=len, reverse=True):
            rel = _relative(inside, remote_dir)
            if rel is not None:
                return self.mounts[remote_dir] / rel
        return None

    def to_remote(self, host: Path) -> str | None:
        for remote_dir, point in self.mounts.items():
            try:
                rel = Path(host).relative_to(point)
            except ValueError:
                continue
            return remote_dir.rstrip("/") + ("/" + str(rel) if str(rel) != "." else "") or "/"
        return None


def _relative(path: str, base: str) -> str | None:
    base = base.rstrip("/")
    if path == base or base == "":
        return path[len(base):].lstrip("/") or "."
    if path.startswith(base + "/"):
        return path[len(base) + 1:]
    return None
