"""The hand-built Analysis that the report tests render (tests/fixtures/report/fixture.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPORT_FIXTURES = Path(__file__).parents[1] / "fixtures" / "report"


def _load_report_fixture():
    spec = importlib.util.spec_from_file_location("shootout_report_fixture", REPORT_FIXTURES / "fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def analysis():
    return _load_report_fixture().build()
