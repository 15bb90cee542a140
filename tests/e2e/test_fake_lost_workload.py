"""A workload that fails on one side is named in the summary sentence, above the table and in
the HTML and Markdown reports, not only in a progress line that scrolls away."""

from __future__ import annotations

import io
import math
import random
from collections.abc import Sequence

from rich.console import Console

from shootout.base.model import Config, RunSettings
from shootout.judge.analysis import analyze
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.report.html import render_html
from shootout.report.markdown import render_markdown
from shootout.report.terminal import show
from shootout.report.text import iter_summaries, summary_sentence
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload


def script(argv: Sequence[str], config: str, n: int) -> str:
    if "lossy" in " ".join(argv) and config == "B":
        return "mmap of second buffer of 1920 MiB failed: Cannot allocate memory\n"  # no number
    rng = random.Random(f"{config}:{n}")
    return f"throughput: {1000 * (1.1 if config == 'B' else 1.0) * math.exp(rng.gauss(0, 0.005)):.6f}\n"


def test_a_workload_lost_on_one_side_is_named_above_every_table(tmp_path) -> None:
    SCRIPTS["lost"] = script
    configs = [Config(name=n, target="fake", options=(("script", "lost"),)) for n in ("A", "B")]
    works = [CommandWorkload({"name": name, "command": name, "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"})
             for name in ("steady", "lossy")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest(configs, works, RunSettings(seed=3, budget_s=600)))
    run = store.get_run(run_id)
    assert run.lost_workloads["lossy"].config == "B"
    analysis = analyze(run, store.trials(run_id))
    (summary,) = list(iter_summaries(analysis))
    sentence = summary_sentence(analysis, summary)
    assert "geometric mean of 1 workload" in sentence and "without lossy, which failed on B" in sentence

    out = io.StringIO()
    show(analysis, Console(file=out, width=200, force_terminal=False))
    text = out.getvalue()
    notice = "lossy was not measured: it failed on B"
    assert notice in text and text.index(notice) < text.index("steady"), text  # above the table
    markdown = render_markdown(analysis, {})
    assert notice in markdown and markdown.index(notice) < markdown.index("| steady")
    assert notice in render_html(analysis)
