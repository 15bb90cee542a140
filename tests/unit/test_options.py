import pytest

from shootout.cli.options import duration, fraction
from shootout.errors import UsageError


@pytest.mark.parametrize("text, seconds", [("90", 90), ("90s", 90), ("10m", 600), ("1.5h", 5400)])
def test_duration(text, seconds):
    assert duration(text, "--budget") == seconds


@pytest.mark.parametrize("text, value", [("1%", 0.01), ("0.5%", 0.005), ("0.02", 0.02)])
def test_fraction(text, value):
    assert fraction(text, "--threshold") == pytest.approx(value)


@pytest.mark.parametrize("bad", ["ten", "-1%", "100%", "1,5%"])
def test_bad_fractions(bad):
    with pytest.raises(UsageError, match="--threshold"):
        fraction(bad, "--threshold")


@pytest.mark.parametrize("bad", ["ten", "5x", "-3m", ""])
def test_bad_durations(bad):
    with pytest.raises(UsageError, match="--budget"):
        duration(bad, "--budget")
