"""Throttling evidence: Raspberry Pi firmware flags and kernel messages.

The kernel log is read from /dev/kmsg (records carry a monotonic timestamp, which is
mapped to Unix time), falling back to `dmesg`; neither needs to be readable.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

from shootout.execution.tools import find_tool

# Bits of `vcgencmd get_throttled` (Raspberry Pi firmware documentation).
THROTTLED_BITS: dict[int, str] = {
    0: "under-voltage now",
    1: "arm frequency capped now",
    2: "throttled now",
    3: "soft temperature limit now",
    16: "under-voltage occurred",
    17: "arm frequency capping occurred",
    18: "throttling occurred",
    19: "soft temperature limit occurred",
}
NOW_MASK = 0xF  # bits 0-3: the condition holds at this moment
SINCE_BOOT_MASK = 0xF0000  # bits 16-19: it happened at some point since boot

_EVENT = re.compile(
    r"throttl|under-?voltage|voltage normali[sz]ed|out of memory|oom[-_ ]kill|killed process"
    r"|temperature (above|over) threshold|critical temperature|thermal.*(trip|shutdown)",
    re.IGNORECASE,
)


def decode_throttled(value: int) -> list[str]:
    """Names of the set bits, lowest bit first; unknown bits are named by number."""
    names = []
    for bit in range(value.bit_length()):
        if value >> bit & 1:
            names.append(THROTTLED_BITS.get(bit, f"unknown bit {bit}"))
    return names


def vcgencmd(*args: str) -> str | None:
    """The Raspberry Pi firmware's answer to `vcgencmd ARGS`; None without the tool or on failure."""
    tool = find_tool("vcgencmd")
    if tool is None:
        return None
    try:
        done = subprocess.run([tool, *args], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def parse_throttled(text: str) -> int | None:
    """`throttled=0x50005` -> 0x50005."""
    m = re.search(r"throttled=(0x[0-9a-fA-F]+|\d+)", text)
    return int(m.group(1), 0) if m else None


def get_throttled() -> int | None:
    """The firmware's throttling flags on a Raspberry Pi; None elsewhere."""
    out = vcgencmd("get_throttled")
    return parse_throttled(out) if out else None


def arm_clock_mhz() -> float | None:
    """`vcgencmd measure_clock arm` (prints `frequency(48)=1500398464`) in MHz; None elsewhere."""
    out = vcgencmd("measure_clock", "arm")
    m = re.search(r"=\s*(\d+)", out or "")
    return int(m.group(1)) / 1e6 if m else None


def parse_kmsg(lines: list[str]) -> list[tuple[float, str]]:
    """/dev/kmsg records `prio,seq,usec,flags;message` -> (monotonic seconds, message)."""
    records = []
    for line in lines:
        head, sep, message = line.partition(";")
        fields = head.split(",")
        if sep and len(fields) >= 3 and fields[2].isdigit():
            records.append((int(fields[2]) / 1e6, message.strip()))
    return records


def parse_dmesg(text: str) -> list[tuple[float, str]]:
    """`[  12.345678] message` lines -> (monotonic seconds, message)."""
    records = []
    for line in text.splitlines():
        if m := re.match(r"\[\s*(\d+\.\d+)\]\s?(.*)", line):
            records.append((float(m.group(1)), m.group(2)))
    return records


def _read_kmsg() -> list[str] | None:
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    lines = []
    try:
        while True:
            try:
                chunk = os.read(fd, 8192)  # one record per read
            except BlockingIOError:
                break  # end of the buffer
            except BrokenPipeError:
                continue  # the ring buffer overwrote records we had not read yet
            if not chunk:
                break
            lines.append(chunk.decode(errors="replace").split("\n", 1)[0])
    except OSError:
        return None
    finally:
        os.close(fd)
    return lines


def read_kernel_log() -> list[tuple[float, str]] | None:
    """Every kernel log record as (Unix time, message); None when the log is not readable."""
    lines = _read_kmsg()
    if lines is not None:
        records = parse_kmsg(lines)
    else:
        dmesg = find_tool("dmesg")
        if dmesg is None:
            return None
        try:
            done = subprocess.run([dmesg], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        records = parse_dmesg(done.stdout)
    # Kernel timestamps count from boot on the monotonic clock; shift them to Unix time.
    offset = time.time() - time.clock_gettime(time.CLOCK_MONOTONIC)
    return [(ts + offset, msg) for ts, msg in records]


def kernel_events(records: list[tuple[float, str]], since: float) -> list[str]:
    """Messages about throttling, under-voltage, OOM or thermal trips logged at or after `since`."""
    return [msg for ts, msg in records if ts >= since and _EVENT.search(msg)]


def kernel_events_since(t: float) -> list[str]:
    """Throttling/under-voltage/OOM kernel messages since Unix time t; [] if the log is unreadable."""
    records = read_kernel_log()
    return kernel_events(records, t) if records else []
