"""The ssh kind: another machine reached over ssh (ssh:[USER@]HOST[:PORT], or a Host alias of
~/.ssh/config); its trials run there, beside this machine's."""

from __future__ import annotations

from shootout.base.errors import UsageError
from shootout.places.kind import Kind
from shootout.base.model import Config


class SshKind(Kind):
    name = "ssh"
    forms = ("ssh:[USER@]HOST[:PORT]",)
    hint = "use ssh:[USER@]HOST[:PORT] or an alias from ~/.ssh/config"
    target = "shootout.places.sshtarget:SshTarget"
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
