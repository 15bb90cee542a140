"""Terminal table, summary wording, performance per price and report files."""

from __future__ import annotations

import dataclasses

import pytest
from rich.console import Console

from shootout.base.errors import UsageError
from shootout.report.files import write_report
from shootout.report.perdollar import per_dollar
from shootout.report.terminal import show_table
from shootout.report.text import fmt_estimate, speed, speed_tick, summary_sentence
from shootout.stats import Estimate


def _render(table) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def test_show_table_has_medians_speedups_verdicts_flags_and_geomean(analysis):
    text = _render(show_table(analysis))
    assert "41,011,500 iter/s" in text and "38,227,000 iter/s" in text
    intmix = next(c for c in analysis.comparisons if c.workload == "intmix")
    assert fmt_estimate(intmix.estimate) in text
    for word in ("faster", "slower", "same", "inconclusive", "cv>10%", "throttled"):
        assert word in text
    # Sub-metrics (openssl, membw read) are hidden by default; --all shows them as estimates.
    assert "confounder" not in text and "openssl" not in text and "2 sub-metrics not shown" in text
    full = _render(show_table(analysis, all_metrics=True))
    openssl = next(line for line in full.splitlines() if "openssl" in line)
    assert "estimate" in openssl and "confounder" in full and "not shown" not in full
    # The rule behind the verdict intervals is named, and an inconclusive verdict says what would settle it.
    assert "verdict intervals: sequential" in text and "Bonferroni over 5" in text
    assert "resolves \u00b1" in text and "'same' at" in text
    geo = analysis.summaries[0].geomean
    geomean_line = next(line for line in text.splitlines() if "geomean" in line and "workloads" in line)
    assert fmt_estimate(geo) in geomean_line
    assert "noise floor" in text and "0.4%" in text


def test_show_table_with_no_noise_floor_omits_it(analysis):
    text = _render(show_table(dataclasses.replace(analysis, noise_floor=None)))
    assert "noise floor" not in text


def test_summary_sentence_names_the_configurations_speed_and_counts(analysis):
    sentence = summary_sentence(analysis, analysis.summaries[0])
    geo = analysis.summaries[0].geomean
    gap = (1 - geo.ratio) * 100
    assert sentence.startswith(f"i386 userspace is {gap:.1f}% slower than amd64 userspace")
    assert f"(interval {(1 - geo.high) * 100:.1f}\u2013{(1 - geo.low) * 100:.1f}%)" in sentence
    assert "geometric mean of 5 workloads" in sentence
    assert "i386 userspace faster in 1, slower in 2" in sentence


def test_summary_sentence_for_same_and_inconclusive(analysis):
    s = analysis.summaries[0]
    same = dataclasses.replace(s, geomean=Estimate(1.002, 0.998, 1.006, 12, 0.95, "bootstrap"))
    assert "perform the same within \u00b11%" in summary_sentence(analysis, same)
    unsure = dataclasses.replace(s, geomean=Estimate(1.02, 0.97, 1.07, 12, 0.95, "bootstrap"))
    assert summary_sentence(analysis, unsure).startswith("No clear winner")


def test_speed_says_the_configurations_side_in_words():
    assert str(speed(1.07, 1.051, 1.089)) == "7.0% faster [5.1\u20138.9%]"
    assert str(speed(0.93, 0.919, 0.938)) == "7.0% slower [6.2\u20138.1%]"
    assert str(speed(0.998, 0.834, 1.204)) == "0.2% slower [\u221216.6% to +20.4%]"
    assert str(speed(4.939, 4.5, 5.2)) == "393.9% faster [350.0\u2013420.0%]"
    assert speed(0.99999, 0.99, 1.01).short == "0.0% slower"
    assert [speed_tick(t) for t in (0.8, 1.0, 1.25)] == ["20% slower", "0%", "25% faster"]


def test_per_dollar_divides_speedup_by_price_ratio(analysis):
    base, other = (c.name for c in analysis.configs)
    rows = per_dollar(analysis, {base: 0.768, other: 0.408}, "$/h")
    heads = [c for c in analysis.comparisons if c.headline]
    assert len(rows) == len(heads) + 1
    ratio = 0.408 / 0.768
    for row in rows[:-1]:
        comp = next(c for c in heads if c.workload == row["workload"])
        assert row["perf_per_price"] == pytest.approx(comp.estimate.ratio / ratio)
        assert row["ppp_low"] == pytest.approx(comp.estimate.low / ratio)
        assert row["ppp_high"] == pytest.approx(comp.estimate.high / ratio)
    geo = rows[-1]
    assert geo["workload"] == "geomean"
    assert geo["perf_per_price"] == pytest.approx(analysis.summaries[0].geomean.ratio / ratio)
    # At about half the price, a configuration 4% slower is much better value.
    assert geo["verdict"] == "faster"
    same_price = per_dollar(analysis, {base: 1.0, other: 1.0}, "$")
    assert same_price[-1]["verdict"] == "slower"


def test_per_dollar_rejects_missing_or_bad_prices(analysis):
    base, other = (c.name for c in analysis.configs)
    with pytest.raises(UsageError, match="no price"):
        per_dollar(analysis, {base: 1.0}, "$")
    with pytest.raises(UsageError, match="positive"):
        per_dollar(analysis, {base: 1.0, other: 0.0}, "$")


@pytest.mark.parametrize("fmt, expected", [
    ("html", {"report.html"}),
    ("md", {"report.md", "summary.png"}),
    ("png", {"summary.png"}),
    ("svg", {"summary.svg"}),
])
def test_write_report_files(analysis, tmp_path, fmt, expected):
    out = tmp_path / "out"
    paths = write_report(analysis, out, fmt)
    names = {p.name for p in paths}
    assert expected <= names
    assert all(p.exists() and p.stat().st_size > 0 for p in paths)
    if fmt in ("md", "png", "svg"):
        ext = "png" if fmt == "md" else fmt
        assert {f"workload-{w.name}.{ext}" for w in analysis.workloads} <= names
    if fmt == "md":
        md = (out / "report.md").read_text()
        assert all(f"]({p.name})" in md for p in paths if p.suffix == ".png")


def test_write_report_errors_leave_nothing(analysis, tmp_path):
    with pytest.raises(UsageError, match="unknown report format"):
        write_report(analysis, tmp_path / "x", "pdf")
    assert not (tmp_path / "x").exists()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UsageError, match="cannot write"):
        write_report(analysis, blocker / "sub", "html")


@pytest.mark.parametrize("typed, canonical", [("markdown", "md"), ("Markdown", "md"), ("MD", "md"),
                                              ("htm", "html"), ("HTML", "html"), (".svg", "svg")])
def test_obvious_spellings_of_a_format(typed, canonical):
    from shootout.report.files import report_format

    assert report_format(typed) == canonical


def test_markdown_spelled_out_writes_the_markdown_report(analysis, tmp_path):
    names = {p.name for p in write_report(analysis, tmp_path / "out", "markdown")}
    assert "report.md" in names


def test_one_configuration_shows_its_medians_in_every_rendering() -> None:
    """A run of one side compared nothing, but measured: show, --json and the Markdown report
    give its figures (not an empty table, [] and no results)."""
    import io

    from shootout.base.model import (
        Config,
        Metric,
        Run,
        RunSettings,
        Trial,
        TrialSpec,
        WorkloadSpec,
    )
    from shootout.base.runfacts import RunFacts
    from shootout.judge.analysis import analyze
    from shootout.report.jsondata import show_rows
    from shootout.report.html import render_html
    from shootout.report.markdown import render_markdown
    from shootout.report.terminal import show

    spec = WorkloadSpec("intmix", "cpu", "integer mix", (Metric("rate", "ops/s"),), "rate")
    run = Run(3, 0.0, "complete", RunSettings(), [Config("host")], [spec], {"intmix": {}}, RunFacts())
    trials = [Trial(TrialSpec(r, 0, "intmix", "host"), {"rate": 400.0 + 2 * r}, 1.0, 1.0, 0.0, 1, 1, 0, "", 0.0)
              for r in range(7)]
    analysis = analyze(run, trials)
    assert show_rows(analysis) == [{
        "workload": "intmix", "category": "cpu", "metric": "rate", "headline": True, "unit": "ops/s",
        "direction": "higher", "config": "host", "median": 407.0, "min": 402.0, "max": 412.0, "rounds": 6,
        "verdict": None}]
    for terminal in (True, False):
        out = io.StringIO()
        show(analysis, Console(file=out, width=120, force_terminal=terminal, color_system=None))
        text = out.getvalue()
        assert "intmix" in text and "407 ops/s" in text and "nothing compared" in text, text
    assert "| 407 ops/s |" in render_markdown(analysis, {})
    page = render_html(analysis)
    assert "Median host" in page and ">407 ops/s<" in page and ">412 ops/s<" in page
