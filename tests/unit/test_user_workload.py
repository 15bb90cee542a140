import pytest

from shootout.base.errors import UsageError, WorkloadError
from shootout.base.units import UNITS
from shootout.execution.process import ProcResult
from shootout.workloads.contract import Prepared
from shootout.workloads.user import CommandWorkload


def result(stdout="", wall=1.5):
    return ProcResult(("x",), 0, stdout, "", wall, 1.0, 0.1, 100, 3, 0.0)


def test_wall_time_metric():
    w = CommandWorkload({"name": "s", "command": "sleep 1"})
    assert w.argv(Prepared(), {}) == ["sh", "-c", "sleep 1"]
    assert w.parse(result(wall=2.25), {}) == {"wall": 2.25, "cpu": 1.0 + 0.1}  # cpu: user + sys, beside it
    assert w.spec.metrics[0].unit == "s"


def test_regex_metric_takes_the_last_match():
    w = CommandWorkload({"name": "r", "command": ["bench"], "regex": r"rate: ([0-9.]+)", "unit": "MB/s"})
    assert w.parse(result("rate: 1\nrate: 2.5\n"), {}) == {"value": 2.5}


def test_no_number_is_a_workload_error():
    w = CommandWorkload({"name": "r", "command": "true", "regex": r"rate: ([0-9.]+)", "unit": "MB/s"})
    with pytest.raises(WorkloadError, match="no number"):
        w.parse(result("nothing here\n"), {})


@pytest.mark.parametrize("table", [
    {"unit": "pct"},
    {"unit": "pct", "direction": "higher"},  # a direction does not make a unit that `show` knows
    {"unit": 5},
])
def test_unknown_unit_is_refused_with_the_list(table):
    before = dict(UNITS)
    with pytest.raises(UsageError, match="unknown unit") as caught:
        CommandWorkload({"name": "r", "command": "x", "regex": "([0-9]+)", **table})
    assert "MB/s" in caught.value.hint and "ops/s" in caught.value.hint
    assert UNITS == before  # nothing registered for this process only


def test_known_unit_with_the_wrong_direction_is_refused():
    with pytest.raises(UsageError, match="lower-is-better, not higher"):
        CommandWorkload({"name": "r", "command": "x", "unit": "s", "direction": "higher"})
    w = CommandWorkload({"name": "r", "command": "x", "regex": "(1)", "unit": "ops/s", "direction": "higher"})
    assert w.spec.metrics[0].unit == "ops/s"


@pytest.mark.parametrize("table, message", [
    ({"command": "x"}, "needs a name"),
    ({"name": "a", "command": 3}, "command"),
    ({"name": "a", "command": "x", "regex": "([0-9]"}, "bad regex"),
    ({"name": "a", "command": "x", "regex": "[0-9]+", "unit": "s"}, "group"),
    ({"name": "a", "command": "x", "metric": "cycles"}, "regex"),
])
def test_bad_definitions(table, message):
    with pytest.raises(UsageError, match=message):
        CommandWorkload(table)
