"""Parsing of option values the user types: durations, percentages."""

from __future__ import annotations

import re

from shootout.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")
_SCALE = {None: 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}


def duration(text: str, option: str) -> float:
    match = _DURATION.match(text)
    if not match:
        raise UsageError(f"{option}: {text!r} is not a duration", "write e.g. 90s, 10m or 1h")
    return float(match.group(1)) * _SCALE[match.group(2)]


def fraction(text: str, option: str) -> float:
    """'1%' or '0.01' -> 0.01."""
    try:
        value = float(text.strip().removesuffix("%")) / (100 if text.strip().endswith("%") else 1)
    except ValueError:
        raise UsageError(f"{option}: {text!r} is not a percentage", "write e.g. 1% or 0.01") from None
    if not 0 <= value < 1:
        raise UsageError(f"{option}: {text!r} is out of range", "use a value from 0% to below 100%")
    return value
