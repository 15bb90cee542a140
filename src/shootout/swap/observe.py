"""Kernel counters read around one trial: the first and last reading and the peak of each.

Pools and compressed sizes must be read while the trial runs (once its processes exit, the
kernel frees their swapped pages and zswap's and zram's figures fall to zero), so a sampler
thread reads them a few times a second; cumulative counters need only the two ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

Reading = dict[str, int]
SAMPLE_S = 0.25


@dataclass
class Samples:
    first: Reading = field(default_factory=dict)
    last: Reading = field(default_factory=dict)
    peak: Reading = field(default_factory=dict)
    at_peak: dict[str, Reading] = field(default_factory=dict)  # key -> the whole reading at its peak

    def add(self, reading: Reading) -> None:
        if not self.first:
            self.first = dict(reading)
        self.last = dict(reading)
        for key, value in reading.items():
            if value >= self.peak.get(key, -1):
                self.peak[key] = value
                self.at_peak[key] = dict(reading)

    def delta(self, key: str) -> int | None:
        if key not in self.first or key not in self.last:
            return None
        return self.last[key] - self.first[key]


class Sampler:
    """Reads at start(), every `interval` seconds until stop(), and at stop()."""

    def __init__(self, read: Callable[[], Reading], interval: float = SAMPLE_S) -> None:
        self.read = read
        self.interval = interval
        self.samples = Samples()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Sampler:
        self.samples.add(self.read())
        self._thread = threading.Thread(target=self._loop, name="shootout-sampler", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.samples.add(self.read())

    def stop(self) -> Samples:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self.samples.add(self.read())
        return self.samples


def mib(value: int | None) -> float | None:
    return None if value is None else value / 2**20


def ratio(numerator: int | None, denominator: int | None) -> float | None:
    return None if not numerator or not denominator else numerator / denominator


def present(values: dict[str, float | None]) -> dict[str, float]:
    """Leave out what this machine or setup did not measure (None)."""
    return {k: float(v) for k, v in values.items() if v is not None}
