"""The one table of units: dimension, scale to the base unit, direction, display format.

A metric names its unit and the direction comes from here; it is never guessed from a name.
MB = 10^6 bytes, MiB = 2^20 bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from shootout.base.errors import UsageError


class Direction(StrEnum):
    HIGHER = "higher"
    LOWER = "lower"


@dataclass(frozen=True)
class Unit:
    symbol: str
    dimension: str
    scale: float  # multiply a value by this to get the dimension's base unit
    direction: Direction
    fmt: str  # format spec for a value in this unit

    def format(self, value: float) -> str:
        return f"{value:{self.fmt}} {self.symbol}"


_H, _L = Direction.HIGHER, Direction.LOWER

UNITS: dict[str, Unit] = {
    u.symbol: u
    for u in [
        Unit("s", "time", 1.0, _L, ".4g"),
        Unit("ms", "time", 1e-3, _L, ".4g"),
        Unit("us", "time", 1e-6, _L, ".4g"),
        Unit("ns", "time", 1e-9, _L, ".4g"),
        Unit("ns/load", "latency", 1e-9, _L, ".4g"),
        Unit("iter/s", "rate", 1.0, _H, ",.0f"),
        Unit("lookups/s", "rate", 1.0, _H, ",.0f"),
        Unit("ops/s", "rate", 1.0, _H, ",.0f"),
        Unit("runs/s", "rate", 1.0, _H, ".4g"),
        Unit("runs/min", "rate", 1 / 60, _H, ".4g"),
        Unit("MB/s", "bandwidth", 1e6, _H, ",.1f"),
        Unit("MiB/s", "bandwidth", 2.0**20, _H, ",.1f"),
        Unit("kB/s", "bandwidth", 1e3, _H, ",.0f"),
        Unit("KiB/s", "bandwidth", 2.0**10, _H, ",.0f"),  # iozone's "kB/sec"
        Unit("GB/s", "bandwidth", 1e9, _H, ",.2f"),
        Unit("Mbit/s", "bitrate", 1e6, _H, ",.1f"),
        Unit("Gbit/s", "bitrate", 1e9, _H, ",.2f"),
        Unit("kpps", "packet-rate", 1e3, _H, ",.1f"),
        Unit("ns/pkt", "packet-cost", 1e-9, _L, ".4g"),
        Unit("s/GiB", "cpu-cost", 1.0, _L, ".4g"),
        Unit("retr/GiB", "loss", 1.0, _L, ",.1f"),
        Unit("MIPS", "rating", 1.0, _H, ",.0f"),
        Unit("MiB", "capacity", 2.0**20, _H, ",.0f"),
        Unit("MiB used", "memory-use", 2.0**20, _L, ",.1f"),  # memory a program takes: less is better
        Unit("MHz", "frequency", 1e6, _H, ",.0f"),
        Unit("x", "ratio", 1.0, _H, ".3f"),
        Unit("fps", "rate", 1.0, _H, ",.1f"),
        Unit("req/s", "rate", 1.0, _H, ",.0f"),
        Unit("events/s", "rate", 1.0, _H, ",.0f"),
        Unit("items/s", "rate", 1.0, _H, ",.0f"),
        Unit("score", "score", 1.0, _H, ",.4g"),
        Unit("GFLOPS", "flop-rate", 1e9, _H, ",.2f"),
        Unit("W", "power", 1.0, _L, ",.1f"),
        Unit("J", "energy", 1.0, _L, ",.3g"),  # a trial's energy, where the machine reports it
        Unit("switches/s", "rate", 1.0, _H, ",.1f"),
        # Recorded amounts (may be zero; summarised per configuration, never a speed-up)
        Unit("tabs", "count", 1.0, _L, ",.0f"),
        Unit("pages", "count", 1.0, _L, ",.0f"),
        Unit("faults", "count", 1.0, _L, ",.0f"),
        Unit("processes", "count", 1.0, _L, ",.0f"),
        Unit("refusals", "count", 1.0, _L, ",.0f"),  # maxalloc: the buffer asked for could not be had
    ]
}


def unit(symbol: str) -> Unit:
    try:
        return UNITS[symbol]
    except KeyError:
        raise UsageError(
            f"unknown unit {symbol!r}", "use one of: " + ", ".join(sorted(UNITS))
        ) from None


def performance(value: float, symbol: str) -> float:
    """Higher is always better for the returned number: the value or its inverse."""
    return value if unit(symbol).direction is Direction.HIGHER else 1.0 / value


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B?)\s*$", re.IGNORECASE)


def fraction(text: str, option: str) -> float:
    """'1%' or '0.01' -> 0.01, unchecked; option: where it was given."""
    try:
        return float(text.strip().removesuffix("%")) / (100 if text.strip().endswith("%") else 1)
    except ValueError:
        raise UsageError(f"{option}: {text!r} is not a percentage", "write e.g. 1% or 0.01") from None


def byte_size(text: str | int, where: str) -> int:
    """'4G' -> bytes. Like truncate(1) and mount(8), K/M/G/T and KiB/MiB/GiB/TiB are powers of
    1024; kB/MB/GB/TB are powers of 1000 (MB = 10^6 bytes, the rule above); a bare number is bytes."""
    match = _SIZE.match(str(text))
    if not match or (match.group(3).lower() == "i"):
        raise UsageError(f"{where}: {text!r} is not a size", 'write e.g. "512M", "4G" or "4GiB"')
    number, prefix, suffix = float(match.group(1)), match.group(2).upper(), match.group(3).lower()
    power = "KMGT".find(prefix) + 1 if prefix else 0
    base = 1000 if suffix == "b" and prefix else 1024
    return int(number * base**power)


DurationStyle = Literal["clock", "rough", "span"]


def fmt_duration(seconds: float, style: DurationStyle = "clock") -> str:
    """A duration for people, in one of three styles (each place keeps the one its readers know):

    - "clock", for live progress (ETA, round times): "9.5s", "45s", "2m05s".
    - "rough", for estimates that are only good to a unit: "90 s", "25 min", "21.0 h".
    - "span", for a duration said in words to the second: "45 s", "7 min", "7 min 30 s".
    """
    if style == "clock":
        if seconds < 10:
            return f"{seconds:.1f}s"
        minutes, secs = divmod(round(seconds), 60)
        return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
    if style == "rough":
        minutes_f = seconds / 60.0
        if minutes_f < 2:
            return f"{seconds:.0f} s"
        return f"{minutes_f:.0f} min" if minutes_f < 120 else f"{minutes_f / 60:.1f} h"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    return f"{whole // 60} min" + (f" {whole % 60} s" if whole % 60 else "")
