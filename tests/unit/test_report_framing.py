"""One result reads the same in every output: the terminal table (a terminal and a pipe), the
summary sentence, the charts, the Markdown and HTML reports and `show --json`."""

from __future__ import annotations

import html
import io
import json
import re

import pytest
from rich.console import Console

from shootout.report import charts
from shootout.report.html import render_html
from shootout.report.jsondata import show_rows
from shootout.report.markdown import render_markdown
from shootout.report.terminal import show
from shootout.report.text import iter_summaries, summary_sentence


def _pct(x: float) -> str:
    return f"{x * 100:.1f}"


def expected(ratio: float, low: float, high: float) -> tuple[str, str, str]:
    """The framing written out independently of the code under test: the configuration's
    speed against the baseline in percent with a direction word, the interval in the same words."""
    word = "faster" if ratio >= 1 else "slower"
    size = (lambda r: r - 1) if word == "faster" else (lambda r: 1 - r)
    ends = sorted((size(low), size(high)))
    if low >= 1 or high <= 1:
        interval = f"{_pct(ends[0])}\u2013{_pct(ends[1])}%"
    else:
        interval = f"\u2212{_pct(1 - low)}% to +{_pct(high - 1)}%"
    return f"{_pct(size(ratio))}%", word, interval


def _svg_text(svg: bytes) -> str:
    return html.unescape(" ".join(re.findall(r">([^<>]+)</text>", svg.decode())))


def _outputs(analysis) -> dict[str, str]:
    out = {}
    for name, terminal in (("terminal", True), ("pipe", False)):
        buf = io.StringIO()
        show(analysis, Console(file=buf, width=80, force_terminal=terminal, color_system=None))
        out[name] = " ".join(buf.getvalue().split())
    out["sentence"] = summary_sentence(analysis, next(iter_summaries(analysis)))
    out["markdown"] = render_markdown(analysis, charts.chart_names(analysis, "png"))
    out["html"] = html.unescape(re.sub(r"<svg.*?</svg>", "", render_html(analysis), flags=re.DOTALL))
    out["json"] = json.dumps(show_rows(analysis), ensure_ascii=False)
    out["summary chart"] = _svg_text(charts.summary_chart(analysis, "svg", text_as_paths=False))
    return out


@pytest.mark.parametrize("workload, verdict", [("ptrtree", "faster"), ("intmix", "slower"), ("membw", "same")])
def test_one_number_one_word_one_interval_everywhere(analysis, workload, verdict):
    comp = next(c for c in analysis.comparisons if c.workload == workload and c.headline)
    assert str(comp.verdict) == verdict
    number, word, interval = expected(comp.estimate.ratio, comp.estimate.low, comp.estimate.high)
    framed = f"{number} {word}"
    outputs = _outputs(analysis)
    outputs["workload chart"] = _svg_text(charts.workload_chart(analysis, workload, "svg", text_as_paths=False))
    del outputs["sentence"]  # the sentence speaks of the geomean: test_the_geomean_reads_the_same
    for name, text in outputs.items():
        assert framed in text and interval in text, f"{name}: no {framed!r} with {interval!r}"
    # no other framing of the same result beside it
    for name, text in outputs.items():
        assert f"{comp.estimate.ratio:.3f}\u00d7" not in text.replace('"speedup"', ""), name


def test_the_geomean_reads_the_same_in_the_sentence_and_every_output(analysis):
    geo = analysis.summaries[0].geomean
    number, word, interval = expected(geo.ratio, geo.low, geo.high)
    outputs = _outputs(analysis)
    assert outputs["sentence"].startswith(f"i386 userspace is {number} {word} than amd64 userspace")
    for name, text in outputs.items():
        assert f"{number} {word}" in text and interval in text, f"{name}: no {number} {word} with {interval!r}"


def test_the_legend_says_what_the_interval_is_and_why_it_is_wider(analysis):
    outputs = _outputs(analysis)
    for name in ("terminal", "pipe", "markdown", "html"):
        text = outputs[name]
        assert "where the true speed-up lies" in text, name
        assert "wider than a plain 95% interval" in text and "95% together" in text, name
        # the whiskers of the bars are a plain 95% interval of a median; no speed-up is said with one
        assert "95% CI" not in re.sub(r"95% CI of (each|the) median", "", text), name


def test_json_rows_carry_the_same_words_as_the_table(analysis):
    rows = show_rows(analysis)
    for row in rows:
        if row["speedup"] is None:
            assert row["speedup_text"] is None
            continue
        number, word, interval = expected(row["speedup"], row["ci_low"], row["ci_high"])
        assert row["speedup_text"] == f"{number} {word} [{interval}]"


def test_every_result_of_a_real_stored_run_reads_the_same_everywhere():
    """The same check over a real run as stored (membw's 17 metrics, flags, an inconclusive row):
    each headline comparison's number, word and interval in every output."""
    from pathlib import Path

    from shootout.importers import load_results
    from shootout.judge.analysis import analyze
    from shootout.store.results import from_results

    run, trials = from_results(load_results(Path(__file__).parents[1] / "fixtures/report/stored-run.json"))
    analysis = analyze(run, trials)
    outputs = _outputs(analysis)
    del outputs["sentence"]
    judged = [c for c in analysis.comparisons if c.headline and c.estimate is not None and c.decided_by is None]
    assert judged
    for comp in judged:
        number, word, interval = expected(comp.estimate.ratio, comp.estimate.low, comp.estimate.high)
        framed = f"{number} {word}"
        charted = _svg_text(charts.workload_chart(analysis, comp.workload, "svg", text_as_paths=False))
        for name, text in {**outputs, "workload chart": charted}.items():
            assert framed in text and interval in text, f"{comp.workload}, {comp.config}, {name}: no {framed!r} [{interval}]"
