"""Renderers on harder analyses: three configurations, missing estimates, unpaired runs."""

from __future__ import annotations

import dataclasses

import pytest
from rich.console import Console

from shootout.base.model import Config
from shootout.judge.analysis import Summary
from shootout.judge.crossrun import ACROSS_RUNS_RULE
from shootout.report import charts
from shootout.report.html import render_html
from shootout.report.jsondata import show_rows
from shootout.report.markdown import render_markdown
from shootout.report.perdollar import per_dollar
from shootout.report.terminal import show_table
from shootout.stats import Verdict


@pytest.fixture(scope="module")
def three_way(analysis):
    """The fixture plus a third configuration whose comparisons are unpaired and partly unestimated."""
    base = analysis
    m32 = Config(name="host+m32", label="-m32 build")
    extra = []
    for comp in base.comparisons:
        est = None if comp.workload == "xz" else comp.estimate
        extra.append(dataclasses.replace(
            comp, config=m32.name, estimate=est, verdict=comp.verdict if est else Verdict.INCONCLUSIVE,
            paired=False, medians={comp.baseline: comp.medians[comp.baseline], m32.name: comp.medians[comp.config]},
        ))
    values = dict(base.values)
    other = base.configs[1].name
    for (w, m, c), v in base.values.items():
        if c == other:
            values[(w, m, m32.name)] = v[:4]  # too few for a median interval
    summary = Summary(config=m32.name, geomean=None, by_category={}, faster=1, slower=2, same=1, inconclusive=1,
                      threshold=base.threshold)
    return dataclasses.replace(
        base, configs=base.configs + (m32,), comparisons=base.comparisons + tuple(extra),
        summaries=base.summaries + (summary,), values=values, noise_floor=None,
        notes=("unpaired: -m32 build comes from another run; includes drift between the runs",),
        rules=base.rules + (ACROSS_RUNS_RULE,),
    )


def test_terminal_has_a_column_pair_per_configuration(three_way):
    console = Console(width=260, record=True, color_system=None)
    console.print(show_table(three_way))
    text = console.export_text()
    assert "-m32 build" in text and "vs amd64 userspace" in text
    assert text.count("n/a (too few rounds)") >= 2  # xz and the missing geomean
    assert "unpaired" in text


def test_json_rows_for_every_configuration(three_way):
    rows = show_rows(three_way)
    m32 = [r for r in rows if r["config"] == "host+m32"]
    assert len(m32) == 7 + 1  # seven metrics plus the geomean row
    xz = next(r for r in m32 if r["workload"] == "xz")
    assert xz["speedup"] is None and xz["verdict"] == "inconclusive" and xz["paired"] is False


def test_html_and_markdown_render_every_configuration(three_way):
    html = render_html(three_way)
    assert "-m32 build" in html and "too few rounds" in html and "Configuration</th>" in html
    assert "Mann\u2013Whitney" in html  # the method section names the unpaired estimator
    md = render_markdown(three_way, charts.chart_names(three_way, "png"))
    assert "-m32 build vs amd64 userspace" in md and "No suite geomean for -m32 build" in md


def test_charts_with_missing_estimates_and_short_series(three_way):
    assert charts.summary_chart(three_way, "png").startswith(b"\x89PNG")
    svg = charts.workload_chart(three_way, "xz", "svg", text_as_paths=False)
    assert b"-m32 build" in svg and b"under 6 rounds: no interval" in svg


def test_per_dollar_with_a_missing_geomean(three_way):
    prices = {c.name: 1.0 + i for i, c in enumerate(three_way.configs)}
    rows = per_dollar(three_way, prices, "EUR")
    missing = [r for r in rows if r["config"] == "host+m32" and r["workload"] in ("xz", "geomean")]
    assert len(missing) == 2 and all(r["perf_per_price"] is None for r in missing)
    assert all(r["verdict"] == "inconclusive" for r in missing)


def test_dollar_signs_in_labels_stay_literal(three_way):
    # Imported hyperfine commands often contain shell "$": matplotlib must not read math text.
    label = "cmp $a $b"  # an even count of "$" is what matplotlib would typeset as math
    configs = (three_way.configs[0], dataclasses.replace(three_way.configs[1], label=label), three_way.configs[2])
    odd = dataclasses.replace(three_way, configs=configs)
    svg = charts.workload_chart(odd, "intmix", "svg", text_as_paths=False)
    assert f">{label}</text>".encode() in svg  # one literal text element (the label also sits in a comment)
    assert charts.summary_chart(odd, "png").startswith(b"\x89PNG")
