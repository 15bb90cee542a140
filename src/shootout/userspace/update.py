"""`shootout userspace update NAME`: apt-get update and upgrade inside, then re-record versions."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from shootout.errors import TargetError
from shootout.model import Config
from shootout.system.journal import Journal
from shootout.userspace import registry
from shootout.userspace.create import Progress, _journal_for, require_root
from shootout.userspace.packages import installed_versions

_APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}


def _copy_resolv_conf(root: Path) -> None:
    """apt inside needs the host's name servers; never write through a symlink in the root."""
    source = Path("/etc/resolv.conf")
    if not source.exists():
        return
    dest = root / "etc/resolv.conf"
    if dest.is_symlink() or dest.exists():
        dest.unlink()
    shutil.copyfile(source, dest)


def update_userspace(name: str, *, progress: Progress | None = None,
                     journal: Journal | None = None) -> dict[str, tuple[str | None, str | None]]:
    """Upgrade userspace `name`; returns package -> (old, new) for what changed."""
    from shootout.targets.chroot import ChrootTarget  # the target imports this package

    require_root("updating a userspace")
    say = progress or (lambda _msg: None)
    with registry.locked(name, wait=False):
        found = registry.get_ready(name)
        marker = found.path / registry.UPDATING
        with _journal_for(journal) as j:
            target = ChrootTarget(Config(name=f"userspace:{name}", target="chroot", userspace=name), j)
            target.open()
            marker.touch()  # not ready again until the upgrade has finished
            try:
                _copy_resolv_conf(found.root)
                say(f"{name}: apt-get update")
                done = target.run(["apt-get", "update"], env=_APT_ENV, timeout=1800)
                if done.exit_status != 0:
                    marker.unlink()  # nothing was changed yet
                    raise TargetError(f"apt-get update failed in {name}: {done.stderr_tail(1) or done.exit_status}",
                                      "check the network connection to the mirror")
                say(f"{name}: apt-get upgrade")
                done = target.run(["apt-get", "-y", "-o", "Dpkg::Options::=--force-confold", "upgrade"],
                                  env=_APT_ENV, timeout=3600)
                if done.exit_status != 0:
                    raise TargetError(f"apt-get upgrade failed in {name}: {done.stderr_tail(1) or done.exit_status}",
                                      f"the userspace is marked incomplete: shootout userspace remove {name}, "
                                      "then create it again")
                target.run(["apt-get", "clean"], env=_APT_ENV, timeout=300)
            finally:
                target.close()
        versions = installed_versions(found.root)
        old = found.packages
        changed = {p: (old.get(p), versions.get(p)) for p in sorted(set(old) | set(versions))
                   if old.get(p) != versions.get(p)}
        registry.write_meta(found.path, dict(found.meta, packages=versions, updated_at=time.time()))
        marker.unlink()
    say(f"{name}: {len(changed)} package(s) changed")
    return changed
