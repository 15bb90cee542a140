#!/bin/sh
# PID 1 of a shootout VM (booted with init=/sbin/shootout-init): the kernel's filesystems,
# the network of qemu's user-mode NAT, then sshd, through which the VM target runs everything.
# No systemd: a guest that boots in seconds under KVM and in under a minute under TCG.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /run/sshd
hostname shootout-vm
modprobe virtio_net 2>/dev/null
ip link set lo up
dev=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
ip link set "$dev" up
ip addr add 10.0.2.15/24 dev "$dev"
ip route add default via 10.0.2.2
echo "shootout-vm: sshd starting on $dev" > /dev/console
exec /usr/sbin/sshd -D -e
