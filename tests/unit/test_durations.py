"""One duration formatter (units.fmt_duration) in the three styles its readers know."""

from __future__ import annotations

import pytest

from shootout.base.units import fmt_duration


@pytest.mark.parametrize("seconds, style, text", [
    # live progress: tenths under 10 s, then minutes and zero-padded seconds
    (9.5, "clock", "9.5s"), (12.4, "clock", "12s"), (125, "clock", "2m05s"), (3600, "clock", "60m00s"),
    # estimates: one unit, whole seconds up to 2 min, whole minutes up to 2 h, then tenths of an hour
    (90, "rough", "90 s"), (1500, "rough", "25 min"), (75600, "rough", "21.0 h"),
    # a duration in words, to the second
    (45, "span", "45 s"), (420, "span", "7 min"), (450, "span", "7 min 30 s"),
])
def test_each_style_keeps_its_format(seconds: float, style: str, text: str) -> None:
    assert fmt_duration(seconds, style) == text  # type: ignore[arg-type]


def test_the_default_style_is_the_progress_clock() -> None:
    assert fmt_duration(100) == "1m40s"
