"""A private OpenSSH server for tests: its own host key, client key, known_hosts and config.

sshd listens on 127.0.0.1 on a free high port, inside a private mount namespace in which
/dev/shm and the remote cache directory are fresh tmpfs mounts: files the remote side
writes there are invisible to the host, so a test can tell that a target's files really
went through SSH. The machine's own sshd and its configuration are never touched.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from shootout.base.model import Config
from shootout.vm.qemu import free_port

SSHD = "/usr/sbin/sshd"


@dataclass
class LocalSshd:
    dir: Path
    port: int
    remote_cache: Path  # a tmpfs on the server's side; empty as seen from the host
    proc: subprocess.Popen[bytes]
    alias: str = "shootout-test"  # its Host in ssh_config: a machine's name

    @property
    def ssh_config(self) -> Path:
        return self.dir / "ssh_config"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    def config(self, name: str = "ssh:shootout-test", **options: str) -> Config:
        """A configuration of the ssh target that reaches this server through its ssh_config."""
        opts = {"destination": self.alias, "ssh_config": str(self.ssh_config),
                "remote_cache": str(self.remote_cache), **options}
        return Config(name=name, target="ssh", label="local sshd", options=tuple(opts.items()))

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the listener and every session it forked
        except ProcessLookupError:
            pass
        self.proc.wait()


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "shootout-test", "-f", str(path)], check=True)


def toml_table(server: LocalSshd, name: str) -> str:
    """A [[config]] of shootout.toml that reaches the server: a machine, by name."""
    return (f'[[config]]\nname = "{name}"\nspec = "ssh:{server.alias}"\n'
            f'options = {{ ssh_config = "{server.ssh_config}", remote_cache = "{server.remote_cache}" }}\n')


def start_machines(base: Path, count: int) -> list[LocalSshd]:
    """Several local "machines": an sshd each, with its own port, host key, client key and
    known_hosts, reached by its own alias (machine1, machine2, ...)."""
    servers: list[LocalSshd] = []
    try:
        for i in range(1, count + 1):
            servers.append(start_sshd(base / f"machine{i}", alias=f"machine{i}"))
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


def start_sshd(base: Path, alias: str = "shootout-test") -> LocalSshd:
    if not Path(SSHD).exists():
        raise AssertionError("sshd is missing: install the Debian package openssh-server")
    base.mkdir(parents=True, exist_ok=True)
    _keygen(base / "host_key")
    _keygen(base / "client_key")
    shutil.copy(base / "client_key.pub", base / "authorized_keys")
    cache = base / "remote-cache"
    cache.mkdir()
    port = free_port()
    (base / "sshd_config").write_text(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {base / 'host_key'}
AuthorizedKeysFile {base / 'authorized_keys'}
PidFile none
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
Subsystem sftp internal-sftp
LogLevel ERROR
""")
    host_key = (base / "host_key.pub").read_text().split()
    (base / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    (base / "ssh_config").write_text(f"""Host {alias}
  HostName 127.0.0.1
  Port {port}
  User root
  IdentityFile {base / 'client_key'}
  IdentitiesOnly yes
  UserKnownHostsFile {base / 'known_hosts'}
""")
    inner = (f"mount -t tmpfs -o mode=0755 none /run && mkdir /run/sshd && "
             f"mount -t tmpfs none /dev/shm && mount -t tmpfs none {cache} && "
             f"exec {SSHD} -D -e -f {base / 'sshd_config'}")
    log = open(base / "sshd.log", "wb")
    proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", inner],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    server = LocalSshd(base, port, cache, proc, alias)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"sshd exited: {(base / 'sshd.log').read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.05)
    server.stop()
    raise AssertionError("sshd did not start listening within 20 s")
