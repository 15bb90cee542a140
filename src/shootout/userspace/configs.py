"""Configurations that run in userspaces: debian:RELEASE:ARCH, userspace:NAME, the headline pair."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from shootout.errors import ShootoutError, TargetError
from shootout.model import Config
from shootout.system.journal import journal
from shootout.system.namespace import private_mounts
from shootout.userspace import registry
from shootout.userspace.arches import arch, arch_problem, headline_arches, host_arch, kernel_arch
from shootout.userspace.create import (
    DEFAULT_MIRROR,
    Progress,
    abort_all,
    create_userspace,
    host_release,
    preflight,
    require_builder,
)


def _config(name: str, release: str, arch_name: str) -> Config:
    return Config(name=f"debian:{release}:{arch_name}", target="chroot", label=f"{arch_name} userspace",
                  userspace=name)


def _ready(name: str) -> bool:
    return any(u.state == "ready" for u in registry.find(name))


def userspace_config(release: str, arch_name: str, *, progress: Progress | None = None,
                     create: bool = True, packages: Sequence[str] = ()) -> Config:
    """debian:RELEASE:ARCH: the userspace debian-RELEASE-ARCH, created on first use (create=False:
    only named; made_on_first_use() creates it when a run is about to use it), with `packages`
    besides minbase."""
    arch(arch_name)
    name = registry.check_name(registry.default_name(release, arch_name))
    if not _ready(name):
        if not create:
            return _config(name, release, arch_name)
        create_userspace(name, arch_name, release, progress=progress, packages=packages)
    found = registry.get_ready(name)
    if (found.arch, found.release) != (arch_name, release):
        raise TargetError(f"userspace {name} holds {found.release} {found.arch}, not {release} {arch_name}",
                          f"shootout userspace remove {name}, or use userspace:{name}")
    return _config(name, release, arch_name)


def made_on_first_use(configs: list[Config], progress: Progress | None = None,
                      packages: Sequence[str] = ()) -> list[Config]:
    """A run's configurations that name debian:RELEASE:ARCH: the missing userspaces are created
    now, side by side, with `packages` besides minbase."""
    todo = []
    for config in configs:
        if config.target == "chroot" and config.userspace and not _ready(config.userspace):
            if found := re.fullmatch(r"debian-(\w+)-(\w+)", config.userspace):
                todo.append((config.userspace, found[2], found[1]))
    todo = list(dict.fromkeys(todo))
    for _, arch_name, release in todo:
        preflight(arch_name, release, DEFAULT_MIRROR)
    if todo:
        _create_parallel(todo, progress, packages)
    return configs


def named_userspace_config(name: str) -> Config:
    """userspace:NAME: an existing userspace of any name."""
    found = registry.get_ready(name)
    return Config(name=f"userspace:{name}", target="chroot", label=f"{name} ({found.arch})", userspace=name)


def headline_configs(progress: Progress | None = None, packages: Sequence[str] = (),
                     emulate: bool = False) -> tuple[list[Config], str | None]:
    """The default main job: native 64-bit userspace vs its 32-bit companion of the host's release.

    Both are created (in parallel) when missing, with `packages` besides minbase. A companion
    this machine runs only under qemu is refused, unless `emulate` (--emulate: marked emulated).
    Returns ([64-bit, 32-bit], None), or ([], one-line reason) when that cannot be done here,
    for the caller to fall back.
    """
    userspace, kernel = host_arch(), kernel_arch()
    pair = headline_arches(userspace, kernel)
    if pair is None:
        on = f" on a {kernel} kernel" if kernel != userspace else ""
        return [], f"no 32-bit companion userspace for {userspace}{on} (only amd64 with i386, arm64 with armhf)"
    native, companion = pair
    if not emulate and (problem := arch_problem(companion)):
        return [], f"{problem[0]} ({problem[1]})"
    release = host_release()
    if release is None:
        return [], "the host is not a Debian release, so there is no release to build a userspace of"
    if os.geteuid() != 0:
        return [], "userspaces need root (chroot and mounts)"
    arches = [native, companion]
    names = [registry.default_name(release, a) for a in arches]
    todo = [(n, a) for n, a in zip(names, arches) if not _ready(n)]
    if todo:
        try:
            require_builder(companion)
        except ShootoutError as exc:
            return [], f"{exc.message} ({exc.hint})"
        try:
            for _, a in todo:
                preflight(a, release, DEFAULT_MIRROR)
        except ShootoutError as exc:
            return [], exc.message
        try:
            _create_parallel([(n, a, release) for n, a in todo], progress, packages)
        except ShootoutError as exc:
            return [], f"could not create the userspaces: {exc.message}"
    return [_config(n, release, a) for n, a in zip(names, arches)], None


def _create_parallel(todo: list[tuple[str, str, str]], progress: Progress | None,
                     packages: Sequence[str]) -> None:
    """Create the userspaces side by side (downloads and dpkg of one overlap the other's)."""
    private_mounts()  # before the threads start, so they all mount in the one namespace
    with journal() as j, ThreadPoolExecutor(max_workers=len(todo)) as pool:
        futures = [pool.submit(create_userspace, n, a, release, progress=progress, journal=j, checked=True,
                               packages=packages)
                   for n, a, release in todo]
        try:
            errors = [f.exception() for f in futures]
        except BaseException:
            abort_all()  # Ctrl-C: stop the mmdebstraps; each create then cleans up after itself
            for f in futures:
                f.exception()
            raise
    for exc in errors:
        if exc is not None:
            raise exc
