"""The ssh kind: another machine reached over ssh (ssh:[USER@]HOST[:PORT], or a Host alias of
~/.ssh/config); its trials run there, beside this machine's. Its target's commands, files and
facts all live on the remote.

open() connects (one ssh control master; host key checked against known_hosts), compiles
the remote helper with the remote's cc (kept in the remote's cache directory), starts one
`helper serve` session that runs every command of the run over one channel, and makes a
work directory on the remote's tmpfs. Every command runs through the helper, which reports
the remote process's own rusage. The file operations are Target's generic ones (through
run()); facts, sizing and preflight read a local mirror of the remote's /proc and /sys.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from shootout.base.errors import TargetError, UsageError
from shootout.base.model import Config
from shootout.conditions.preflight import Preflight, preflight
from shootout.execution.placefacts import TargetFacts, parse_bits
from shootout.execution.process import ProcResult, Stdin
from shootout.places.kind import Kind
from shootout.places.target import Target
from shootout.remote import helper
from shootout.remote.background import RemoteBackground
from shootout.remote.channel import SshAddress, SshChannel
from shootout.remote.probe import RemoteMonitor, RemoteProbe
from shootout.remote.session import HelperSession
from shootout.system.journal import Journal

SNAP_TIMEOUT_S = 60.0
MONITOR_INTERVAL_S = 1.0  # the remote's clock, temperature, load and steal, sampled all run long


def address_of(config: Config) -> SshAddress:
    dest = config.option("destination")
    if not dest:
        raise UsageError(f"configuration {config.name} names no ssh destination", SshKind.hint)
    port = config.option("port")
    return SshAddress(dest, int(port) if port else None, config.option("ssh_config"),
                      config.option("identity"), config.option("known_hosts"))


class SshTarget(Target):
    def __init__(self, config: Config, journal: Journal, channel: SshChannel | None = None) -> None:
        super().__init__(config, journal)
        self.journal: Journal = journal
        self.channel = channel or SshChannel(address_of(config), journal)
        self.where = self.channel.address.destination
        self.helper = ""
        self.home = ""
        self.remote_cache = ""
        self.remote_workdir = ""
        self.mirror: RemoteProbe | None = None
        self.session: HelperSession | None = None
        self.monitor: RemoteMonitor | None = None
        self._entries: list[int] = []

    # -- lifecycle -------------------------------------------------------------------
    def open(self) -> None:
        if self.session is not None:
            return
        try:
            self.channel.open()
            installed = helper.install(self.channel, self.config.option("remote_cache"))
            self.home, self.remote_cache, self.helper = installed.home, installed.cache, installed.helper
            serve = shlex.join(["exec", self.helper, "serve"])
            self.session = HelperSession(lambda: self.channel.popen(serve), self.where)
            self.remote_workdir = self._remote_tempdir("/dev/shm", "a work directory")
            self.mirror = RemoteProbe(self.channel, self.helper, self._snap, self.journal)
            session = self.session
            self.monitor = RemoteMonitor(self.mirror, interval_s=MONITOR_INTERVAL_S, own_user_s=lambda: session.user_s)
            self.monitor.start()
        except BaseException:
            self.close()
            raise

    def _remote_tempdir(self, preferred: str, what: str) -> str:
        """A fresh directory on the remote (under `preferred` if it can), removed by close() or the journal."""
        made = self.run(["sh", "-c", 'mktemp -d "$1/shootout-XXXXXXXX" 2>/dev/null || mktemp -d', "mktemp", preferred],
                        timeout=60)
        path = made.stdout.strip()
        if made.exit_status != 0 or not path.startswith("/"):
            raise self._failed(f"make {what}", made)
        undo = {"argv": [*self.channel.client_argv(), self.where, "--", f"rm -rf {shlex.quote(path)}"],
                "tolerate_failure": True}
        self._entries.append(self.journal.record(f"{what} {path} on {self.where}", undo))
        return path

    def _failed(self, what: str, result: ProcResult) -> TargetError:
        return TargetError(f"cannot {what} on {self.where}: {result.stderr_tail(1) or 'exit ' + str(result.exit_status)}",
                           "check the free space and permissions on the remote")

    def close(self) -> None:
        super().close()
        if self.monitor is not None:
            self.monitor.stop()
        if self.mirror is not None:
            self.mirror.close()
            self.mirror = None
        if self.session is not None:
            self.session.close()
        for entry in reversed(self._entries):  # the remote directories, while the master still runs
            self.journal.undo_entry(entry)
        self._entries = []
        self.session = None
        self.channel.close()

    # -- running ---------------------------------------------------------------------
    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = super().environment(extra)
        if "HOME" not in dict(self.config.env) and "HOME" not in (extra or {}):
            env["HOME"] = self.home  # the remote user's, not /root
        return env

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
            timeout: float = 3600.0, stdin: Stdin = None, wrap: Sequence[str] = ()) -> ProcResult:
        """wrap runs on the remote, in front of the command (the remote is the target's machine)."""
        self.open()
        assert self.session is not None
        return self.session.run([*wrap, *argv], self.environment(env), cwd or self.remote_workdir or "/", timeout,
                                stdin)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> RemoteBackground:
        """A background command (a server) on a channel of its own; stop() ends its group."""
        self.open()
        token = helper.new_token()
        command = helper.run_command(self.helper, argv, env=self.environment(env), cwd=cwd or self.remote_workdir,
                                     timeout=24 * 3600.0, token=token)
        return RemoteBackground(self.channel, argv, command, token)

    def _snap(self, patterns: list[str]) -> bytes:
        assert self.session is not None
        out, _, _ = self.session.call([self.helper, "snap", *patterns], {}, "/", SNAP_TIMEOUT_S)
        return out

    # -- places ----------------------------------------------------------------------
    def workdir(self) -> str:
        self.open()
        return self.remote_workdir

    def cache_dir(self) -> str:
        self.open()
        return self.remote_cache

    def scratch(self, kind: str) -> str:
        """"disk": a directory on the remote's own disk (/var/tmp), journalled; the scratch
        *part* (a device under test on this machine) is refused for remote configurations."""
        if kind != "disk":
            return super().scratch(kind)
        if not self._disk:
            self.open()
            self._disk = self._remote_tempdir("/var/tmp", "a scratch directory")
        return self._disk

    def scratch_facts(self) -> dict[str, Any] | None:
        if not self._disk:
            return None
        fs = self.run(["stat", "-f", "-c", "%T", self._disk], timeout=60).stdout.strip()
        return {"path": self._disk, "filesystem": fs or None, "on": self.where}

    # -- description -------------------------------------------------------------------
    def monitor_samples(self) -> list[dict[str, Any]]:
        return self.monitor.samples() if self.monitor is not None else []

    def machine_monitor(self) -> RemoteMonitor | None:
        return self.monitor

    def probe(self) -> TargetFacts:
        """Cores, memory and caches from the mirror of the remote's /proc and /sys."""
        if self._sizing is None:
            self.open()
            assert self.mirror is not None
            # the mirror holds /proc and /sys; the pointer width is the remote userspace's answer
            bits = self.run(["getconf", "LONG_BIT"], timeout=60)
            self._sizing = dataclasses.replace(self.mirror.sizing(), address_bits=parse_bits(bits.stdout))
        return self._sizing

    def preflight(self, load_wait_s: float = 0.0) -> Preflight:
        """The remote's own preflight: idle gate, steal, swap, sensors, governor — shootout's
        preflight run on the mirror of its /proc and /sys, which a monitor stream keeps fresh."""
        self.open()
        assert self.mirror is not None
        with RemoteMonitor(self.mirror, interval_s=0.25):
            return preflight(tune=False, journal=None, load_wait_s=load_wait_s, root=self.mirror.root)

    def facts(self, packages: Sequence[str] = ()) -> dict[str, Any]:
        from shootout.boots.identity import read_boot
        from shootout.conditions.machinefacts import machine_facts

        self.open()
        assert self.mirror is not None
        self.mirror.refresh()
        found: dict[str, Any] = super().facts(packages)
        found.update(remote=self.where, channel="ssh", machine=machine_facts(self.mirror.root),
                     boot=read_boot(self.mirror.root).as_dict(), arch=found.get("dpkg_arch"),
                     compiler=found.get("cc"), emulated=False,
                     preflight=self.preflight().facts)
        return found


class SshKind(Kind):
    name = "ssh"
    forms = ("ssh:[USER@]HOST[:PORT]",)
    hint = "use ssh:[USER@]HOST[:PORT] or an alias from ~/.ssh/config"
    target = SshTarget
    elsewhere = True
    disk_scratch = True  # a directory on the remote's own disk

    def parse(self, spec: str) -> Config | None:
        return ssh_config(spec) if spec.startswith("ssh:") else None

    def machine(self, config: Config) -> str | None:
        parts = [config.option("destination") or config.name, config.option("port") or "",
                 config.option("ssh_config") or ""]
        return "ssh " + ":".join(parts)


def ssh_config(spec: str) -> Config:
    """`ssh:[user@]host[:port]` -> a configuration of the ssh target."""
    dest = spec.removeprefix("ssh:")
    host, _, port = dest.rpartition(":") if dest.count(":") == 1 else (dest, "", "")
    if not host or (port and not port.isdigit()):
        raise UsageError(f"bad ssh target {spec!r}", SshKind.hint)
    options = (("destination", host),) + ((("port", port),) if port else ())
    return Config(name=spec, target=SshKind.name, label=dest, options=options)
