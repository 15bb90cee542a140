"""`shootout show` at 80 columns, on a wide terminal, and written to a file or a pipe."""

from __future__ import annotations

import dataclasses
import io

import pytest
from rich.console import Console

from shootout.report.terminal import show
from shootout.report.text import fmt_estimate, summary_sentence
from shootout.stats import Verdict

ELLIPSIS = "\u2026"
BOX = set("\u2502\u2503\u2501\u2500\u250f\u2513\u2517\u251b\u2523\u252b")


def render(analysis, width: int = 80, terminal: bool = True, all_metrics: bool = False, wide: bool = False) -> str:
    out = io.StringIO()
    show(analysis, Console(file=out, width=width, force_terminal=terminal, color_system=None), all_metrics, wide)
    return out.getvalue()


@pytest.mark.parametrize("all_metrics", [False, True])
def test_80_columns_fit_without_cutting_a_cell(analysis, all_metrics):
    text = render(analysis, all_metrics=all_metrics)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert ELLIPSIS not in text
    for word in ("sha1-sparse", "inconclusive", "22.0% slower [21.7\u201322.4%]", "5 workloads"):
        assert word in text


def test_default_view_is_one_headline_row_per_workload_then_the_summary(analysis):
    text = render(analysis)
    rows = [line.split()[0] for line in text.splitlines() if line.strip() and line.split()[0] in
            {w.name for w in analysis.workloads}]
    assert rows == [w.name for w in analysis.workloads]  # membw once, not once per metric
    assert "read \u2191" not in text and "2 sub-metrics not shown (shootout show --all)" in text
    sentence = " ".join(summary_sentence(analysis, analysis.summaries[0]).split())
    assert sentence in " ".join(text.split())
    assert "1  ptrtree lookups: throttled" in text  # flags as numbered notes under the table


def test_all_shows_every_metric(analysis):
    text = render(analysis, all_metrics=True)
    assert "read \u2191" in text and "openssl \u2191" in text
    assert "generic C on i386" in " ".join(text.split())  # the confounder note, whole


def test_a_wide_terminal_gets_the_medians(analysis):
    assert "41,011,500 iter/s" not in render(analysis, width=80)
    assert "41,011,500 iter/s" in render(analysis, width=220)  # the xz note is long: its estimate sits at the threshold


def test_piped_output_fits_80_columns_plain(analysis):
    text = render(analysis, width=80, terminal=False, all_metrics=True)
    assert not BOX & set(text) and ELLIPSIS not in text and "\x1b[" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "22.0% slower [21.7\u201322.4%]" in text


def test_piped_wide_output_is_plain_and_whole(analysis):
    text = render(analysis, width=80, terminal=False, all_metrics=True, wide=True)
    assert not BOX & set(text) and ELLIPSIS not in text and "\x1b[" not in text
    line = next(line for line in text.splitlines() if "openssl \u2191" in line)
    assert "confounder: openssl SHA-1 uses SHA-NI on amd64, generic C on i386" in line  # one line, whole
    assert "3,173,200 lookups/s" in text  # nothing dropped for width


def test_conditions_and_notes_come_from_the_analysis(analysis):
    extra = dataclasses.replace(analysis, conditions=("steal: the hypervisor took 4.0% of the CPU in the typical trial",),
                                notes=("within-run only: one run per side",))
    for text in (render(extra), render(extra, terminal=False)):
        lines = text.splitlines()
        assert lines[1] == "during the run: steal: the hypervisor took 4.0% of the CPU in the typical trial"
        assert "within-run only: one run per side" in text


def test_a_metric_without_a_verdict_shows_its_estimate_alone(analysis):
    comps = tuple(dataclasses.replace(c, verdict=Verdict.ESTIMATE) if c.metric == "read" else c
                  for c in analysis.comparisons)
    text = render(dataclasses.replace(analysis, comparisons=comps), all_metrics=True)
    read = next(line for line in text.splitlines() if "read \u2191" in line)
    said = fmt_estimate(next(c for c in comps if c.metric == "read").estimate)
    assert said in read and "estimate" in read
    assert not any(v in read.replace(said, "") for v in ("same", "faster", "slower"))


def test_no_suite_verdict_without_a_geomean(analysis):
    none = tuple(dataclasses.replace(s, geomean=None, by_category={}) for s in analysis.summaries)
    text = render(dataclasses.replace(analysis, summaries=none))
    geomean = next(line for line in text.splitlines() if line.strip().startswith("geomean"))
    assert "n/a" in geomean and not any(v in geomean for v in ("same", "faster", "slower", "inconclusive"))


def test_markdown_and_html_say_the_machine_wide_conditions_once(analysis):
    from shootout.report.html import render_html
    from shootout.report.markdown import render_markdown

    line = "steal: the hypervisor took 4.0% of the CPU in the typical trial"
    extra = dataclasses.replace(analysis, conditions=(line,))
    assert render_markdown(extra, {}).count(line) == 1
    assert render_html(extra).count(line) == 1


def test_names_too_long_for_80_columns_break_rather_than_lose_their_end(analysis):
    long = "a-very-long-user-workload-name-that-goes-on"
    comps = tuple(dataclasses.replace(c, workload=long) if c.workload == "xz" else c for c in analysis.comparisons)
    specs = tuple(dataclasses.replace(w, name=long) if w.name == "xz" else w for w in analysis.workloads)
    text = render(dataclasses.replace(analysis, comparisons=comps, workloads=specs), width=60)
    assert ELLIPSIS not in text and all(len(line) <= 60 for line in text.splitlines())
    assert f"{long} wall: cv>10%" in " ".join(text.split())  # whole in its note


def two_comparisons(analysis):
    """The fixture with a third configuration whose comparisons carry flags of their own."""
    from shootout.base.model import Config

    third = Config("x32", label="x32 userspace")
    extra = [dataclasses.replace(c, config=third.name, flags=("steal",), confounders=())
             for c in analysis.comparisons]
    summaries = (*analysis.summaries, dataclasses.replace(analysis.summaries[0], config=third.name))
    return dataclasses.replace(analysis, configs=(*analysis.configs, third),
                               comparisons=(*analysis.comparisons, *extra), summaries=summaries)


def test_each_comparisons_flags_sit_on_a_row_of_their_own(analysis):
    """vpn merged two comparisons' flags into one cell: 'cv>10%; steal' read as both having both."""
    from shootout.report.markdown import render_markdown

    three = two_comparisons(analysis)
    lines = render(three, width=400, terminal=False, wide=True).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("xz "))
    assert "i386 userspace: cv>10%" in lines[at] and "steal" not in lines[at]
    assert lines[at + 1].strip().startswith("x32 userspace: steal;")  # the next row, alone
    compact = " ".join(render(three, width=80).split())  # a table per configuration, notes under each
    assert "2 xz wall: cv>10%; resolves" in compact and "5 xz wall: steal; resolves" in compact
    md = render_markdown(three, {}).splitlines()
    at = next(i for i, line in enumerate(md) if line.startswith("| xz |"))
    assert "i386 userspace: \u26a0 cv>10%" in md[at] and "steal" not in md[at]
    assert md[at + 1].startswith("|  |  |") and "|  | x32 userspace: \u26a0 steal; " in md[at + 1]


def test_long_names_stay_whole_at_80_columns_and_an_interval_goes_under_its_figure(analysis):
    """A configuration and a workload named as people name them: the names are not folded;
    what gives way is the interval, on a line of its own under its figure."""
    workload = "python-random-throughput"
    configs = tuple(dataclasses.replace(c, label=f"{c.name}+malloc-arena-max-2") for c in analysis.configs)
    renamed = {w.name: workload for w in analysis.workloads[:1]}
    long = dataclasses.replace(
        analysis, configs=configs,
        workloads=tuple(dataclasses.replace(w, name=renamed.get(w.name, w.name)) for w in analysis.workloads),
        comparisons=tuple(dataclasses.replace(c, workload=renamed.get(c.workload, c.workload))
                          for c in analysis.comparisons))
    for terminal in (True, False):
        lines = render(long, terminal=terminal).splitlines()
        assert all(len(line) <= 80 for line in lines), max(lines, key=len)
        assert any(line.split()[:1] == [workload] for line in lines), "\n".join(lines)
        first = next(i for i, line in enumerate(lines) if line.split()[:1] == [workload])
        assert lines[first + 1].strip().startswith("["), lines[first:first + 2]  # its interval, under it


def test_all_says_how_each_headline_is_timed_and_why(analysis):
    timed = dataclasses.replace(analysis.workloads[0], timing="its own thread's CPU time: one busy thread")
    shown = dataclasses.replace(analysis, workloads=(timed, *analysis.workloads[1:]))
    line = f"{timed.name}: {timed.headline} is timed by its own thread's CPU time: one busy thread"
    assert line in " ".join(render(shown, width=200, all_metrics=True).split())
    assert "is timed by" not in render(shown, width=200)
