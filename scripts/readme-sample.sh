#!/usr/bin/env bash
# README's sample: a small real run of the main job's two configurations (the native 64-bit
# Debian userspace and its 32-bit companion) on two quick native workloads, then its table as an
# 80-column terminal shows it and its summary chart. Writes docs/img/summary.png and
# docs/img/sample-table.txt, and puts the table, with the machine, its load and the run's time,
# between README.md's "sample" markers. As root (the run makes two userspaces), from a checkout
# after ./install.sh:
#
#   scripts/readme-sample.sh
#
# Environment: PYTHON (default .venv/bin/python), SAMPLE_HOME (default: a temporary data
# directory, removed at the end; the packages mmdebstrap downloads stay in ~/.cache/shootout),
# SAMPLE_ARGS (default: the configurations, workloads, seed and budget below).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-$root/.venv/bin/python}"
[ -x "$python" ] || { echo "error: no $python: run ./install.sh first (or set PYTHON)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "error: $0 makes two userspaces, run it as root (sudo $0)" >&2; exit 1; }
grep -q '^<!-- sample: begin -->$' README.md && grep -q '^<!-- sample: end -->$' README.md ||
  { echo "error: README.md lost its '<!-- sample: begin -->' / '<!-- sample: end -->' lines: put them back" >&2; exit 1; }

made_home=0
if [ -z "${SAMPLE_HOME:-}" ]; then SAMPLE_HOME="$(mktemp -d "${TMPDIR:-/tmp}/shootout-sample.XXXXXX")"; made_home=1; fi
out="$(mktemp -d "${TMPDIR:-/tmp}/shootout-sample-out.XXXXXX")"
export SHOOTOUT_HOME="$SAMPLE_HOME" PYTHONPATH="$root/src"
shootout() { "$python" -m shootout "$@"; }
cleanup() {
  shootout doctor >/dev/null 2>&1 || true   # undo anything a failed run left behind
  rm -rf "$out"
  if ((made_home)); then rm -rf "$SAMPLE_HOME"; fi
}
trap cleanup EXIT

read -r -a args <<<"${SAMPLE_ARGS:--c debian:bookworm:amd64 -c debian:bookworm:i386 -w intmix -w ptrtree --seed 1 --budget 3m}"
load() { cut -d' ' -f1-3 /proc/loadavg; }
load_before="$(load)"
start=$(date +%s)
shootout run "${args[@]}" >"$out/run.log" 2>&1 || { tail -n 20 "$out/run.log" >&2; exit 1; }
seconds=$(($(date +%s) - start))
load_after="$(load)"

# the table as an 80-column terminal shows it (a pty of 80 columns), colours stripped
script -qec "stty cols 80 rows 200; '$python' -m shootout show last" /dev/null |
  sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/[[:space:]]*$//' >"$out/table.txt"
shootout report last --format png --out "$out/report" >/dev/null
mkdir -p docs/img
cp "$out/report/summary.png" docs/img/summary.png
cp "$out/table.txt" docs/img/sample-table.txt

made_how="its userspaces already made"
((made_home)) && made_how="its two userspaces made in a fresh data directory"
machine="$(nproc)-CPU $(uname -m) $(. /etc/os-release && echo "$PRETTY_NAME") machine"
virt="$(systemd-detect-virt 2>/dev/null || true)"
[ -n "$virt" ] && [ "$virt" != none ] && machine="$machine (virtualized: $virt)"
{
  echo '<!-- sample: begin -->'
  echo '<!-- written by scripts/readme-sample.sh: rerun it rather than edit this block -->'
  echo "A small real run of the main job's two configurations on two of its workloads,"
  echo
  echo "    shootout run ${args[*]}"
  echo
  echo "took ${seconds} s on a $machine, $made_how, at a load average of ${load_before%% *}" \
    "before and ${load_after%% *} after (1 minute, on $(nproc) CPUs). Then \`shootout show\` at 80 columns:" |
    fold -s -w 96 | sed 's/[[:space:]]*$//'
  echo
  echo '```'
  cat "$out/table.txt"
  echo '```'
  echo
  echo '![The summary chart of that run: the speed-up of each workload with its interval](docs/img/summary.png)'
  echo '<!-- sample: end -->'
} >"$out/block.md"
# README.md with the block between its markers replaced
awk -v block="$out/block.md" '
  /^<!-- sample: begin -->$/ { while ((getline line < block) > 0) print line; skip = 1; next }
  /^<!-- sample: end -->$/ { skip = 0; next }
  !skip { print }' README.md >"$out/README.md"
cp "$out/README.md" README.md
echo "README.md, docs/img/summary.png and docs/img/sample-table.txt written: ${seconds} s, load ${load_before} -> ${load_after}"
