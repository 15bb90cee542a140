"""Configurations that run in userspaces: debian:RELEASE:ARCH, userspace:NAME, the headline pair."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from shootout.base.errors import ShootoutError
from shootout.base.model import Config
from shootout.places import kind_of
from shootout.places.chroot import ready as _ready
from shootout.places.chroot import userspace_config, userspace_config_of
from shootout.system.journal import journal
from shootout.system.mountns import private_mounts
from shootout.userspace import registry
from shootout.userspace.arches import (
    arch_problem,
    headline_arches,
    host_arch,
    kernel_arch,
)
from shootout.userspace.create import (
    DEFAULT_MIRROR,
    Progress,
    abort_all,
    create_userspace,
    host_release,
    preflight,
    require_builder,
)


def _missing(config: Config) -> tuple[str, str] | None:
    """(release, arch) of the debian:RELEASE:ARCH userspace the configuration names and lacks."""
    ref = config.userspace_ref
    if ref is not None and kind_of(config).userspace and config.userspace and not _ready(config.userspace):
        return ref.release, ref.arch
    return None


def made_now(config: Config, progress: Progress | None = None, packages: Sequence[str] = ()) -> Config:
    """The configuration, with its missing debian:RELEASE:ARCH userspace created now (with `packages`)."""
    missing = _missing(config)
    return userspace_config(*missing, progress=progress, packages=packages) if missing else config


def made_on_first_use(configs: list[Config], progress: Progress | None = None,
                      packages: Sequence[str] = ()) -> list[Config]:
    """A run's configurations that name debian:RELEASE:ARCH: the missing userspaces are created
    now, side by side, with `packages` besides minbase."""
    todo = []
    for config in configs:
        if missing := _missing(config):
            todo.append((config.userspace or "", missing[1], missing[0]))
    todo = list(dict.fromkeys(todo))
    for _, arch_name, release in todo:
        preflight(arch_name, release, DEFAULT_MIRROR)
    if todo:
        _create_parallel(todo, progress, packages)
    return configs


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
    return [userspace_config_of(n, release, a) for n, a in zip(names, arches)], None


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
