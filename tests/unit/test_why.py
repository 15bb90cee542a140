"""The "why" counters: their ratios and intervals, the line that names the furthest from 1, and
the rule that they are recorded amounts: they never move a verdict or the geomean."""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pytest
from rich.console import Console

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.counters.baseline import baseline
from shootout.judge.analysis import analyze
from shootout.judge.why import CounterRatio, cut_apart, pass_ratios, trial_ratios, why
from shootout.report.html import render_html
from shootout.report.jsondata import show_rows
from shootout.report.markdown import render_markdown
from shootout.report.terminal import show
from shootout.report.why import why_lines
from shootout.report.whychart import why_chart
from shootout.workloads.cpu import PtrTree

ROUNDS = 10


def trial(r: int, config: str, seconds: float, rss: int, faults: int, joules: float | None = None) -> Trial:
    observed = {"rusage": {"minor_faults": faults, "major_faults": 0, "voluntary_switches": 2,
                           "involuntary_switches": 3}}
    if joules is not None:
        observed["energy"] = {"joules": joules}
    return Trial(TrialSpec(r, 0, "ptrtree", config), {"lookups": 1e6 / seconds}, seconds, seconds * 0.99, 0.01,
                 rss, 5, 0, "", 0.0, observed=observed)


def pass_record(instructions: float, d1: float, text: int, partial: bool = False) -> dict:
    return {"source": "cachegrind", "model": "pi4", "caches": "D1 32 KiB 2-way, LL 1 MiB 16-way", "partial": partial,
            "scaled": "lookups 50,000 of 500,000", "counts": {"instructions": instructions, "d1_misses": d1},
            "code": {"text_bytes": text, "data_bytes": 100, "libraries": 1}}


def ptrtree_run(seed: int = 3, counters: bool = True, joules: bool = False) -> tuple[Run, list[Trial]]:
    """i386 25% faster on ptrtree with 0.55x the RSS; the pass saw 0.62x the D1 misses."""
    rng = np.random.default_rng(seed)
    trials = []
    for r in range(1, ROUNDS + 1):
        a, b = (float(np.exp(rng.normal(0, 0.02))) for _ in range(2))
        trials += [trial(r, "amd64", 1.0 * a, 110_000 + int(rng.integers(0, 500)), 27_000,
                         5.0 * a if joules else None),
                   trial(r, "i386", 0.8 * b, 60_500 + int(rng.integers(0, 500)), 15_000, 3.6 * b if joules else None)]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=ROUNDS), [Config("amd64"), Config("i386")], [PtrTree.spec],
              {"ptrtree": {"nodes": 2_000_000, "lookups": 500_000}}, RunFacts())
    if counters:
        run.counters = {"ptrtree": {"amd64": pass_record(700e6, 28e6, 800), "i386": pass_record(756e6, 17.4e6, 900)}}
    return run, trials


def test_trial_counters_get_the_median_ratio_and_an_interval_that_leaves_one_out() -> None:
    run, trials = ptrtree_run()
    found = {r.name: r for r in trial_ratios(run, trials, "ptrtree", "i386")}
    rss = found["max_rss"]
    assert rss.ratio == pytest.approx(0.55, abs=0.01) and rss.low is not None and rss.high is not None
    assert rss.low <= rss.ratio <= rss.high < 1
    assert found["minor_faults"].ratio == pytest.approx(15_000 / 27_000)
    # the same on both sides: a ratio of 1, which never matters
    assert found["involuntary_switches"].ratio == 1.0 and not found["involuntary_switches"].matters()
    assert "major_faults" not in found  # zero on both sides: no ratio
    assert "energy" not in found  # nothing reported it


def test_the_pass_counters_compare_once_and_a_cut_pass_compares_rates_per_instruction() -> None:
    run, _ = ptrtree_run()
    found = {r.name: r for r in pass_ratios(run, "ptrtree", "i386")}
    assert found["d1_misses"].ratio == pytest.approx(17.4 / 28)
    assert found["instructions"].ratio == pytest.approx(756 / 700)
    assert found["d1_misses"].low is None and found["d1_misses"].source == "cachegrind pi4 model"
    assert found["text_bytes"].ratio == pytest.approx(900 / 800) and found["text_bytes"].source == "ELF"
    run.counters["ptrtree"]["i386"]["partial"] = True
    cut = {r.name: r for r in pass_ratios(run, "ptrtree", "i386")}
    assert "instructions" not in cut  # each side did a different amount of work
    assert cut["d1_misses"].ratio == pytest.approx((17.4 / 756) / (28 / 700))
    assert cut["d1_misses"].label == "D1 misses per instruction"


@pytest.mark.parametrize(("processes", "instructions", "apart"), [
    (1, 756e6, None), (2, 756e6, "it counted 2 processes, the baseline 1"),
    (1, 69e6, "it counted 69,000,000 instructions, the baseline 700,000,000"),
    (1, 247e3, "it counted 247,000 instructions, the baseline 700,000,000")])
def test_a_cut_pass_compares_only_where_both_sides_got_about_as_far(
        processes: int, instructions: float, apart: str | None) -> None:
    """membw cut at its cap: one side's program left no count (SIGKILLed), its shell's 247,000
    instructions did; rates per instruction then differed by 600x for that alone."""
    run, _ = ptrtree_run()
    a, b = run.counters["ptrtree"]["amd64"], run.counters["ptrtree"]["i386"]
    a.update(partial=True, processes=1)
    b.update(partial=True, processes=processes, counts={"instructions": instructions, "d1_misses": 17.4e6})
    assert cut_apart(a, b) == apart
    found = {r.name for r in pass_ratios(run, "ptrtree", "i386")}
    assert found == ({"text_bytes"} if apart else {"d1_misses", "text_bytes"})
    a["counts"] = b["counts"] = {"instructions": 247e3, "d1_misses": 1800}  # both cut in their shells
    b["processes"] = 1
    assert cut_apart(a, b) == "it counted 247,000 instructions, the baseline 247,000"


def test_the_why_line_names_the_counters_furthest_from_one_with_their_source() -> None:
    run, trials = ptrtree_run()
    found = why(run, trials, "ptrtree", "i386")
    line = found.line()
    assert line.startswith("RSS 0.55\u00d7 [")
    assert "page faults 0.56\u00d7" in line and "D1 misses 0.62\u00d7 (cachegrind pi4 model)" in line
    assert "instructions" not in line  # 1.08x: within the 10% that does not matter
    assert len(found.shown()) == 3


@pytest.mark.parametrize(("ratio", "low", "high", "matters"), [
    (1.05, None, None, False), (1.2, None, None, True), (0.8, 0.7, 0.9, True), (0.8, 0.6, 1.05, False),
    (1 / 1.09, None, None, False)])
def test_a_counter_matters_beyond_ten_percent_with_an_interval_that_leaves_one_out(
        ratio: float, low: float | None, high: float | None, matters: bool) -> None:
    assert CounterRatio("x", "x", ratio, low, high).matters() is matters


def test_counters_never_move_a_verdict_or_the_geomean() -> None:
    """The same trials with wild counters and with none: every comparison and summary alike."""
    run, trials = ptrtree_run(counters=False)
    wild = [dataclasses.replace(t, max_rss_kb=t.max_rss_kb * (50 if t.spec.config == "i386" else 1),
                                observed={"rusage": {"minor_faults": 1}, "energy": {"joules": 1e6}}) for t in trials]
    plain = analyze(run, trials)
    counted_run, _ = ptrtree_run()
    counted = analyze(counted_run, wild)
    assert counted.whys[0].shown() and not plain.whys[0].shown() or plain.whys[0].shown() != counted.whys[0].shown()
    assert counted.comparisons == plain.comparisons
    assert counted.summaries == plain.summaries


def test_the_median_ratio_interval_covers_the_true_ratio_at_its_confidence() -> None:
    """Seeded simulation: RSS-like counters with noise on both sides, true median ratio 0.6;
    the interval of the per-round ratios covers it in at least 95% of 2,000 runs (less would fail)."""
    rng = np.random.default_rng(2026)
    covered = 0
    runs = 2000
    for _ in range(runs):
        a = 100 * np.exp(rng.normal(0, 0.1, ROUNDS))
        b = 60 * np.exp(rng.normal(0, 0.1, ROUNDS))
        trials = [t for r in range(ROUNDS) for t in (trial(r + 1, "amd64", 1.0, int(a[r] * 1000), 1),
                                                     trial(r + 1, "i386", 1.0, int(b[r] * 1000), 1))]
        run, _ = ptrtree_run(counters=False)
        rss = next(r for r in trial_ratios(run, trials, "ptrtree", "i386") if r.name == "max_rss")
        assert rss.low is not None and rss.high is not None
        covered += rss.low <= 0.6 <= rss.high
    assert covered / runs >= 0.95


def test_energy_per_trial_compares_like_any_counter_and_says_its_source() -> None:
    run, trials = ptrtree_run(joules=True)
    run.facts.machine["energy"] = {"source": "rapl", "label": "RAPL package-0 (powercap)"}
    found = {r.name: r for r in trial_ratios(run, trials, "ptrtree", "i386")}
    assert found["energy"].ratio == pytest.approx(0.72, abs=0.02) and found["energy"].high < 1
    analysis = analyze(run, trials)
    lines = why_lines(analysis)
    assert "energy per trial: RAPL package-0 (powercap)" in lines
    per_watt = next(line for line in lines if "performance per watt" in line)
    assert per_watt.startswith("ptrtree, i386: work per joule 1.39\u00d7 [")
    joules = {a.config: a for a in analysis.amounts if a.name == "energy.joules"}  # per side, with an interval
    assert joules["amd64"].interval.median == pytest.approx(5.0, rel=0.03) and joules["i386"].unit == "J"


def test_every_renderer_shows_the_why_line_and_json_carries_every_counter() -> None:
    run, trials = ptrtree_run()
    run.facts.machine["energy"] = {"none": "energy: this machine reports none; --meter CMD reads an external meter"}
    analysis = analyze(run, trials)
    lines = why_lines(analysis)
    assert lines[0].startswith("ptrtree, i386 ") and "faster" in lines[0] and ": RSS 0.55\u00d7" in lines[0]
    assert any("cachegrind's pi4 cache model (D1 32 KiB 2-way, LL 1 MiB 16-way)" in line for line in lines)
    assert "passes not at the run's size: ptrtree at lookups 50,000 of 500,000" in lines
    assert lines[-1].startswith("energy: this machine reports none")
    out = io.StringIO()
    show(analysis, Console(file=out, width=80))
    printed = out.getvalue()
    assert "Why: the counters" in printed and "RSS 0.55\u00d7" in printed
    assert all(len(line) <= 80 for line in printed.splitlines())
    assert "D1 misses 0.62\u00d7" in render_markdown(analysis, {"(why)": "why.png"})
    html = render_html(analysis)
    assert 'id="why"' in html and 'id="chart-why"' in html
    row = next(r for r in show_rows(analysis) if r["workload"] == "ptrtree" and r["headline"])
    counters = {c["name"]: c for c in row["counters"]}
    assert counters["max_rss"]["shown"] and counters["max_rss"]["ci_low"] < counters["max_rss"]["ratio"]
    assert counters["instructions"]["source"] == "cachegrind pi4 model" and not counters["instructions"]["shown"]
    json.dumps(row)  # serializable


def test_no_counters_no_section_and_no_chart() -> None:
    run, trials = ptrtree_run(counters=False)
    trials = [dataclasses.replace(t, max_rss_kb=1000, observed={}) for t in trials]
    analysis = analyze(run, trials)
    assert why_lines(analysis) == []
    assert 'id="why"' not in render_html(analysis)
    assert why_chart(analysis) is not None  # the ratios of 1 are still drawn (RSS, switches)


@pytest.mark.parametrize(("elf", "said"), [
    ({"machine": "x86", "elf_class": 32}, "i686: x87 floating point (SSE2 not assumed), 8 general registers"),
    ({"machine": "x86-64", "elf_class": 64}, "x86-64: SSE2, 16 general registers"),
    # a Raspbian binary's attributes, as elf.arm_build reads them (the real binaries: test_elf_baseline.py)
    ({"machine": "arm", "elf_class": 32, "arm": {"float_abi": "hard", "cpu_arch": "v6", "fp_arch": "VFPv2",
                                                  "thumb": "Thumb-1"}},
     "ARMv6, VFPv2, hard float, Thumb-1, NEON not assumed"),
    ({"machine": "arm", "elf_class": 32, "arm": {"float_abi": "soft", "cpu_arch": "v5TE", "thumb": "Thumb-1"}},
     "ARMv5TE, soft float (no FP unit assumed), Thumb-1, NEON not assumed"),
    # a run recorded before the attributes were read, or a binary without a section table
    ({"machine": "arm", "elf_class": 32}, "32-bit ARM (its architecture not recorded in the binary)"),
    ({"machine": "arm", "elf_class": 32, "arm": {"float_abi": "hard"}},
     "32-bit ARM (its architecture not recorded in the binary), hard float"),
    ({}, None)])
def test_the_baseline_a_side_was_built_for_is_said_from_its_binary(elf: dict, said: str | None) -> None:
    assert baseline(elf) == said


def test_the_why_section_says_what_each_side_was_built_for_and_the_paths_its_openssl_chose() -> None:
    run, trials = ptrtree_run()
    for config, machine, bits, paths in (("amd64", "x86-64", 64, ["sse2", "aes-ni", "sha-ni", "vaes"]),
                                         ("i386", "x86", 32, ["sse2", "aes-ni", "sha-ni"])):
        side = run.facts.side_for(config)
        side["target"] = {"dpkg_arch": config}
        side["workloads"] = {"ptrtree": {"elf": {"native kernel": {"machine": machine, "elf_class": bits}}}}
        side["code_paths"] = {"openssl": paths}
    lines = why_lines(analyze(run, trials))
    assert ("built for: amd64 x86-64: SSE2, 16 general registers; i386 i686: x87 floating point (SSE2 not "
            "assumed), 8 general registers") in lines
    assert "OpenSSL's code paths: every side sse2, aes-ni, sha-ni; amd64 also vaes" in lines


def with_pmu(trials: list[Trial], scope: dict[str, str], ratio: float = 1.3) -> list[Trial]:
    """The PMU's counts on every trial: the i386 side runs `ratio` times the instructions."""
    out = []
    for t in trials:
        n = 1e9 * (ratio if t.spec.config == "i386" else 1.0) * (1 + 0.001 * t.spec.round)
        counts = {"instructions": int(n), "cycles": int(t.wall_s * 2e9), "scope": scope[t.spec.config]}
        out.append(dataclasses.replace(t, observed={**t.observed, "pmu": counts}))
    return out


def test_each_trials_pmu_counts_stand_for_the_pass_ones_and_are_never_a_headline() -> None:
    run, trials = ptrtree_run()
    counted = with_pmu(trials, {"amd64": "all", "i386": "all"})
    found = {r.name: r for r in why(run, counted, "ptrtree", "i386").ratios}
    instructions = found["instructions"]
    assert instructions.ratio == pytest.approx(1.3, rel=0.01) and instructions.source == ""  # the trials', not the pass's
    assert instructions.low is not None and instructions.low > 1.2
    assert found["cycles"].ratio == pytest.approx(0.8, rel=0.05)
    plain, with_counts = analyze(run, trials), analyze(run, counted)
    assert plain.comparisons == with_counts.comparisons and plain.summaries == with_counts.summaries
    note = [n for n in with_counts.notes if n.startswith("instructions and cycles")]
    assert len(note) == 1 and "never one" in note[0] and not any(n.startswith("instructions") for n in plain.notes)


def test_pmu_counts_of_different_scopes_are_not_compared() -> None:
    run, trials = ptrtree_run()
    mixed = with_pmu(trials, {"amd64": "all", "i386": "user"})
    found = {r.name for r in trial_ratios(run, mixed, "ptrtree", "i386")}
    assert not found & {"instructions", "cycles", "user_instructions", "user_cycles"}
    user = {r.name for r in trial_ratios(run, with_pmu(trials, {"amd64": "user", "i386": "user"}), "ptrtree", "i386")}
    assert {"user_instructions", "user_cycles"} <= user and "instructions" not in user
    note = next(n for n in analyze(run, mixed).notes if n.startswith("instructions and cycles"))
    assert "user space alone" in note
