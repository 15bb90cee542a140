"""Helpers for tests that run the real `shootout` command in a private data directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

if TYPE_CHECKING:
    from shootout.execution.process import ProcResult
    from shootout.places.host import HostTarget
    from shootout.places.target import Target
    from shootout.workloads.contract import Context, Prepared, Workload

from shared_spaces import Spaces, make_spaces

SRC = Path(__file__).resolve().parents[2] / "src"


class Shootout:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.db = f"sqlite:///{home / 'results.db'}"
        # SRC first; the caller's path kept (a database driver may be found there)
        path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)
        self.env = {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": path, "COLUMNS": "200",
                    "SHOOTOUT_LOAD_WAIT": "0s",  # the test machine is busy by design
                    # the counters pass has tests of its own (--counters); the others keep CI's time
                    "SHOOTOUT_COUNTERS": "0"}

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "shootout", *args]

    def __call__(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), env=self.env, capture_output=True, text=True, timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv(*args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def rows(self, ref: str = "last") -> list[dict]:
        done = self("show", ref, "--json", "--db", self.db)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture
def shootout(tmp_path: Path) -> Shootout:
    return Shootout(tmp_path)


@pytest.fixture
def require_root() -> None:
    if os.geteuid() != 0:
        pytest.fail("this test needs root (CI runs as root)")


# --- workload tests on the host (test_workloads_host_*.py) ---


@pytest.fixture(scope="module")
def cached_home(request: pytest.FixtureRequest) -> Iterator[Path]:
    """SHOOTOUT_HOME in pytest's cache: inputs, npm packages and sources are kept between runs."""
    home = request.config.cache.mkdir("shootout-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOOTOUT_HOME", str(home))
    yield home
    mp.undo()


@pytest.fixture(scope="module")
def host(cached_home: Path) -> Iterator[HostTarget]:
    """The plain host configuration (native ABI), shared by a module's tests."""
    from shootout.base.model import Config
    from shootout.places.host import HostTarget

    target = HostTarget(Config(name="host"))
    yield target
    target.close()


class WorkloadRun(NamedTuple):
    prepared: Prepared
    params: dict[str, Any]  # as calibrated
    values: dict[str, float]
    result: ProcResult


def _context(target: Target, workload: Workload, params: dict[str, Any]) -> Context:
    from shootout.workloads.contract import Context

    return Context(target, workload.spec.name, {**workload.default_params(target.probe()), **params})


@pytest.fixture
def context() -> Callable[[Target, Workload, dict[str, Any]], Context]:
    """The context the runner gives a workload on a target: defaults from its facts, then params."""
    return _context


def _run_workload(target: Target, workload: Workload, params: dict[str, Any]) -> WorkloadRun:
    workload.check_tools(target)
    ctx = _context(target, workload, params)
    prepared = workload.prepare(ctx)
    params = workload.calibrate(ctx, prepared)
    result = target.run(workload.argv(prepared, params), timeout=600)
    assert result.exit_status == 0, result.stderr[-2000:]
    values = workload.parse(result, params)
    zero_ok = {m.name for m in workload.spec.recorded}  # amounts (tabs lost, refusals) may be 0
    assert values and all(v > 0 or (k in zero_ok and v == 0) for k, v in values.items()), values
    return WorkloadRun(prepared, params, values, result)


@pytest.fixture
def run_workload() -> Callable[[Target, Workload, dict[str, Any]], WorkloadRun]:
    """One trial as the runner does it: check tools, prepare, calibrate, run, parse (params over
    the target's default ones); every value must be positive."""
    return _run_workload


@pytest.fixture(scope="module")
def spaces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spaces]:
    """The bookworm amd64, i386 and armhf userspaces (see shared_spaces.py)."""
    yield from make_spaces(tmp_path_factory)
