"""clock_drop boundaries: more than 3% below the reference is a drop, exactly 3% is not."""

from __future__ import annotations

import pytest

from shootout.conditions.clockflags import clock_drop


@pytest.mark.parametrize(
    ("before", "after", "dropped"),
    [
        (1000.0, 1000.0, False),
        (1000.0, 1100.0, False),  # faster afterwards: never a drop
        (1000.0, 971.0, False),
        (1000.0, 970.0, False),  # exactly 3%: not "more than"
        (100.0, 97.0, False),
        (1000.0, 969.9, True),
        (1500.0, 600.0, True),
        (None, 900.0, False),  # unknown clock: no claim either way
        (1000.0, None, False),
        (0.0, 900.0, False),
    ],
)
def test_clock_drop(before: float | None, after: float | None, dropped: bool) -> None:
    assert clock_drop(before, after) is dropped


def test_clock_drop_custom_limit() -> None:
    assert clock_drop(1000.0, 985.0, limit=0.01) is True
    assert clock_drop(1000.0, 995.0, limit=0.01) is False
