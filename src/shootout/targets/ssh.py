"""A machine reached over SSH: commands, files and facts all live on the remote.

open() connects (one ssh control master; host key checked against known_hosts), compiles
the remote helper with the remote's cc, makes a work directory on the remote's tmpfs and
mounts the work and cache directories with sshfs for today's host-path Target interface.
Every trial runs through the helper, which reports the remote process's own rusage.

Maps onto issue 10's Target interface with paths inside the target (strings): workdir()
is self.remote_workdir, cache_dir() self.remote_cache; put / read / exists, run(...,
stdin=) and spawn(...) exist here already; scratch("disk") and the facts probe for
default_params() are still to write (a remote mktemp -d under /var/tmp; cores, memory and
caches from the mirrored /proc and /sys). The sshfs bridge is then no longer needed.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shootout.errors import TargetError, UsageError
from shootout.model import Config
from shootout.remote import helper
from shootout.remote.background import RemoteBackground
from shootout.remote.bridge import Bridge
from shootout.conditions.preflight import Preflight, preflight
from shootout.remote.probe import RemoteMonitor, RemoteProbe
from shootout.remote.ssh import SshAddress, SshChannel
from shootout.system.journal import Journal
from shootout.targets.base import CLEAN_PATH, Target
from shootout.targets.process import ProcResult

DEFAULT_CACHE = ".cache/shootout"  # relative to the remote user's home


def ssh_config(spec: str) -> Config:
    """`ssh:[user@]host[:port]` -> a configuration of the ssh target."""
    dest = spec.removeprefix("ssh:")
    host, _, port = dest.rpartition(":") if dest.count(":") == 1 else (dest, "", "")
    if not host or (port and not port.isdigit()):
        raise UsageError(f"bad ssh target {spec!r}", "use ssh:[USER@]HOST[:PORT] or an alias from ~/.ssh/config")
    options = (("destination", host),) + ((("port", port),) if port else ())
    return Config(name=spec, target="ssh", label=dest, options=options)


def address_of(config: Config) -> SshAddress:
    dest = config.option("destination")
    if not dest:
        raise UsageError(f"configuration {config.name} names no ssh destination", "use ssh:[USER@]HOST[:PORT]")
    port = config.option("port")
    return SshAddress(dest, int(port) if port else None, config.option("ssh_config"),
                      config.option("identity"), config.option("known_hosts"))


class SshTarget(Target):
    def __init__(self, config: Config, journal: Journal, channel: SshChannel | None = None) -> None:
        super().__init__(config)
        self.journal = journal
        self.channel = channel or SshChannel(address_of(config), journal)
        self.where = self.channel.address.destination
        self.helper = ""
        self.home = ""
        self.remote_cache = ""
        self.remote_workdir = ""
        self.probe: RemoteProbe | None = None
        self._bridge: Bridge | None = None
        self._entries: list[int] = []

    # -- lifecycle -------------------------------------------------------------------
    def open(self) -> None:
        if self._bridge is not None:
            return
        try:
            self.channel.open()
            self.home = self.channel.check("pwd", "finding the home directory").strip()
            cache = self.config.option("remote_cache") or f"{self.home}/{DEFAULT_CACHE}"
            self.remote_cache = self.channel.check(f"mkdir -p {shlex.quote(cache)} && cd {shlex.quote(cache)} && pwd",
                                                   "making the cache directory").strip()
            self.helper = helper.install(self.channel, self.remote_cache)
            self.remote_workdir = self._remote_tempdir("/dev/shm", "a work directory")
            self.probe = RemoteProbe(self.channel, self.helper, self.journal)
            self.probe.refresh()
            bridge = Bridge(self.channel, self.journal)
            self._bridge = bridge
            bridge.mount("/", read_only=True)
            bridge.mount(self.remote_cache)
            bridge.mount(self.remote_workdir)
        except BaseException:
            self.close()
            raise

    def _remote_tempdir(self, preferred: str, what: str) -> str:
        """A fresh directory on the remote (under `preferred` if it can), removed by close() or the journal."""
        path = self.channel.check(f"mktemp -d {preferred}/shootout-XXXXXXXX 2>/dev/null || mktemp -d",
                                  f"making {what}").strip()
        undo = {"argv": [*self.channel.client_argv(), self.where, "--", f"rm -rf {shlex.quote(path)}"],
                "tolerate_failure": True}
        self._entries.append(self.journal.record(f"{what} {path} on {self.where}", undo))
        return path

    def close(self) -> None:
        if self._bridge is not None:
            self._bridge.close()
            self._bridge = None
        if self.probe is not None:
            self.probe.close()
            self.probe = None
        for entry in reversed(self._entries):  # the remote directories, while the master still runs
            self.journal.undo_entry(entry)
        self._entries = []
        self.channel.close()

    # -- running ---------------------------------------------------------------------
    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = super().environment(extra)
        if "HOME" not in dict(self.config.env) and "HOME" not in (extra or {}):
            env["HOME"] = self.home  # the remote user's, not /root
        return env

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
            timeout: float = 3600.0, stdin: bytes | None = None) -> ProcResult:
        self.open()
        token = helper.new_token()
        command = helper.run_command(self.helper, argv, env=self.environment(env), cwd=cwd or self.remote_workdir,
                                     timeout=timeout, token=token)
        started = time.time()
        # The ssh client waits a little longer than the helper, which kills on its own deadline.
        done = self.channel.exec(command, stdin=stdin, timeout=timeout + 60)
        usage, stderr = helper.parse_usage(done.stderr.decode(errors="replace"), token)
        return ProcResult(tuple(argv), usage.exit_status, done.text(), stderr, usage.wall_s, usage.user_s,
                          usage.sys_s, usage.max_rss_kb, usage.ctx_switches, started, usage.timed_out)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
              timeout: float = 24 * 3600.0) -> RemoteBackground:
        """A background command (a server); stop() kills its group and returns its ProcResult."""
        self.open()
        token = helper.new_token()
        command = helper.run_command(self.helper, argv, env=self.environment(env), cwd=cwd or self.remote_workdir,
                                     timeout=timeout, token=token)
        return RemoteBackground(self.channel, argv, command, token)

    # -- files (today's interface: host paths through the sshfs bridge) ---------------
    @property
    def workdir(self) -> Path:
        self.open()
        return self._host(self.remote_workdir)

    @property
    def cachedir(self) -> Path:
        self.open()
        return self._host(self.remote_cache)

    def _host(self, inside: str) -> Path:
        assert self._bridge is not None
        found = self._bridge.to_host(inside)
        assert found is not None, inside
        return found

    def inside(self, host_path: Path) -> str:
        found = self._bridge.to_remote(Path(host_path)) if self._bridge else None
        if found is None:
            raise TargetError(f"{host_path} is not on {self.where}", "put files for a remote trial under its workdir or cachedir")
        return found

    def host_path(self, inside: str) -> Path:
        """Where a remote path can be read on the host (probes such as tool_elf)."""
        self.open()
        return self._host(inside)

    def which(self, tool: str) -> str | None:
        path = dict(self.config.env).get("PATH", CLEAN_PATH)
        done = self.channel.exec(shlex.join(["env", "-i", f"PATH={path}", "sh", "-c", 'command -v "$1"', "sh", tool]))
        found = done.text().strip()
        return found if done.exit_status == 0 and found.startswith("/") else None

    # -- files (issue 10's interface: paths inside the target) ----------------------------
    def put(self, source: bytes | Path, dest: str) -> str:
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
        q = shlex.quote(dest)
        self.channel.check(f"mkdir -p \"$(dirname {q})\" && cat > {q}.part && mv {q}.part {q}", f"writing {dest}",
                           stdin=data)
        return dest

    def read(self, path: str) -> bytes:
        done = self.channel.exec(f"cat {shlex.quote(path)}")
        if done.exit_status != 0:
            raise TargetError(f"cannot read {path} on {self.where}: {done.stderr.decode(errors='replace').strip()}",
                              "check that the file exists there")
        return done.stdout

    def exists(self, path: str) -> bool:
        return self.channel.exec(f"test -e {shlex.quote(path)}").exit_status == 0

    # -- description -------------------------------------------------------------------
    def preflight(self, load_wait_s: float = 0.0) -> Preflight:
        """The remote's own preflight: idle gate, steal, swap, sensors, governor — shootout's
        preflight run on the mirror of its /proc and /sys, which a monitor stream keeps fresh."""
        self.open()
        assert self.probe is not None
        with RemoteMonitor(self.probe, interval_s=0.25):
            return preflight(tune=False, journal=None, load_wait_s=load_wait_s, root=self.probe.root)

    def facts(self) -> dict[str, Any]:
        from shootout.boots.identity import read_boot
        from shootout.facts import machine_facts, target_facts

        self.open()
        assert self.probe is not None
        self.probe.refresh()
        found: dict[str, Any] = target_facts(self)
        found.update(remote=self.where, channel="ssh", machine=machine_facts(self.probe.root),
                     boot=read_boot(self.probe.root).as_dict(), arch=found.get("dpkg_arch"),
                     compiler=found.get("cc"), emulated=False)
        return found
