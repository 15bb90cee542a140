"""`shootout show --json`: the rows of the terminal table as plain data for scripts."""

from __future__ import annotations

import dataclasses
from typing import Any

from shootout.base.model import WorkloadSpec
from shootout.base.units import unit
from shootout.judge.analysis import Analysis, Comparison
from shootout.report.text import (
    MetricRow,
    baseline,
    fmt_estimate,
    iter_summaries,
    metric_rows,
    one_side_rows,
    others,
    side_figures,
)
from shootout.stats import Estimate, Resolution, Verdict


def _interval(est: Estimate | None) -> dict[str, Any]:
    if est is None:
        return {"speedup": None, "ci_low": None, "ci_high": None, "speedup_text": None, "confidence": None,
                "method": None, "rule": None}
    return {
        "speedup": est.ratio,
        "ci_low": est.low,
        "ci_high": est.high,
        "speedup_text": fmt_estimate(est),  # as every other output says it
        "confidence": est.confidence,
        "method": est.method,
        "rule": est.rule or None,
    }


def _resolution(res: Resolution | None) -> dict[str, Any] | None:
    return None if res is None else dataclasses.asdict(res)


def _decided(comp: Comparison) -> dict[str, Any] | None:
    """What a guard counted when it decided the verdict (better/worse); the speed-up stays, not judged."""
    if comp.decided_by is None:
        return None
    lost = comp.decided_by.lost
    return {"amount": comp.decided_by.amount, "config": lost.lost, "baseline": lost.baseline, "rounds": lost.rounds}


def show_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """One dict per (workload, metric, configuration) against the baseline, then geomeans.

    speedup/ci_low/ci_high are ratios of performance (>1: `config` is faster than
    `baseline`) whatever the metric's direction; null when there were too few rounds.
    speedup_text says them as the table, the reports and the charts do ("28.0% slower [27.4\u201328.6%]").
    rule names how the interval keeps its confidence over the run's looks and headline
    comparisons; verdict is "estimate" for sub-metrics (no verdict), "not judged" where a headline
    or geomean gets none whatever its interval says (why: the reason), "better"/"worse" where a
    guard decided it (decided_by: what it counted on both sides; the speed-up is then not
    judged); resolution, for an
    inconclusive headline, what the run could resolve and what would settle it.
    Per configuration the suite geomean row has workload "geomean" (metric "headline");
    per-category geomeans follow with workload "geomean:<category>".
    A run refused for its budget measured nothing: one row per headline comparison it would have
    made, verdict "refused", its flags saying why and what budget would pay.
    A run of one configuration compares nothing: one row per metric with its figures (median,
    min, max over its rounds), no speed-up and no verdict.
    """
    if analysis.refused:
        return [_refused_row(analysis, spec, config.name) for spec in analysis.workloads for config in others(analysis)]
    if side := one_side_rows(analysis):
        return [_side_row(analysis, row) for row in side]
    rows = [_comparison_row(comp) | _counters(analysis, comp) for row in metric_rows(analysis) for comp in row.comparisons]
    return rows + _geomean_rows(analysis)


def _counters(analysis: Analysis, comp: Comparison) -> dict[str, Any]:
    """A headline's counters (judge/why.py), furthest from 1 first: ratio is the configuration's
    over the baseline's; ci_low/ci_high where the counter has a value per round; shown: on the
    "why" line. Recorded amounts, never part of the verdict."""
    found = next((w for w in analysis.whys if w.workload == comp.workload and w.config == comp.config), None)
    if not comp.headline or found is None:
        return {}
    shown = found.shown()
    return {"counters": [{"name": r.name, "label": r.label, "ratio": r.ratio, "ci_low": r.low, "ci_high": r.high,
                          "source": r.source or "trials", "shown": r in shown} for r in found.ratios]}


def _refused_row(analysis: Analysis, spec: WorkloadSpec, config: str) -> dict[str, Any]:
    """A headline comparison of a refused run: its names and units, no values."""
    metric = spec.metric(spec.headline)
    empty = Comparison(workload=spec.name, category=spec.category, metric=metric.name, unit=metric.unit,
                       direction=str(unit(metric.unit).direction), headline=True, baseline=baseline(analysis).name,
                       config=config, medians={}, log_ratios={}, estimate=None, verdict=Verdict.INCONCLUSIVE)
    return {**_comparison_row(empty), "verdict": "refused", "flags": [analysis.refused]}


def _side_row(analysis: Analysis, row: MetricRow) -> dict[str, Any]:
    return {
        "workload": row.workload,
        "category": row.spec.category if row.spec else None,
        "metric": row.metric,
        "headline": row.headline,
        "unit": row.unit,
        "direction": row.direction,
        "config": analysis.configs[0].name,
        **side_figures(analysis, row)._asdict(),
        "verdict": None,
    }


def _comparison_row(comp: Comparison) -> dict[str, Any]:
    return {
        "workload": comp.workload,
        "category": comp.category,
        "metric": comp.metric,
        "headline": comp.headline,
        "unit": comp.unit,
        "direction": comp.direction,
        "baseline": comp.baseline,
        "config": comp.config,
        "baseline_median": comp.medians.get(comp.baseline),
        "config_median": comp.medians.get(comp.config),
        **_interval(comp.estimate),
        "rounds": len(comp.log_ratios),
        "verdict": str(comp.verdict),
        "why": comp.why or None,
        "decided_by": _decided(comp),
        "flags": list(comp.flags),
        "confounders": list(comp.confounders),
        "paired": comp.paired,
        "resolution": _resolution(comp.resolution),
    }


def _geomean_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """Per configuration, the suite geomean, then one per category."""
    rows: list[dict[str, Any]] = []
    base = baseline(analysis).name
    for summary in iter_summaries(analysis):
        paired = all(c.paired for c in analysis.comparisons if c.config == summary.config)
        entries = [("geomean", None, summary.geomean, summary.verdict, summary.why)] + [
            (f"geomean:{cat}", cat, est, summary.category_verdicts[cat], summary.category_why.get(cat, ""))
            for cat, est in sorted(summary.by_category.items())
        ]
        for workload, category, est, judged, why in entries:
            rows.append(
                {
                    "workload": workload,
                    "category": category,
                    "metric": "headline",
                    "headline": True,
                    "unit": "x",
                    "direction": "higher",
                    "baseline": base,
                    "config": summary.config,
                    "baseline_median": None,
                    "config_median": None,
                    **_interval(est),
                    "rounds": est.n if est else 0,
                    "verdict": str(judged),
                    "why": why or None,
                    "decided_by": None,
                    "flags": [summary.note] if summary.note else [],
                    "confounders": [],
                    "paired": paired,
                    "resolution": None,
                }
            )
    return rows
