"""Debootstrap userspaces: create, list, update and remove them.

Import from the submodules: registry (what is on disk), create, update, apt (packages
installed on first use), arches, binfmt, rootfs. The chroot place that runs commands inside one
is shootout.places.chroot; the configurations that name one are shootout.configs.userspaces, and
their ABI checks shootout.configs.abi.
"""
