#!/usr/bin/env bash
# Install everything shootout needs on Debian 12 (as root) into ./.venv.
#   ./install.sh          the tool and the programs its workloads run
#   ./install.sh --test   the same plus what the test suite needs (Chromium for the HTML report test and the browser
#                         workloads, the PostgreSQL driver; .ci/postgres starts a server for the store's tests)
set -euo pipefail
cd "$(dirname "$0")"

if [ "$(id -u)" -ne 0 ]; then
  echo "error: install.sh installs Debian packages and must run as root (try: sudo ./install.sh)" >&2
  exit 1
fi

packages=(
  python3 python3-venv python3-pip
  gcc gcc-multilib libc6-dev make
  debootstrap mmdebstrap arch-test qemu-user-static binfmt-support util-linux procps
  coreutils openssl flac lame 7zip zstd xz-utils gzip fio mbw
  iproute2 ethtool
  e2fsprogs btrfs-progs xfsprogs  # filesystems for scratch = { fs = ... }
  btrfs-compsize                  # what a compressing btrfs scratch made of the files
  # network workloads: the programs measured, and the host's tools that build topologies
  iperf3 netsniff-ng wireguard-go wireguard-tools openvpn nftables clang
  openssh-client                  # ssh: targets (and vm: ones, reached over ssh)
)
# VMs of the host's own architecture (the vm: configurations)
case "$(dpkg --print-architecture)" in
  arm64|armhf) packages+=(qemu-system-arm) ;;
  *) packages+=(qemu-system-x86) ;;
esac
packages+=(mount)  # swapon/swapoff for swap setups (mkswap: util-linux; chattr +C: e2fsprogs)
# node and npm for the js workload: Debian's packages, unless a node (with its own npm,
# which conflicts with Debian's) is installed already
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
extras=()
if [ "${1:-}" = "--test" ]; then
  extras=(chromium hyperfine openssh-server sudo)  # sudo: the README's PostgreSQL set-up, followed by a test
fi

export DEBIAN_FRONTEND=noninteractive
# wait for another apt (unattended-upgrades on a fresh machine) instead of failing at once
lock=(-o DPkg::Lock::Timeout=600)
apt-get "${lock[@]}" update -qq
apt-get "${lock[@]}" install -y -qq --no-install-recommends "${packages[@]}" "${extras[@]}" >/dev/null

python3 -m venv .venv
# Debian's pip is recent enough; --no-compile: Python compiles the modules it imports on
# first use instead of every file of numpy, scipy and matplotlib now (about a third of
# the install's time).
if [ "${1:-}" = "--test" ]; then
  .venv/bin/pip install -q --no-compile -e '.[test,postgres]'
else
  .venv/bin/pip install -q --no-compile -e .
fi
echo "installed: $(.venv/bin/shootout --help >/dev/null && echo .venv/bin/shootout)"
