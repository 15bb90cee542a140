"""`shootout userspace update NAME`: apt-get update and upgrade inside, then re-record versions."""

from __future__ import annotations

import time
from collections.abc import Callable

from shootout.base.errors import TargetError, require_root
from shootout.base.model import Config
from shootout.system.journal import Journal
from shootout.userspace import registry
from shootout.userspace.apt import APT_ENV, UserspacePlace, apt_get, refresh
from shootout.userspace.create import ROOT_HINT, Progress, _journal_for
from shootout.userspace.packages import installed_versions


def update_userspace(name: str, open_place: Callable[[Config, Journal], UserspacePlace], *, progress: Progress | None = None,
                     journal: Journal | None = None) -> dict[str, tuple[str | None, str | None]]:
    """Upgrade userspace `name`, run in it through open_place (the chroot target: userspace sits
    below the targets); returns package -> (old, new) for what changed."""
    require_root("updating a userspace", ROOT_HINT)
    say = progress or (lambda _msg: None)
    with registry.locked(name, wait=False):
        found = registry.get_ready(name)
        marker = found.path / registry.UPDATING
        with _journal_for(journal) as j:
            target = open_place(Config(name=f"userspace:{name}", target="chroot", userspace=name), j)
            target.open()
            marker.touch()  # not ready again until the upgrade has finished
            try:
                say(f"{name}: apt-get update")
                try:
                    for warning in refresh(target):
                        say(warning)
                except TargetError:
                    marker.unlink()  # nothing was changed yet
                    raise
                say(f"{name}: apt-get upgrade")
                apt_get(target, ["-y", "-o", "Dpkg::Options::=--force-confold", "upgrade"], "apt-get upgrade",
                        f"the userspace is marked incomplete: shootout userspace remove {name}, then create it again")
                target.run(["apt-get", "clean"], env=APT_ENV, timeout=300)
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
