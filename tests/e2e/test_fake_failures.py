"""A run that fails as a whole before anything is measured (a missing command, a refused ssh)
is one line and leaves no run behind; one that measured something keeps it, marked failed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shootout.base.errors import WorkloadError
from shootout.base.model import Config, RunSettings
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload


def _work(name: str) -> CommandWorkload:
    return CommandWorkload({"name": name, "command": name, "regex": r"value: ([0-9.]+)", "unit": "ops/s"})


def test_a_run_whose_every_workload_fails_in_its_warm_up_is_not_kept(tmp_path: Path) -> None:
    SCRIPTS["broken"] = lambda argv, config, n: "no number here\n"
    configs = [Config(name=n, target="fake", options=(("script", "broken"),)) for n in ("A", "B")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(WorkloadError, match="^no workload produced a result: one failed on [AB]: one printed no number"
                                            ".*; two failed on [AB]: two printed no number"):
        Runner(store, Journal(tmp_path)).start(RunRequest(configs, [_work("one"), _work("two")], RunSettings(seed=1)))
    assert store.list_runs() == []


def test_a_run_that_measured_something_is_kept_as_failed(tmp_path: Path) -> None:
    # the warm-up measures, then every trial fails: that run stays, failed, with its trials
    SCRIPTS["once"] = lambda argv, config, n: "value: 5\n" if n == 1 else "gone\n"
    configs = [Config(name=n, target="fake", options=(("script", "once"),)) for n in ("A", "B")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(WorkloadError, match="^one failed on [AB]: one printed no number"):
        Runner(store, Journal(tmp_path)).start(RunRequest(configs, [_work("one")], RunSettings(seed=1)))
    (run,) = store.list_runs()
    assert run.status == "failed" and store.trial_count(run.id, include_warmup=True) == 3


def _shootout(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shootout", "run", *args, "--no-monitor"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "SHOOTOUT_HOME": str(home), "SHOOTOUT_LOAD_WAIT": "0s"})


@pytest.mark.parametrize("args, code, message", [
    (("-c", "host", "-w", "gone"), 5, "error: gone failed on host: exit status 127: sh: 1: no-such-command-xyz: not found"),
    (("-c", "ssh:root@127.0.0.1:1", "-w", "intmix"), 4, "error: cannot reach root@127.0.0.1: "),
])
def test_a_run_that_fails_as_a_whole_is_one_line_and_not_kept(tmp_path: Path, args: tuple[str, ...], code: int,
                                                               message: str) -> None:
    toml = tmp_path / "gone.toml"
    toml.write_text('[[workload]]\nname = "gone"\ncommand = "no-such-command-xyz --fast"\nregex = "([0-9.]+)"\n'
                    'unit = "ops/s"\n')
    done = _shootout(tmp_path, "-f", str(toml), *args)
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stderr.startswith(message) and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""
    assert Store(f"sqlite:///{tmp_path / 'results.db'}").list_runs() == []
