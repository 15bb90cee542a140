"""Recorded amounts in the analysis: per-configuration intervals from the trials' values and
what the parts observed, and the guard: a setup that lost tabs is never faster. Their one
table as Markdown, HTML and `show` lay it out, and the pi3desk-swap paragraph built on them."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec

from shootout.base.runfacts import RunFacts
from shootout.experiments import experiment
from shootout.judge.analysis import Analysis, analyze
from shootout.report.html import render_html
from shootout.report.markdown import render_markdown
from shootout.report.terminal import show
from shootout.stats import Verdict
from shootout.workloads.swap import Tabs


def trial(r: int, config: str, p95: float, killed: float, psi_full: float, swap: dict | None = None) -> Trial:
    values = {"p95_ms": p95, "p50_ms": p95 / 3, "p99_ms": p95 * 2, "switches_per_s": 10.0, "open_s": 1.0,
              "tabs_killed": killed, "major_faults": 0.0}
    return Trial(TrialSpec(r, 0, "tabs", config), values, 1.0, 0.5, 0.1, 1, 1, 0, "", 0.0,
                 observed={"memory": {"psi_full_ms": psi_full}, **({"swap": swap} if swap else {})})


@pytest.fixture(scope="module")
def swap_run() -> Analysis:
    """The experiment's four setups over 8 rounds: none loses 50 tabs a round, zram and zswap
    switch about as fast (their intervals overlap), disk much slower."""
    rng = np.random.default_rng(12)
    pool = {"zswap_ratio": 1.9, "zswap_pool_mib": 500.0, "zswap_stored_mib": 950.0, "zswap_written_back_pages": 0.0}
    trials = []
    for r in range(1, 9):
        jitter = {c: float(np.exp(rng.normal(0, 0.08))) for c in ("none", "disk", "zswap", "zram")}
        trials += [trial(r, "none", 200 * jitter["none"], 50, 500.0 + r),
                   trial(r, "disk", 600 * jitter["disk"], 0, 30_000.0 + r),
                   trial(r, "zswap", 270 * jitter["zswap"], 0, 50_000.0 + r, pool),
                   trial(r, "zram", 250 * jitter["zram"], 0, 40_000.0 + r)]
    configs = [Config("none"), Config("disk"), Config("zswap"), Config("zram")]
    return analyze(Run(1, 0.0, "complete", RunSettings(max_rounds=8), configs, [Tabs.spec], {"tabs": {}}, RunFacts()), trials)


def test_a_setup_that_loses_tabs_is_worse_however_fast_its_switches():
    rng = np.random.default_rng(5)
    trials = []
    for r in range(1, 9):  # "kills" switches 3x faster, but loses a tab every round
        trials += [trial(r, "keeps", 300 * np.exp(rng.normal(0, 0.05)), 0, 1000.0 + r),
                   trial(r, "kills", 100 * np.exp(rng.normal(0, 0.05)), 1, 50.0 + r)]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("keeps"), Config("kills")], [Tabs.spec],
              {"tabs": {}}, RunFacts())
    analysis = analyze(run, trials)
    head = next(c for c in analysis.comparisons if c.metric == "p95_ms")
    assert head.estimate is not None and head.estimate.low > 1  # by latency alone it would be faster...
    assert head.verdict is Verdict.WORSE  # ...but it lost tabs: worse, not "slower" beside a faster number
    assert head.flags[-1] == "tabs_killed: lost 8 (baseline 0) over 8 rounds; this decides, the p95_ms speed-up is not judged"
    summary = analysis.summaries[0]
    assert (summary.worse, summary.slower, summary.faster, summary.geomean) == (1, 0, 0, None)
    amounts = {(a.name, a.config): a for a in analysis.amounts}
    killed, psi = amounts[("tabs_killed", "kills")], amounts[("memory.psi_full_ms", "keeps")]
    assert killed.values == (1.0,) * 8 and killed.interval.median == 1
    assert psi.interval.low <= psi.interval.median <= psi.interval.high and psi.unit == "ms"
    assert "## Recorded amounts" in render_markdown(analysis, {})


def test_equal_losses_leave_the_speed_up_verdict_alone():
    trials = [t for r in range(1, 9) for t in (trial(r, "a", 300.0 * (1 + r / 1000), 0, 1.0),
                                                 trial(r, "b", 100.0 * (1 + r / 900), 0, 1.0))]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("a"), Config("b")], [Tabs.spec], {"tabs": {}}, RunFacts())
    head = next(c for c in analyze(run, trials).comparisons if c.metric == "p95_ms")
    assert head.verdict is Verdict.FASTER and not any(f.startswith("tabs_killed") for f in head.flags)


def test_the_paragraph_names_the_fastest_setup_and_the_one_losing_tabs_with_intervals(swap_run):
    text, *rest = experiment("pi3desk-swap").explain(swap_run)
    assert "zram kept tab switches fastest: p95 2" in text and "(median over 8 rounds, 95% interval), no tab lost" in text
    # zswap's interval overlaps zram's; disk's lies wholly above it
    assert "its interval overlaps zswap's, so this run does not separate them (it lies below disk)" in text
    assert "none lost tabs to the OOM killer: 50 per trial [50, 50], 400 over 8 rounds" in text
    assert "Paired by round against none" in text
    assert "zram better (lost 0 tabs, none 400; p95 speed-up 19.0% slower [" in text
    assert "zswap: memory stall (PSI full) 50,004 ms per trial [50,001, 50,008]" in rest
    zswap = next(line for line in rest if line.startswith("zswap: pool"))
    assert "compression ratio 1.90 [1.90, 1.90]" in zswap and "written_back_pages 0" in zswap


def test_the_paragraph_says_the_limit_the_setups_had(swap_run):
    import dataclasses

    assert experiment("pi3desk-swap").explain(swap_run)[0].startswith("pi3desk-swap: Under the 512 MiB limit")
    at_writeup = [dataclasses.replace(c, parts={"memory": {"limit": 1 << 30}}) for c in swap_run.configs]
    text = experiment("pi3desk-swap").explain(dataclasses.replace(swap_run, configs=tuple(at_writeup)))[0]
    assert text.startswith("pi3desk-swap: Under the 1 GiB limit with about twice that in tabs")


def test_every_format_carries_the_same_amounts_table(swap_run):
    row = "tabs_killed (tabs)"
    cells = ["50 [50, 50]", "0 [0, 0]"]
    markdown = render_markdown(swap_run, {})
    line = next(line for line in markdown.splitlines() if row in line)
    assert line.startswith("| tabs | tabs_killed (tabs) | 50 [50, 50] | 0 [0, 0] | 0 [0, 0] | 0 [0, 0] |")
    html = render_html(swap_run)
    assert 'id="amounts-table"' in html and row in html and "50 <small>[50, 50]</small>" in html
    piped = io.StringIO()
    show(swap_run, Console(file=piped, width=80, color_system=None), wide=True)  # one whole line a row
    assert any(row in line and all(c in line for c in cells) and "tabs the OOM killer" in line
               for line in piped.getvalue().splitlines())
    compact = io.StringIO()
    show(swap_run, Console(file=compact, width=80, color_system=None))  # a line per amount and side
    lines = compact.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert any(line.split()[:5] == ["tabs_killed", "(tabs)", "none", "50", "[50,"] for line in lines if line.strip())
    narrow = io.StringIO()
    show(swap_run, Console(file=narrow, width=80, force_terminal=True, color_system=None))
    text = narrow.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines()) and "\u2026" not in text
    assert "Recorded amounts" in text and "swap.zswap_ratio (x)" in text and "1.9   [1.9, 1.9]" in text


def test_a_verdict_the_guard_decided_reads_the_same_everywhere(swap_run):
    """pi3desk-swap with none as the baseline: none lost tabs, disk switched 3x slower. Every
    output says disk is *better* (by tabs lost), none says faster or slower, the number beside
    the word is the count that decided it, no geomean calls the tabs run by its speed, and the
    summary chart puts no point on a speed-up side."""
    from shootout.report.charts import _summary_rows, summary_chart
    from shootout.report.jsondata import show_rows
    from shootout.report.text import summary_sentence

    disk = next(c for c in swap_run.comparisons if c.config == "disk" and c.headline)
    assert disk.estimate.high < 1 and disk.verdict is Verdict.BETTER
    summary = next(s for s in swap_run.summaries if s.config == "disk")
    assert summary.geomean is None and (summary.better, summary.faster, summary.slower) == (1, 0, 0)
    sentence = summary_sentence(swap_run, summary)
    assert "faster than" not in sentence and "too few rounds" not in sentence
    assert "disk better in 1 and none better in 0 by what they lost" in sentence
    piped = io.StringIO()
    show(swap_run, Console(file=piped, width=200, color_system=None))
    row = next(line for line in piped.getvalue().splitlines() if line.startswith("tabs "))
    assert "tabs_killed 0 vs 400  better" in row and "faster" not in row and "\u00d7" not in row
    geo = next(line for line in piped.getvalue().splitlines() if line.startswith("geomean"))
    assert "slower" not in geo and "faster" not in geo and "n/a (speed not judged)" in geo
    markdown = render_markdown(swap_run, {})
    assert "tabs_killed 0 vs 400 **better**" in markdown and "**faster**" not in markdown
    assert "disk is better than none by tabs_killed" in markdown and "is -66" not in markdown
    json_row = next(r for r in show_rows(swap_run) if r["config"] == "disk" and r["headline"])
    assert json_row["verdict"] == "better" and json_row["decided_by"]["baseline"] == 400
    rows = _summary_rows(swap_run, "disk")
    assert rows[0][1] is None and rows[0][2] is Verdict.BETTER and "speed-up not judged" in rows[0][4]
    svg = summary_chart(swap_run, "svg", text_as_paths=False).decode()
    assert "better: tabs_killed 0 vs 400" in svg


def test_the_paragraph_gives_the_zram_devices_memory_and_the_writes_it_refused():
    limited = Config("capped", parts={"swap": {"kind": "zram", "max_pool_percent": 10}})
    device = {"zram_mem_mib": 4.8, "zram_orig_mib": 10.5, "zram_ratio": 2.39}
    trials = [t for r in range(1, 9) for t in (
        trial(r, "zram", 250.0 + r, 0, 100.0, {**device, "zram_mem_mib": 300.0 + r, "zram_failed_writes": 0.0}),
        trial(r, "capped", 900.0 + r, 5, 49_000.0, {**device, "zram_failed_writes": 1_200_000.0 + r}))]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("zram"), limited], [Tabs.spec], {"tabs": {}}, RunFacts())
    _, *rest = experiment("pi3desk-swap").explain(analyze(run, trials))
    free = next(line for line in rest if line.startswith("zram: device memory"))
    assert free.startswith("zram: device memory at its peak 304 MiB [") and "holding 10 MiB, compression ratio 2.39" in free
    assert "refused" not in free and "; no mem_limit: the write-up's 15% is zswap's pool" in free
    capped = next(line for line in rest if line.startswith("capped: device memory"))
    assert "1,200,004 writes refused at its mem_limit (pages the kernel could not swap out)" in capped
    assert "no mem_limit" not in capped


def test_a_setup_that_lost_tabs_and_switched_slowest_is_not_said_to_look_fast():
    """As a run on a 2-core VM had it: none lost tabs and its p95 (111 ms) was the slowest of
    the four. The paragraph says it lost tabs and was slowest as well, never that its switches
    'only look fast'; where it is faster than a setup that lost none, it says so. The geomean
    (every speed-up decided by tabs lost) reads 'not judged' in the text and in the JSON."""
    from shootout.report.jsondata import show_rows
    from shootout.report.text import fmt_suite

    rng = np.random.default_rng(13)
    trials = [t for r in range(1, 9) for t in (
        trial(r, "none", 111 * float(np.exp(rng.normal(0, 0.03))), 3, 500.0),
        trial(r, "disk", 60 * float(np.exp(rng.normal(0, 0.03))), 0, 30_000.0),
        trial(r, "zswap", 50 * float(np.exp(rng.normal(0, 0.03))), 0, 20_000.0),
        trial(r, "zram", 45 * float(np.exp(rng.normal(0, 0.03))), 0, 10_000.0))]
    configs = [Config("none"), Config("disk"), Config("zswap"), Config("zram")]
    analysis = analyze(Run(1, 0.0, "complete", RunSettings(max_rounds=8), configs, [Tabs.spec], {"tabs": {}},
                           RunFacts()), trials)
    text = experiment("pi3desk-swap").explain(analysis)[0]
    assert "only look fast" not in text
    assert "none lost tabs to the OOM killer" in text and "slower than every setup that lost none" in text
    geo = [r for r in show_rows(analysis) if r["workload"] == "geomean"]
    for summary, row in zip(analysis.summaries, geo, strict=True):
        assert fmt_suite(summary.geomean, summary) == "n/a (speed not judged)"
        assert row["verdict"] == summary.verdict == Verdict.NOT_JUDGED and "tabs_killed" in row["why"]
    fast = [t for r in range(1, 9) for t in (trial(r, "none", 40.0 + r / 10, 3, 500.0),
                                             trial(r, "disk", 60.0 + r / 10, 0, 30_000.0))]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), configs[:2], [Tabs.spec], {"tabs": {}}, RunFacts())
    assert "only look fast" in experiment("pi3desk-swap").explain(analyze(run, fast))[0]
