"""Targets: where a command runs (host, chroot userspace, fake for tests)."""
