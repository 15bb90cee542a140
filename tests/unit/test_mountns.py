"""The private mount namespace's one-line errors: in a chroot whose / is not a mount point, the
reason and the fix, not "cannot make / a slave mount: Invalid argument"."""

from __future__ import annotations

import errno

from shootout.system.mountns import slave_failure

HOST = "21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n22 21 0:21 / /proc rw - proc proc rw\n"
# a chroot into /srv/pi whose directory is not a mount of its own: the mount that holds it is
# above the root, so mountinfo lists no mount at /
CHROOT = "40 21 0:21 / /proc rw - proc proc rw\n41 21 0:22 / /sys rw - sysfs sysfs rw\n"


def test_a_root_that_is_not_a_mount_point_is_named_with_the_fix() -> None:
    err = slave_failure(errno.EINVAL, CHROOT)
    assert err.message == ("cannot keep shootout's mounts private: / is not a mount point here (a chroot into a "
                           "directory), so it cannot be made a slave of the host's mounts")
    assert "mount --bind DIR DIR" in err.hint and "\n" not in str(err)


def test_other_failures_keep_their_reason() -> None:
    assert "not a mount point" not in slave_failure(errno.EINVAL, HOST).message
    denied = slave_failure(errno.EPERM, CHROOT)
    assert "Operation not permitted" in denied.message and "run as root" in denied.hint
