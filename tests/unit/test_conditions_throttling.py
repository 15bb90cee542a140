"""Raspberry Pi throttling bits and kernel-log event matching."""

from __future__ import annotations

import pytest

from shootout.conditions.throttling import (
    decode_throttled,
    kernel_events,
    parse_dmesg,
    parse_kmsg,
    parse_throttled,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0x0, []),
        (0x1, ["under-voltage now"]),
        (0x2, ["arm frequency capped now"]),
        (0x4, ["throttled now"]),
        (0x8, ["soft temperature limit now"]),
        (0x10000, ["under-voltage occurred"]),
        (0x20000, ["arm frequency capping occurred"]),
        (0x40000, ["throttling occurred"]),
        (0x80000, ["soft temperature limit occurred"]),
        (0x50005, ["under-voltage now", "throttled now", "under-voltage occurred", "throttling occurred"]),
        (0xF000F, ["under-voltage now", "arm frequency capped now", "throttled now", "soft temperature limit now",
                   "under-voltage occurred", "arm frequency capping occurred", "throttling occurred",
                   "soft temperature limit occurred"]),
        (0x10, ["unknown bit 4"]),
    ],
)
def test_decode_throttled(value: int, expected: list[str]) -> None:
    assert decode_throttled(value) == expected


def test_parse_throttled() -> None:
    assert parse_throttled("throttled=0x50000") == 0x50000
    assert parse_throttled("throttled=0x0\n") == 0
    assert parse_throttled("error=1 error_msg=\"Command not registered\"") is None


KMSG = [
    "6,100,1000000,-;usb 1-1: new high-speed USB device",
    "4,101,2500000,-;hwmon hwmon1: Undervoltage detected!",
    "4,102,3000000,-;CPU0: Core temperature above threshold, cpu clock throttled (total events = 1)",
    "3,103,4000000,-;Out of memory: Killed process 1234 (cc1plus) total-vm:123kB",
    "6,104,5000000,c;hwmon hwmon1: Voltage normalised",
    "not a record",
]


def test_parse_kmsg_and_filter_by_time() -> None:
    records = parse_kmsg(KMSG)
    assert len(records) == 5
    assert records[1] == (2.5, "hwmon hwmon1: Undervoltage detected!")
    assert kernel_events(records, 0.0) == [r[1] for r in records[1:]]
    assert kernel_events(records, 3.0) == [records[2][1], records[3][1], records[4][1]]
    assert kernel_events(records, 6.0) == []


def test_parse_dmesg() -> None:
    text = "[    1.257098] random: crng reseeded\n[  812.000001] rpi_firmware: under-voltage detected\n"
    records = parse_dmesg(text)
    assert records == [(1.257098, "random: crng reseeded"), (812.000001, "rpi_firmware: under-voltage detected")]
    assert kernel_events(records, 0) == ["rpi_firmware: under-voltage detected"]
