#!/usr/bin/env bash
# Install everything shootout needs on Debian 12 (as root) into ./.venv.
#   ./install.sh          the tool and the programs its workloads run
#   ./install.sh --test   the same plus what the test suite needs (Chromium for the HTML report test and the browser
#                         workloads, the PostgreSQL driver; .ci/postgres starts a server for the store's tests)
#   ./install.sh --print-packages ARCH [--test]
#                         print the Debian packages it would install on a Debian ARCH machine (amd64, i386, arm64,
#                         armhf), one a line, and change nothing (CI resolves them for every architecture)
# The packages depend on the architecture: gcc-multilib (host+m32) is x86 only; on arm64 the 32-bit side is the armhf
# userspace. On armhf (32-bit Raspberry Pi OS) PyPI has no numpy/scipy/matplotlib wheels: they come from Debian's
# packages, which the venv sees (--system-site-packages), instead of being built from source.
set -euo pipefail
cd "$(dirname "$0")"

test_mode=
print_arch=
case "${1:-}" in
  --print-packages)
    print_arch="${2:-}"
    [ "${3:-}" = "--test" ] && test_mode=1
    case "$print_arch" in
      amd64|i386|arm64|armhf) ;;
      *) echo "error: --print-packages needs an architecture: amd64, i386, arm64 or armhf (e.g. ./install.sh --print-packages arm64)" >&2
         exit 2 ;;
    esac ;;
  --test) test_mode=1 ;;
  "") ;;
  *) echo "error: unknown option ${1} (use no option, --test, or --print-packages ARCH [--test])" >&2; exit 2 ;;
esac

if [ -z "$print_arch" ] && [ "$(id -u)" -ne 0 ]; then
  echo "error: install.sh installs Debian packages and must run as root (try: sudo ./install.sh)" >&2
  exit 1
fi
arch="${print_arch:-$(dpkg --print-architecture)}"

packages=(
  python3 python3-venv python3-pip
  gcc libc6-dev make
  debootstrap mmdebstrap arch-test qemu-user-static binfmt-support util-linux procps
  coreutils openssl flac lame 7zip zstd xz-utils gzip fio mbw
  iproute2 ethtool
  e2fsprogs btrfs-progs xfsprogs  # filesystems for scratch = { fs = ... }
  fdisk mtools                    # image: sides: sfdisk reads the partition table, mtype the boot files
  btrfs-compsize                  # what a compressing btrfs scratch made of the files
  # network workloads: the programs measured, and the host's tools that build topologies
  iperf3 netsniff-ng wireguard-go wireguard-tools openvpn nftables clang
  golang-go                       # builds a current wireguard-go from the Go module proxy (net/wggo.py)
  openssh-client                  # ssh: targets (and vm: ones, reached over ssh)
)
case "$arch" in
  # -m32 and -mx32 (host+m32, host+mx32) and VMs of the host's own architecture (the vm: configurations)
  amd64|i386) packages+=(gcc-multilib qemu-system-x86) ;;
  arm64) packages+=(qemu-system-arm) ;;
  # no PyPI wheels for 32-bit arm: Debian's builds, seen by the venv
  armhf) packages+=(qemu-system-arm python3-numpy python3-scipy python3-matplotlib python3-psutil
                    python3-cryptography) ;;
esac
packages+=(mount)  # swapon/swapoff for swap setups (mkswap: util-linux; chattr +C: e2fsprogs)
# node and npm for the js workload: Debian's packages, unless a node (with its own npm,
# which conflicts with Debian's) is installed already
# (the printed list is a fresh machine's)
[ -z "$print_arch" ] && command -v node >/dev/null || packages+=(nodejs)
[ -z "$print_arch" ] && command -v npm >/dev/null || packages+=(npm)
extras=()
if [ -n "$test_mode" ]; then
  # sudo: the README's PostgreSQL set-up, followed by a test; dosfstools: the tests' SD card images
  extras=(chromium hyperfine openssh-server sudo dosfstools)
  # arm64: no -m32; the native kernels' test builds its 32-bit side with the armhf cross compiler
  [ "$arch" = arm64 ] && extras+=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)  # its libc: only recommended
  # the ELF baseline test builds a Raspberry Pi OS-like ARMv6+VFPv2 program with clang; it links with the armhf
  # binutils (gcc-arm-linux-gnueabihf would do too, but conflicts with gcc-multilib)
  case "$arch" in amd64|i386) extras+=(binutils-arm-linux-gnueabihf) ;; esac
  # the PMU test boots Debian's arm64 kernel (qemu's max CPU has a PMU) from an initramfs (cpio) with
  # shootout's helper, built by clang and linked by lld where the machine is not arm64 itself
  extras+=(cpio)
  case "$arch" in amd64|i386) extras+=(qemu-system-arm lld) ;; armhf) extras+=(lld) ;; esac
  # armhf: no psycopg-binary, zstandard or lz4 wheels on PyPI either
  [ "$arch" = armhf ] && extras+=(python3-psycopg python3-zstandard python3-lz4)
fi
if [ -n "$print_arch" ]; then
  printf '%s\n' "${packages[@]}" "${extras[@]}"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# wait for another apt (unattended-upgrades on a fresh machine) instead of failing at once
lock=(-o DPkg::Lock::Timeout=600)
apt-get "${lock[@]}" update -qq
apt_install() { apt-get "${lock[@]}" install -y -qq --no-install-recommends "$@" >/dev/null; }

# Debian's pip is recent enough; --no-compile: Python compiles the modules it imports on
# first use instead of every file of numpy, scipy and matplotlib now (about a third of
# the install's time).
if [ -n "$test_mode" ] && [ "$arch" = armhf ]; then
  pip_args=(-e '.[test]')  # the PostgreSQL driver is Debian's python3-psycopg
elif [ -n "$test_mode" ]; then
  pip_args=(-e '.[test,postgres]')
else
  pip_args=(-e .)
fi
if [ "$arch" = armhf ]; then
  apt_install "${packages[@]}" "${extras[@]}"
  echo "armhf: numpy, scipy, matplotlib, psutil and cryptography come from Debian's packages (no PyPI wheels" \
       "for 32-bit arm); the venv sees them (--system-site-packages)"
  python3 -m venv --system-site-packages .venv
  .venv/bin/pip install -q --no-compile "${pip_args[@]}"
else
  # The venv's PyPI wheels need only python3-venv: they download and unpack while apt installs
  # the rest (on a fresh 2-core machine about 12 s of the install's 74).
  apt_install python3 python3-venv python3-pip
  python3 -m venv .venv
  .venv/bin/pip install -q --no-compile "${pip_args[@]}" >.venv/pip.log 2>&1 &
  pip=$!
  trap 'kill "$pip" 2>/dev/null || true' EXIT  # apt failed: do not leave pip running
  apt_install "${packages[@]}" "${extras[@]}"
  wait "$pip" || { cat .venv/pip.log >&2; echo "error: pip install ${pip_args[*]} failed (above)" >&2; exit 1; }
  trap - EXIT
fi
# the counters pass's tools (cachegrind's model, the PMU's counters): a distribution without one
# (a 32-bit Raspberry Pi OS may lack either) still runs; the run says which sides went without
for optional in valgrind linux-perf; do
  apt_install "$optional" 2>/dev/null || echo "note: no $optional here: shootout's counters pass goes without it" >&2
done
echo "installed: $(.venv/bin/shootout --help >/dev/null && echo .venv/bin/shootout)"
