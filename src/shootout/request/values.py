"""Parsing of option values the user types: durations, percentages, the statistical settings."""

from __future__ import annotations

import re

from shootout.base.errors import UsageError
from shootout.base.units import fraction

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")
_SCALE = {None: 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
# Below this a threshold is not a practical difference but timer and scheduler noise.
MIN_THRESHOLD = 0.001


def duration(text: str, option: str) -> float:
    match = _DURATION.match(text)
    if not match:
        raise UsageError(f"{option}: {text!r} is not a duration", "write e.g. 90s, 10m or 1h")
    return float(match.group(1)) * _SCALE[match.group(2)]


def budget(text: str, option: str = "--budget") -> float:
    """--budget: a duration above zero (a budget of nothing would still spend the warm-up). option: where it was given."""
    seconds = duration(text, option)
    if seconds <= 0:
        raise UsageError(f"{option} {text.strip()} leaves no time to measure", "give a duration above zero, e.g. 4m (the default)")
    return seconds


def threshold(text: str, option: str = "--threshold") -> float:
    """δ of the verdicts: at least 0.1%, below 100%. option: where it was given."""
    value = fraction(text, option)
    if not MIN_THRESHOLD <= value < 1:
        raise UsageError(f"{option} {text}: a verdict needs a threshold from 0.1% to below 100%",
                         "the default is 1%; the smallest difference this machine resolves: shootout run --aa")
    return value


def precision(text: str | None, delta: float) -> float:
    """Stop a workload once its interval's half-width is below this; default half of δ."""
    if text is None:
        return delta / 2
    value = fraction(text, "--precision")
    if not 0 < value <= delta:
        raise UsageError(f"--precision {text} must be above 0 and at most the threshold ({delta:.2%})",
                         "leave it out (half the threshold, so that 'same' stays reachable) or lower it")
    return value


def confidence(text: str) -> float:
    value = fraction(text, "--confidence")
    if not 0.5 < value < 1:
        raise UsageError(f"--confidence {text} must be above 50% and below 100%", "e.g. --confidence 95% (the default)")
    return value
