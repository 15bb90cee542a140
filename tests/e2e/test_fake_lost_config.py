"""A comparison that lost a configuration before measuring says so with its results: above
the table, in the summary and in the report; one that lost all sides but one is refused."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from shootout.base.model import Config, RunSettings
from shootout.judge.analysis import analyze
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.report.markdown import render_markdown
from shootout.report.terminal import show
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

WHY = "no sysctl vm.no_such_setting on this kernel"


def test_a_lost_configuration_is_named_above_the_table_in_the_summary_and_in_the_report(tmp_path: Path) -> None:
    SCRIPTS["lost"] = lambda argv, config, n: f"throughput: {1000 * (1.1 if config == 'B' else 1) + n % 3}\n"
    configs = [Config(name=n, target="fake", options=(("script", "lost"),)) for n in ("A", "B")]
    work = CommandWorkload({"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    request = RunRequest(configs, [work], RunSettings(seed=3, budget_s=600), lost={"C": WHY})
    run_id = Runner(store, Journal(tmp_path)).start(request)
    run = store.get_run(run_id)
    analysis = analyze(run, store.trials(run_id))
    out = io.StringIO()
    show(analysis, Console(file=out, width=200))  # a file: plain lines
    lines = out.getvalue().splitlines()
    notice = f"not compared: C, which cannot run here: {WHY}"
    table = next(i for i, line in enumerate(lines) if line.lstrip().startswith("workload"))
    assert notice in lines[:table]
    summary = next(i for i, line in enumerate(lines) if "geometric mean" in line)
    assert lines[summary + 1] == "C was asked for but not measured: it cannot run here (see above)."
    assert f"> Not compared: C, which cannot run here: {WHY}" in render_markdown(analysis, {})


def test_a_run_without_lost_configurations_says_nothing_of_them(tmp_path: Path) -> None:
    SCRIPTS["kept"] = lambda argv, config, n: f"throughput: {1000 + n % 3}\n"
    configs = [Config(name=n, target="fake", options=(("script", "kept"),)) for n in ("A", "B")]
    work = CommandWorkload({"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest(configs, [work], RunSettings(seed=3, budget_s=600)))
    out = io.StringIO()
    show(analyze(store.get_run(run_id), store.trials(run_id)), Console(file=out, width=200))
    assert "not compared" not in out.getvalue() and "not measured" not in out.getvalue()


def test_a_comparison_left_with_one_side_is_one_line_exit_2_and_stores_nothing(tmp_path: Path) -> None:
    toml = tmp_path / "lost.toml"
    toml.write_text('[[config]]\nname = "plain"\nspec = "host"\n\n'
                    '[[config]]\nname = "nosuch"\nspec = "host"\nsysctl = { "vm.no_such_setting" = "1" }\n')
    done = subprocess.run([sys.executable, "-m", "shootout", "run", "-f", str(toml), "-c", "plain", "-c", "nosuch",
                           "-w", "intmix"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SHOOTOUT_HOME": str(tmp_path), "SHOOTOUT_LOAD_WAIT": "0s"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"error: nothing to compare: of the 2 configurations only plain can run here; "
                                  f"nosuch cannot: {WHY}")
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""
    if (tmp_path / "results.db").exists():
        assert Store(f"sqlite:///{tmp_path / 'results.db'}").list_runs() == []
