#!/usr/bin/env bash
# The README's two commands on an emulated Debian 12 arm64 machine: an arm64 root filesystem run
# under qemu-user (binfmt_misc) on this x86-64 host. Proves that a fresh clone installs and runs
# on arm64 (its arm64 and armhf userspaces built, the native kernels compiled on each side,
# measured, the table printed, every figure marked emulated), then runs the tests of the ARM
# paths inside it, the userspace tests among them (over an arm64 and an armhf userspace built inside). Gives no verdicts (everything is emulated); run it before changes to
# install.sh, the userspaces, the ARM facts or the targets. As root:
#
#   scripts/emulated-arm64.sh [--run-only | --tests-only] [-- ARGS FOR shootout run]
#
# Environment: EMU_BUDGET (default 10m: the measuring budget of `shootout run`), EMU_CACHE
# (default /var/tmp/shootout-emu-cache: the base root filesystem tarball and the downloaded
# .debs, wheels and userspace packages, kept between runs), EMU_TESTS (the pytest arguments).
# Every mount and binfmt_misc registration it makes is recorded in a journal and undone on exit,
# on Ctrl-C and on failure; the mounts also live in a private mount namespace, so even a killed
# script leaves none behind. The work directory (the root filesystem) is removed on exit.
{ # read whole before it runs: editing this file cannot change a copy that is running
set -euo pipefail

phases=(run tests)
case "${1:-}" in
  --run-only) phases=(run); shift ;;
  --tests-only) phases=(tests); shift ;;
esac
[ "${1:-}" = "--" ] && shift
run_args=("$@")
[ ${#run_args[@]} -eq 0 ] && run_args=(--emulate --budget "${EMU_BUDGET:-10m}")

[ "$(id -u)" -eq 0 ] || { echo "error: $0 mounts and chroots, run it as root (sudo $0)" >&2; exit 1; }
for tool in mmdebstrap qemu-aarch64-static qemu-arm-static git unshare; do
  command -v "$tool" >/dev/null || {
    echo "error: $tool is missing (apt-get install mmdebstrap qemu-user-static git util-linux)" >&2; exit 1; }
done

# everything below runs in a private mount namespace: its mounts die with it
if [ -z "${EMU_IN_NAMESPACE:-}" ]; then
  EMU_IN_NAMESPACE=1 exec unshare --mount --propagation private "$0" "${phases[@]/#/--only-}" -- "${run_args[@]}"
fi
only=()
while [[ ${1:-} == --only-* ]]; do only+=("${1#--only-}"); shift; done
[ "${1:-}" = "--" ] && shift
run_args=("$@")

repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${EMU_CACHE:-/var/tmp/shootout-emu-cache}"
mkdir -p "$cache/archives/partial" "$cache/pip" "$cache/shootout"
# Work folders of earlier copies that were SIGKILLed (no trap ran): each copy holds a lock on its
# folder's .owner for its lifetime, so a folder whose lock is free has no owner left. Its mounts
# died with that copy's mount namespace. A folder without .owner (an older copy) goes once it is
# an hour old.
for old in /var/tmp/shootout-emu.??????; do
  [ -d "$old" ] || continue
  if [ -n "$(find "$old/.owner" -mmin +1 2>/dev/null)" ]; then  # a minute old: its copy got to lock it
    flock -n "$old/.owner" rm -rf --one-file-system "$old" 2>/dev/null || continue
  elif [ ! -e "$old/.owner" ] && [ -n "$(find "$old" -maxdepth 0 -mmin +60)" ]; then
    rm -rf --one-file-system "$old"
  else
    continue
  fi
  echo "removed $old, left by a killed earlier copy of $0" >&2
done
work="$(mktemp -d /var/tmp/shootout-emu.XXXXXX)"
exec 7>"$work/.owner"
flock -x 7
root="$work/root"
journal="$work/journal"  # one undo command a line, undone last first
: >"$journal"
t0=$(date +%s)

say() { printf '[emulated-arm64 %4ds] %s\n' $(( $(date +%s) - t0 )) "$*" >&2; }

undo_all() {
  local status=$? line failed=0
  trap - EXIT INT TERM
  if [ -n "$child" ]; then kill "$child" 2>/dev/null; wait "$child" 2>/dev/null; fi
  if [ -s "$journal" ]; then
    while IFS= read -r line; do
      sh -c "$line" || { echo "undo failed: $line" >&2; failed=1; }
    done < <(tac "$journal")
  fi
  if [ "$failed" -eq 0 ]; then
    rm -rf --one-file-system "$work"
  else
    echo "left $work (an undo failed; its mounts die with this script's mount namespace)" >&2
  fi
  say "done (exit status $status)"
  exit "$status"
}
trap undo_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# do CMD, record UNDO first (so a failure half-way is undone too)
change() { local undo="$1"; shift; printf '%s\n' "$undo" >>"$journal"; "$@"; }
mounted() { change "umount -l '$2'" mount "$@"; }
bind() { mkdir -p "$2"; change "umount -l '$2'" mount --bind "$1" "$2"; }

phase_start=0
phase() { phase_start=$(date +%s); say "phase: $*"; }
phase_end() { say "phase took $(( $(date +%s) - phase_start ))s: $*"; }

# binfmt_misc: qemu for arm64 (the machine) and for armhf (its 32-bit side, which a real Cortex-A72
# runs natively). Several copies of this script may run at once: each holds a shared lock for its
# lifetime, the entries they added are listed in $ours, and the last one to leave removes them
# (entries that were there before are left alone).
binfmt=/proc/sys/fs/binfmt_misc
[ -e "$binfmt/register" ] || mounted -t binfmt_misc binfmt_misc "$binfmt"
ours=/run/shootout-emulated-arm64.binfmt
exec 8>>/run/shootout-emulated-arm64.mutex 9>>/run/shootout-emulated-arm64.users
flock -x 8
flock -s 9
printf '%s\n' "flock -x 8; if flock -n -x 9; then while read -r e; do [ ! -e '$binfmt/'\$e ] || echo -1 > '$binfmt/'\$e; done < '$ours' 2>/dev/null; rm -f '$ours'; fi; flock -u 8" >>"$journal"
for qemu in aarch64 arm; do
  if ! head -1 "$binfmt/qemu-$qemu" 2>/dev/null | grep -qx enabled; then
    cat "/usr/lib/binfmt.d/qemu-$qemu.conf" >"$binfmt/register"
    echo "qemu-$qemu" >>"$ours"
    say "registered qemu-$qemu with binfmt_misc"
  fi
done
flock -u 8

phase "arm64 Debian 12 root filesystem"
base="$cache/bookworm-arm64-minbase.tar"
if [ ! -s "$base" ]; then
  # a fresh machine's essentials: the minimal base system and TLS certificates; install.sh adds the rest
  mmdebstrap --quiet --format=tar --arch=arm64 --variant=minbase --include=ca-certificates bookworm "$base.new" \
    http://deb.debian.org/debian
  mv "$base.new" "$base"
fi
mkdir -p "$root"
tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# this machine's TLS trust (a proxy may sign for PyPI with its own CA), for pip inside
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/host-ca-certificates.crt"
phase_end "root filesystem"

bind "$root" "$root"  # its / is a mount point, as a machine's is (shootout makes it a slave mount)
mounted -t proc proc "$root/proc"
mounted -t sysfs sysfs "$root/sys"
bind /sys/fs/cgroup "$root/sys/fs/cgroup"
bind /dev "$root/dev"
mkdir -p "$root/dev/pts" "$root/dev/shm"
mounted -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
mounted -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mounted -t tmpfs -o mode=755 tmpfs "$root/run"
bind "$cache/archives" "$root/var/cache/apt/archives"
bind "$cache/pip" "$root/root/.cache/pip"
bind "$cache/shootout" "$root/root/.cache/shootout"
# binfmt_misc is the kernel's, not the root filesystem's: a registration made inside (qemu-user-static's
# and binfmt-support's maintainer scripts register qemu-x86_64 with an arm64 interpreter) would take every
# x86-64 program of this machine to it, and nothing here would run any more. So the emulated machine is
# a container, as Debian's scripts know one (container= in PID 1's environment, policy-rc.d starts no
# service), and its update-binfmts registers nothing (diverted to true).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
chroot "$root" dpkg-divert --quiet --local --rename --add /usr/sbin/update-binfmts
ln -sf /bin/true "$root/usr/sbin/update-binfmts"
# apt in the root filesystem keeps what it downloads (the next run fetches nothing again)
echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$root/etc/apt/apt.conf.d/90keep"
rm -f "$root/etc/apt/apt.conf.d/docker-clean"

phase "a fresh clone of $(git -C "$repo" rev-parse --abbrev-ref HEAD) ($(git -C "$repo" rev-parse --short HEAD))"
git clone --quiet --no-hardlinks "$repo" "$root/root/shootout"
phase_end "clone"

# a command in the root filesystem, in a PID namespace of its own: when it ends (or this script is
# killed), every process it started goes too, before the mounts are undone
child=
inside() {
  unshare --pid --fork --kill-child --mount-proc="$root/proc" chroot "$root" /usr/bin/env -i \
    container=shootout-emulated-arm64 HOME=/root TERM="${TERM:-dumb}" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_CERT=/etc/ssl/certs/host-ca-certificates.crt SSL_CERT_FILE=/etc/ssl/certs/host-ca-certificates.crt \
    LANG=C.UTF-8 /bin/bash -c "cd /root/shootout && $1" &
  child=$!
  local rc=0
  while kill -0 "$child" 2>/dev/null; do guard; sleep 1; done
  wait "$child" || rc=$?
  child=
  guard
  [ ! -s "$work/rogue" ] || { say "removed binfmt_misc entries registered from inside: $(cat "$work/rogue")"; exit 1; }
  return "$rc"
}


entries() { ls "$binfmt" | sort; }
before="$(entries)"
# every second while a command runs inside: an entry that appeared meanwhile is removed at once (it would
# be the root filesystem's, with an arm64 interpreter), and the script stops when the command has ended
guard() {
  local e
  for e in $(comm -13 <(echo "$before") <(entries)); do
    echo -1 >"$binfmt/$e" && echo "$e" >>"$work/rogue"
  done
}
say "inside: uname -m $(inside 'uname -m'), dpkg $(inside 'dpkg --print-architecture')"
status=0
for p in "${only[@]}"; do
  case "$p" in
    run)
      phase "./install.sh"
      inside './install.sh' || { status=$?; say "install.sh failed ($status)"; exit "$status"; }
      phase_end "./install.sh"
      # the README's command as it stands: refused in one line here, since this machine is emulated
      refused=0; inside '.venv/bin/shootout run' || refused=$?
      [ "$refused" -ne 0 ] || { say "shootout run was not refused on an emulated machine"; exit 1; }
      phase ".venv/bin/shootout run ${run_args[*]}"
      inside ".venv/bin/shootout run ${run_args[*]@Q}" || status=$?
      phase_end "shootout run (exit status $status)"
      ;;
    tests)
      phase "./install.sh --test"
      inside './install.sh --test' || { status=$?; say "install.sh --test failed ($status)"; exit "$status"; }
      phase_end "./install.sh --test"
      # the userspace tests build their shared arm64 and armhf userspaces here, inside (shared_spaces.py)
      tests="${EMU_TESTS:-tests/unit/test_arm_facts.py tests/unit/test_arm_refusals.py tests/unit/test_emulated_host.py tests/unit/test_boots.py tests/unit/test_pi_kernel_modes.py tests/e2e/test_pi_across_boots.py tests/integration/test_install_arches.py tests/integration/test_native_kernels.py tests/integration/test_userspace.py}"
      phase ".venv/bin/python -m pytest -q $tests"
      inside ".venv/bin/python -m pytest -q $tests" || status=$?
      phase_end "pytest (exit status $status)"
      ;;
  esac
done
exit "$status"
}
