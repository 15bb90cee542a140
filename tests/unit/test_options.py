import pytest

from shootout.base.errors import UsageError
from shootout.request.values import confidence, duration, precision, threshold


@pytest.mark.parametrize("text, seconds", [("90", 90), ("90s", 90), ("10m", 600), ("1.5h", 5400)])
def test_duration(text, seconds):
    assert duration(text, "--budget") == seconds


@pytest.mark.parametrize("text, value", [("1%", 0.01), ("0.5%", 0.005), ("0.02", 0.02), ("0.1%", 0.001)])
def test_threshold(text, value):
    assert threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("bad", ["ten", "-1%", "100%", "1,5%", "0", "0%", "0.05%", "-0.02"])
def test_bad_thresholds_say_what_is_allowed(bad):
    with pytest.raises(UsageError, match="--threshold") as err:
        threshold(bad)
    assert err.value.hint  # a one-line error with a hint


def test_precision_defaults_to_half_the_threshold_and_may_not_exceed_it():
    assert precision(None, 0.02) == pytest.approx(0.01)
    assert precision("0.5%", 0.01) == pytest.approx(0.005)
    assert precision("1%", 0.01) == pytest.approx(0.01)
    for bad in ("2%", "0", "-1%"):
        with pytest.raises(UsageError, match="--precision .* at most the threshold"):
            precision(bad, 0.01)


@pytest.mark.parametrize("text, value", [("95%", 0.95), ("0.99", 0.99), ("80%", 0.8)])
def test_confidence(text, value):
    assert confidence(text) == pytest.approx(value)


@pytest.mark.parametrize("bad", ["50%", "0.3", "100%", "1", "120%", "x"])
def test_bad_confidence(bad):
    with pytest.raises(UsageError, match="--confidence"):
        confidence(bad)


@pytest.mark.parametrize("bad", ["ten", "5x", "-3m", ""])
def test_bad_durations(bad):
    with pytest.raises(UsageError, match="--budget"):
        duration(bad, "--budget")


@pytest.mark.parametrize("zero", ["0", "0s", "0.0m", " 0h "])
def test_a_budget_of_nothing_is_refused(zero):
    from shootout.request.values import budget

    with pytest.raises(UsageError, match="^--budget 0.* leaves no time to measure"):
        budget(zero)
    assert budget("1m") == 60
