#!/usr/bin/env bash
# How long install.sh takes on a fresh Debian 12: a minbase bookworm made by mmdebstrap, a clone
# of the repository inside, ./install.sh run in it by chroot, its wall time printed. Root, on
# Debian 12 with mmdebstrap; the chroot is removed afterwards. Run under the shared lock:
#
#   flock -o /tmp/shootout-bench.lock benchmarks/fresh_install.sh [REPO]   (default: this clone)
#
# The host's local CA certificates and /etc/pip.conf are copied in, so that a machine behind
# a TLS-inspecting proxy reaches PyPI as the host does; /proc, /dev and /sys are bind-mounted
# for apt's maintainer scripts and unmounted on exit.
set -euo pipefail
repo=$(realpath "${1:-$(dirname "$0")/..}")
root=$(mktemp -d /var/tmp/shootout-fresh-install.XXXXXX)
cleanup() {
  for m in sys dev/pts dev proc; do mountpoint -q "$root/$m" && umount "$root/$m"; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
rmdir "$root"  # mmdebstrap wants to make it
mmdebstrap --variant=minbase --include=ca-certificates,git bookworm "$root" http://deb.debian.org/debian >/dev/null 2>&1
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null &&
  chroot "$root" update-ca-certificates >/dev/null 2>&1 || true
cp /etc/resolv.conf "$root/etc/"
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/"
git clone -q "$repo" "$root/root/shootout"
mount -t proc proc "$root/proc"
for m in dev dev/pts sys; do mount --bind "/$m" "$root/$m"; done
uptime
chroot "$root" env PIP_CERT=/etc/ssl/certs/ca-certificates.crt bash -c '
  cd /root/shootout && start=$EPOCHREALTIME && ./install.sh &&
  python3 -c "print(\"install.sh on a fresh Debian 12: %.1f s\" % ($EPOCHREALTIME - $start))"'
uptime
