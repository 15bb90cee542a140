"""Debootstrap userspaces: create, list, update and remove them; configurations that run in them.

Import from the submodules: registry (what is on disk), create, update, apt (packages
installed on first use), configs (debian:RELEASE:ARCH, userspace:NAME), abi (ELF checks).
The chroot target that runs commands inside one is shootout.places.chroot.ChrootTarget.
"""
