"""The "why" lines every renderer shows under the verdicts: for each workload whose sides
differ enough to matter, its speed-up and the counters furthest from 1 (judge/why.py), and the
work per joule where energy was read; then what the counters came from, what each side's
binaries were built for and the paths its OpenSSL chose, and where energy came from or why
there is none.
"""

from __future__ import annotations

from typing import Any

from shootout.base.runfacts import dig
from shootout.counters.baseline import baseline, side_binary
from shootout.judge.analysis import Analysis, Comparison
from shootout.judge.why import CounterRatio, Why, cut_apart
from shootout.report.text import display, fmt_comparison
from shootout.stats.verdict import Verdict

TITLE = "Why"
INTRO = ("the counters whose ratio (configuration / baseline) is furthest from 1: recorded beside the "
         "headline, never part of a verdict or the geomean")


def _headline(analysis: Analysis, why: Why) -> Comparison | None:
    return next((c for c in analysis.comparisons
                 if c.headline and c.workload == why.workload and c.config == why.config), None)


def why_line(analysis: Analysis, why: Why) -> str | None:
    """'ptrtree, i386: 25.0% faster [..]: RSS 0.55× [0.54–0.56], D1 misses 0.62× (cachegrind host
    model)', or None where no counter differs enough (or a verdict says the sides are the same)."""
    comp = _headline(analysis, why)
    if not why.shown() or (comp is not None and comp.verdict is Verdict.SAME):
        return None
    speed = f" {fmt_comparison(comp)}" if comp is not None else ""
    return f"{why.workload}, {display(analysis, why.config)}{speed}: {why.line()}"


def _source(record: dict[str, Any]) -> str:
    if record.get("source") == "cachegrind":
        caches = f" ({record['caches']})" if record.get("caches") else ""
        return f"cachegrind's {record.get('model', 'host')} cache model{caches}: a model, not this CPU's counters"
    return "the PMU's counters (perf stat)"


def _sizes(analysis: Analysis, workload: str, records: dict[str, dict[str, Any]], baseline: str) -> str:
    """'intmix at iterations 93,631 of 10,000,000, cut at its cap on i386' ('' at the run's size)."""
    said = [f"at {scaled}"] if (scaled := next((r["scaled"] for r in records.values() if r.get("scaled")), "")) else []
    cut = [name for name, r in records.items() if r.get("partial")]
    if cut:
        where = "" if len(cut) == len(records) else " on " + ", ".join(display(analysis, n) for n in cut)
        said.append(f"cut at its cap{where} (rates per instruction)")
    base = records.get(baseline)
    said += [f"{display(analysis, n)} not compared ({why})" for n, r in records.items()
             if base is not None and n != baseline and (why := cut_apart(base, r))]
    return f"{workload} {', '.join(said)}" if said else ""


def model_lines(analysis: Analysis) -> list[str]:
    """Where the once-per-side counters came from, and the passes not at the run's own size."""
    sources: dict[str, None] = {}
    sizes = []
    for run in analysis.runs:
        for workload, records in run.counters.items():
            sources.update({_source(r): None for r in records.values()})
            if said := _sizes(analysis, workload, records, run.baseline.name):
                sizes.append(said)
    out = [f"counters once per side, untimed: {source}" for source in sources]
    return out + ([f"passes not at the run's size: {'; '.join(sizes)}"] if sizes else [])


def energy_line(analysis: Analysis) -> str:
    found = analysis.facts.machine.get("energy") or {}
    if "label" in found:
        return f"energy per trial: {found['label']}"
    return found.get("none", "")


def per_joule_lines(analysis: Analysis) -> list[str]:
    """Performance per watt: the work each configuration does per joule against the baseline's
    (the inverse of the energy ratio of the same work, with its interval inverted)."""
    out = []
    base = analysis.configs[0].display
    for w in analysis.whys:
        energy = next((r for r in w.ratios if r.name == "energy"), None)
        if energy is None:
            continue
        per = CounterRatio("per_joule", "work per joule", 1 / energy.ratio,
                           1 / energy.high if energy.high else None, 1 / energy.low if energy.low else None)
        out.append(f"{w.workload}, {display(analysis, w.config)}: {per.text()} of {base}'s (performance per watt)")
    return out


def code_lines(analysis: Analysis) -> list[str]:
    """What each side's binaries may assume of the CPU (as the binary that ran says), and the
    paths its OpenSSL chose."""
    built, paths = {}, {}
    names = [spec.name for spec in analysis.workloads]
    for config in analysis.configs:
        if said := baseline(side_binary(analysis.facts, config.name, names)[1]):
            built[config.display] = said
        if chosen := dig(analysis.facts.side(config.name), "code_paths", "openssl"):
            paths[config.display] = list(chosen)
    out = [f"built for: {'; '.join(f'{name} {said}' for name, said in built.items())}"] if built else []
    return out + ([_paths_line(paths, len(analysis.configs))] if paths else [])


def _paths_line(paths: dict[str, list[str]], sides: int) -> str:
    """'OpenSSL's code paths: every side sse2, aes-ni, sha-ni; amd64 userspace also vaes'."""
    common = [p for p in next(iter(paths.values())) if all(p in chosen for chosen in paths.values())]
    said = [f"{'every side' if len(paths) == sides else ', '.join(paths)} {', '.join(common) or 'none'}"]
    said += [f"{name} also {', '.join(extra)}" for name, chosen in paths.items()
             if (extra := [p for p in chosen if p not in common])]
    return f"OpenSSL's code paths: {'; '.join(said)}"


def why_lines(analysis: Analysis) -> list[str]:
    """The section's lines (without its title): [] when no workload has one."""
    lines = [line for w in analysis.whys if (line := why_line(analysis, w)) is not None]
    lines += per_joule_lines(analysis)
    if not lines:
        return []
    return lines + model_lines(analysis) + code_lines(analysis) + ([e] if (e := energy_line(analysis)) else [])
