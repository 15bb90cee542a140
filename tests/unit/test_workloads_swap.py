"""The swap workloads declare themselves completely; tabs parses its output into metrics
(strictly positive) and recorded amounts (may be zero); the named experiment parses (its
paragraph: tests/unit/test_amounts.py)."""

from __future__ import annotations

import json
import re

import pytest

from shootout.base.errors import UsageError
from shootout.base.units import UNITS
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.experiments import experiment
from shootout.workloads.catalogue import REGISTRY, suites
from shootout.workloads.swap import (
    RECORDED,
    WORKLOADS,
    KbuildPressure,
    Tabs,
    check_limit,
    mix_for,
)

OUTPUT = """tabs 12
tab_mib 170
switches 300
seconds 12.5
switches_per_s 24.0
open_s 9.8
p50_ms 20.5
p95_ms 80.25
p99_ms 150.0
max_ms 300.0
mean_ms 30.0
tabs_killed 0
reloads 0
major_faults 123456
minor_faults 99
truncated 0
"""


@pytest.mark.parametrize("cls", WORKLOADS, ids=lambda c: c.spec.name)
def test_spec_is_complete_and_registered(cls):
    spec = cls.spec
    names = [m.name for m in spec.metrics]
    assert REGISTRY[spec.name] is cls and spec.name in suites()["swap"]
    assert spec.category == "swap" and spec.headline in names and spec.reproduces and spec.description
    assert all(re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", m.name) and m.unit in UNITS and m.description
               for m in spec.metrics)
    default = cls().default_params(TargetFacts(cores=2))
    assert set(cls.quick) <= set(default)
    json.dumps(default)


def test_recorded_amounts_have_units():
    assert all(m.unit in UNITS and m.description for m in RECORDED)
    assert Tabs.spec.guard in {m.name for m in Tabs.spec.recorded}
    assert UNITS["tabs"].dimension == "count" and UNITS["switches/s"].direction == "higher"


def _result(stdout: str) -> ProcResult:
    return ProcResult(("tabs",), 0, stdout, "", 13.0, 1.0, 2.0, 1000, 5, 0.0)


def test_tabs_parses_metrics_and_recorded_amounts():
    w = Tabs()
    values = w.parse(_result(OUTPUT), {})
    assert values == {"p95_ms": 80.25, "p50_ms": 20.5, "p99_ms": 150.0, "switches_per_s": 24.0, "open_s": 9.8,
                      "tabs_killed": 0, "major_faults": 123456}


def test_tabs_without_its_numbers_is_a_workload_error():
    from shootout.base.errors import WorkloadError

    with pytest.raises(WorkloadError, match="no 'p95_ms'"):
        Tabs().parse(_result(OUTPUT.replace("p95_ms", "p96_ms")), {})


def test_load_is_sized_from_the_limit_and_checked_against_it():
    params = Tabs().default_params(TargetFacts(memory_limit=1 << 30))
    assert params["limit_mib"] == 1024 and Tabs().default_params(TargetFacts())["limit_mib"] == 256
    assert mix_for(0.6) == (565, 120) and mix_for(0.0) == (0, 0)
    with pytest.raises(UsageError, match="compressibility 0.95 is outside"):
        mix_for(0.95)
    check_limit(params, 1 << 30)  # 12 tabs of 170 MiB under 1 GiB: fine
    with pytest.raises(UsageError, match=r"the memory limit 100 MiB is below what one tab needs \(178 MiB\)"):
        check_limit(params, 100 << 20)
    assert KbuildPressure().default_params(TargetFacts(cores=2))["jobs"] == 16


def test_the_experiment_parses_with_the_issues_parameters():
    settings = experiment("pi3desk-swap").settings()
    assert list(settings.configs) == ["none", "disk", "zswap", "zram"]
    assert settings.configs["zswap"].parts["swap"]["max_pool_percent"] == 15
    assert settings.configs["none"].parts["memory"] == {"limit": 1 << 29, "swap": 0}  # half the write-up's: sizing.note
    assert settings.params["tabs"]["tabs"] == 12 and settings.params["tabs"]["overcommit"] == 2.0
