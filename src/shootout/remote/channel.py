"""The SSH channel: OpenSSH's own `ssh` client over one control master per target.

Why the ssh client and not a Python library: it is the user's ssh — ~/.ssh/config (Host
aliases, ProxyJump, certificates), the agent, hardware keys, hashed known_hosts and
@cert-authority lines all work as they do at the user's prompt, and OpenSSH is as well kept
as an SSH implementation gets. The control master makes each exec a new channel on one
authenticated connection instead of a new handshake.

Host keys are always checked: StrictHostKeyChecking=yes refuses an unknown or changed key,
and BatchMode=yes makes ssh fail instead of prompting. Either failure, like an unreachable
host or refused keys, is one TargetError line.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from shootout.base.errors import TargetError, ToolMissing
from shootout.execution.tools import find_tool
from shootout.system.children import popen_dying_with_us
from shootout.system.journal import Journal

SSH_FAILED = 255  # ssh's own exit status when the connection, not the command, failed
CONNECT_TIMEOUT_S = 15


@dataclass(frozen=True)
class SshAddress:
    """How to reach a machine; None means "as the user's ssh configuration says"."""

    destination: str  # [user@]host, or a Host alias of ssh_config
    port: int | None = None
    config_file: str | None = None  # ssh -F
    identity: str | None = None  # ssh -i (then only this key is offered)
    known_hosts: str | None = None  # UserKnownHostsFile

    def options(self) -> list[str]:
        """ssh options for every connection, before the destination."""
        opts = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4", "-o", "LogLevel=ERROR", "-T"]
        if self.config_file:
            opts = ["-F", self.config_file, *opts]
        if self.port:
            opts += ["-p", str(self.port)]
        if self.identity:
            opts += ["-i", self.identity, "-o", "IdentitiesOnly=yes"]
        if self.known_hosts:
            opts += ["-o", f"UserKnownHostsFile={self.known_hosts}"]
        return opts


@dataclass(frozen=True)
class Completed:
    exit_status: int
    stdout: bytes
    stderr: bytes

    def text(self) -> str:
        return self.stdout.decode(errors="replace")


def ssh_failure(stderr: str, where: str) -> TargetError:
    """One line for what ssh printed when it could not connect or authenticate."""
    text = stderr.strip()
    if "REMOTE HOST IDENTIFICATION HAS CHANGED" in text or "host key for" in text.lower() and "has changed" in text:
        line = re.search(r"Offending \S+ key in (\S+)", text)
        return TargetError(f"the host key of {where} does not match known_hosts"
                           + (f" ({line.group(1)})" if line else "") + "; refusing to connect",
                           "if the host was really reinstalled, check its new key's fingerprint with its owner, "
                           "then remove the old line (ssh-keygen -R HOST)")
    if "host key is known" in text or "Host key verification failed" in text:
        return TargetError(f"the host key of {where} is not in known_hosts; refusing to connect",
                           "check the fingerprint with the host's owner, then connect once with ssh to add it")
    if "Permission denied" in text:
        return TargetError(f"{where} refused our keys ({_last(text)})",
                           "load your key into ssh-agent or set IdentityFile for this host in ~/.ssh/config")
    for reason in ("Connection refused", "timed out", "No route to host", "Could not resolve hostname",
                   "Network is unreachable", "Connection closed", "Connection reset"):
        if reason in text:
            return TargetError(f"cannot reach {where}: {_last(text)}", "check the host name, the port and that sshd runs there")
    return TargetError(f"ssh to {where} failed: {_last(text) or 'no message'}", "try `ssh HOST true` by hand")


def _last(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


class SshChannel:
    """An ssh control master (started by open(), ended by close() or the journal) and its execs."""

    def __init__(self, address: SshAddress, journal: Journal) -> None:
        self.address = address
        self.journal = journal
        self._dir: Path | None = None
        self._master: subprocess.Popen[bytes] | None = None
        self._entry: int | None = None

    @property
    def ssh(self) -> str:
        found = find_tool("ssh")
        if found is None:
            raise ToolMissing("ssh", "openssh-client")
        return found

    @property
    def control_path(self) -> str:
        assert self._dir is not None, "channel not open"
        return str(self._dir / "ctl")

    def client_argv(self) -> list[str]:
        """`ssh` with every option, riding the master: append the destination and a command."""
        return [self.ssh, *self.address.options(), "-o", f"ControlPath={self.control_path}", "-o", "ControlMaster=no"]

    def open(self) -> None:
        if self._master is not None:
            return
        # A short path: a unix socket's name is limited to 108 bytes.
        self._dir = Path(tempfile.mkdtemp(prefix="shootout-ssh-"))
        stop = [self.ssh, *self.address.options(), "-o", f"ControlPath={self.control_path}", "-O", "exit",
                self.address.destination]
        self._entry = self.journal.record(f"ssh connection to {self.address.destination}",
                                          [{"argv": stop, "tolerate_failure": True}, {"rmtree": str(self._dir)}])
        log = open(self._dir / "master.log", "w+b")
        self._master = popen_dying_with_us(
            [self.ssh, *self.address.options(), "-o", f"ControlPath={self.control_path}", "-o", "ControlMaster=yes",
             "-o", "ControlPersist=no", "-N", self.address.destination],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + CONNECT_TIMEOUT_S + 30
        try:
            while not Path(self.control_path).exists():
                if self._master.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise ssh_failure(log.read().decode(errors="replace") or "Connection timed out",
                                      self.address.destination)
                time.sleep(0.05)
        except BaseException:
            log.close()
            self.close()
            raise
        log.close()

    def close(self) -> None:
        if self._master is not None:
            subprocess.run([*self.client_argv(), "-O", "exit", self.address.destination], capture_output=True, timeout=30)
            try:
                self._master.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._master.kill()
                self._master.wait()
            self._master = None
        if self._entry is not None:
            self.journal.undo_entry(self._entry)  # removes the socket directory
            self._entry = None
        self._dir = None

    def exec(self, command: str, *, stdin: bytes | None = None, timeout: float = 600.0) -> Completed:
        """Run a shell command line on the remote; an ssh-level failure raises TargetError."""
        argv = [*self.client_argv(), self.address.destination, "--", command]
        try:
            done = subprocess.run(argv, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                                  capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TargetError(f"{self.address.destination} did not answer within {timeout:.0f} s",
                              "check the connection; the remote command is killed when its channel closes") from None
        if done.returncode == SSH_FAILED and not done.stdout and self._looks_like_ssh(done.stderr):
            raise ssh_failure(done.stderr.decode(errors="replace"), self.address.destination)
        return Completed(done.returncode, done.stdout, done.stderr)

    def popen(self, command: str) -> subprocess.Popen[bytes]:
        """A long-running remote command (a monitor's stream); closing its pipes ends it remotely."""
        return subprocess.Popen([*self.client_argv(), self.address.destination, "--", command],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def check(self, command: str, what: str, *, stdin: bytes | None = None, timeout: float = 600.0) -> str:
        """exec that must succeed; returns stdout."""
        done = self.exec(command, stdin=stdin, timeout=timeout)
        if done.exit_status != 0:
            raise TargetError(f"{what} failed on {self.address.destination}: "
                              f"{_last(done.stderr.decode(errors='replace')) or 'exit ' + str(done.exit_status)}",
                              "run it by hand: ssh " + self.address.destination + " " + shlex.quote(command)[:150])
        return done.text()

    @staticmethod
    def _looks_like_ssh(stderr: bytes) -> bool:
        text = stderr.decode(errors="replace")
        return not text or text.startswith(("ssh:", "mux_client", "Control socket", "kex_exchange", "Connection"))\
            or "host key" in text.lower() or "Permission denied" in text
