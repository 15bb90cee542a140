"""Hold a network namespace for as long as shootout lives, then empty it.

Started as `unshare --net -- python -I -S holder.py` (standard library only, so it starts in
a few milliseconds and imports nothing of shootout). It prints "ready", then blocks reading
its stdin, a pipe whose only writer is the shootout process that started it. When that end
closes, because shootout closed the topology or because shootout died (even by SIGKILL),
the holder kills every process still inside its namespace and exits. With no process left
in it, the kernel frees the namespace and everything in it: the veth pair, tunnel devices,
nft tables, qdiscs and XDP programs. Nothing is pinned, so nothing outlives the run.

Killing by namespace is safe: while the holder lives, its namespace exists, so a process
whose /proc/PID/ns/net names the same namespace is one that entered ours.
"""

from __future__ import annotations

import os
import signal
import sys
import time

SWEEP_ROUNDS = 50


def members(own: str) -> list[int]:
    """PIDs of the other processes in the namespace `own` (zombies have no namespace left)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/net") == own:
                found.append(int(entry))
        except OSError:
            continue
    return found


def sweep(own: str) -> None:
    for _ in range(SWEEP_ROUNDS):
        left = members(own)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)


def main() -> int:
    own = os.readlink("/proc/self/ns/net")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches shootout, which closes the pipe
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        print(f"ready {own}", flush=True)
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        sweep(own)
    return 0


if __name__ == "__main__":
    sys.exit(main())
