"""A run SIGKILLed while it prepares (here: while its second workload prepares, after the first
was calibrated) resumes: the calibrated workload keeps its stored parameters, the other is
calibrated then; no traceback (it once ended in `KeyError: 'kernels'`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import shootout
from shootout.base.model import Config, RunSettings
from shootout.measure.runner import Runner, RunRequest
from shootout.store import Store
from shootout.system.journal import Journal

# Two workloads of the fake target: "sized" has default parameters and a calibration, as the
# built-in ones do; "slow" takes long to prepare the first time (a file marks that once).
WORKLOADS = r'''
import time
from pathlib import Path
from shootout.base.model import Metric, WorkloadSpec
from shootout.places.fake import SCRIPTS
from shootout.workloads.contract import Prepared, Workload

SCRIPTS["resume"] = lambda argv, config, n: f"value: {int(argv[1]) + n % 3}\n"


class Sized(Workload):
    spec = WorkloadSpec("sized", "cpu", "fake work sized by its facts", (Metric("v", "ops/s"),), "v")

    def default_params(self, facts):
        return {"kernels": facts.cores}

    def calibrate(self, ctx, prepared):
        calls = Path(MARK).with_suffix(".calibrations")
        calls.write_text(calls.read_text() + "x" if calls.exists() else "x")
        return {**ctx.params, "size": 1000 * ctx.params["kernels"]}

    def argv(self, prepared, params):
        return ["work", str(params["size"] + params["kernels"])]

    def parse(self, result, params):
        return {"v": float(result.stdout.split()[1])}


class Slow(Sized):
    spec = WorkloadSpec("slow", "cpu", "fake work slow to prepare", (Metric("v", "ops/s"),), "v")

    def prepare(self, ctx):
        if not Path(MARK).exists():
            Path(MARK).write_text("preparing")
            print("preparing slow", flush=True)
            time.sleep(120)
        return Prepared()
'''

CHILD = r'''
import sys
from pathlib import Path
MARK = sys.argv[2]
exec(open(sys.argv[3]).read())
from shootout.base.model import Config, RunSettings
from shootout.measure.runner import Runner, RunRequest
from shootout.store import Store
from shootout.system.journal import Journal
configs = [Config(name=n, target="fake", options=(("script", "resume"),)) for n in ("A", "B")]
Runner(Store(sys.argv[1]), Journal(Path(sys.argv[4]))).start(
    RunRequest(configs, [Sized(), Slow()], RunSettings(seed=5, budget_s=600, max_rounds=8)))
'''


def test_a_run_killed_while_preparing_resumes(tmp_path: Path) -> None:
    url, mark = f"sqlite:///{tmp_path / 'r.db'}", tmp_path / "slow-prepared"
    (tmp_path / "workloads.py").write_text(WORKLOADS)
    (tmp_path / "child.py").write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(Path(shootout.__file__).parents[1])}
    child = subprocess.Popen([sys.executable, str(tmp_path / "child.py"), url, str(mark), str(tmp_path / "workloads.py"),
                              str(tmp_path / "journal")], stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "preparing slow"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    store = Store(url)
    (killed,) = store.list_runs()
    assert killed.status == "running" and store.trials(killed.id) == []
    assert killed.params["sized"] == {"kernels": 2, "size": 2000}  # calibrated before the kill: kept
    assert killed.calibrated == ["sized"]

    space: dict = {"MARK": str(mark)}
    exec(WORKLOADS, space)
    run_id = Runner(store, Journal(tmp_path / "journal")).resume(killed, [space["Sized"](), space["Slow"]()])
    run = store.get_run(run_id)
    assert run.status == "complete"
    assert run.params == {"sized": {"kernels": 2, "size": 2000}, "slow": {"kernels": 2, "size": 2000}}
    assert run.calibrated is None  # every workload calibrated: nothing left to do
    assert mark.with_suffix(".calibrations").read_text() == "xx"  # sized once before the kill, slow once after
    trials = store.trials(run_id)
    assert {t.spec.workload for t in trials if t.ok} == {"sized", "slow"}
    assert all(t.ok for t in trials)


def test_a_resumed_run_stored_without_the_fact_keeps_every_stored_parameter(tmp_path: Path) -> None:
    """Runs stored before it, and the later blocks of a run across boots (created with block 1's
    parameters), hold no calibrated workloads (Run.calibrated None): nothing is calibrated again."""
    space: dict = {"MARK": str(tmp_path / "no-slow")}
    (tmp_path / "no-slow").write_text("prepared")
    exec(WORKLOADS, space)
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    configs = [Config(name=n, target="fake", options=(("script", "resume"),)) for n in ("A", "B")]
    first = Runner(store, Journal(tmp_path)).start(
        RunRequest(configs, [space["Sized"](), space["Slow"]()], RunSettings(seed=5, budget_s=600, max_rounds=8)))
    stored = store.get_run(first)
    assert stored.calibrated is None
    store.update_run(first, status="interrupted", params={"sized": {"kernels": 9, "size": 7}, "slow": stored.params["slow"]})
    again = store.get_run(first)
    Runner(store, Journal(tmp_path)).resume(again, [space["Sized"](), space["Slow"]()])
    assert store.get_run(first).params["sized"] == {"kernels": 9, "size": 7}
