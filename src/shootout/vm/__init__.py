"""Virtual machines booted from a userspace image with a Debian kernel (qemu-system)."""
