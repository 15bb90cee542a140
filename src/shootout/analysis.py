"""From raw trials to comparisons: per metric, each configuration against the baseline.

Everything here is recomputed on read from the stored trials (DESIGN §5).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shootout.conditions.runflags import RunConditions
from shootout.model import Config, Run, Trial, WorkloadSpec
from shootout.stats import Estimate, Verdict, geomean, geomean_by_category, paired_estimate, trial_flags, verdict
from shootout.units import performance, unit


@dataclass(frozen=True)
class Comparison:
    """One metric of one workload: `config` against the baseline configuration."""

    workload: str
    category: str
    metric: str
    unit: str
    direction: str  # "higher" | "lower"
    headline: bool  # the workload's headline metric (the one counted in the geomean)
    baseline: str
    config: str
    medians: dict[str, float]  # config name -> median value over rounds (baseline and config)
    log_ratios: dict[int, float]  # round -> ln(perf_config / perf_baseline)
    estimate: Estimate | None  # speed-up of config over baseline (>1: config faster)
    verdict: Verdict
    paired: bool = True  # False for cross-run (unpaired) comparisons
    flags: tuple[str, ...] = ()
    confounders: tuple[str, ...] = ()  # facts that differ between the two configurations


@dataclass(frozen=True)
class Summary:
    config: str
    geomean: Estimate | None  # over one headline metric per workload
    by_category: dict[str, Estimate | None]
    faster: int
    slower: int
    same: int
    inconclusive: int


@dataclass(frozen=True)
class Analysis:
    runs: tuple[Run, ...]
    configs: tuple[Config, ...]  # baseline first
    workloads: tuple[WorkloadSpec, ...]
    comparisons: tuple[Comparison, ...]
    summaries: tuple[Summary, ...]  # one per non-baseline configuration
    values: dict[tuple[str, str, str], list[float]]  # (workload, metric, config) -> values over rounds
    threshold: float
    noise_floor: float | None = None  # relative half-width seen in A/A runs on this machine
    notes: tuple[str, ...] = ()  # e.g. "unpaired: includes drift between the runs"
    conditions: tuple[str, ...] = ()  # machine-wide conditions during the run, said once
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)  # "machine" and config -> facts


def _perf_by_round(trials: Iterable[Trial], spec: WorkloadSpec, metric: str, config: str) -> dict[int, float]:
    symbol = spec.metric(metric).unit
    return {
        t.spec.round: performance(t.values[metric], symbol)
        for t in trials
        if t.spec.round > 0 and t.ok and t.spec.workload == spec.name and t.spec.config == config and metric in t.values
    }


def metric_values(trials: Iterable[Trial], workload: str, metric: str, config: str) -> list[float]:
    """The measured values of one metric under one configuration (warm-up and failures left out)."""
    return [t.values[metric] for t in trials
            if t.spec.round > 0 and t.ok and t.spec.workload == workload and t.spec.config == config
            and metric in t.values]


def metric_log_ratios(trials: Sequence[Trial], spec: WorkloadSpec, metric: str, baseline: str, config: str) -> dict[int, float]:
    """Per round: d_r = ln(perf_config / perf_baseline), over rounds where both trials succeeded."""
    base = _perf_by_round(trials, spec, metric, baseline)
    other = _perf_by_round(trials, spec, metric, config)
    return {r: math.log(other[r] / base[r]) for r in sorted(base.keys() & other.keys())}


def _flatten(facts: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(facts, dict):
        return {prefix: facts}
    flat: dict[str, Any] = {}
    for key, value in facts.items():
        flat.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


# Facts that are confounders when they differ: versions of what ran, the compiler, the
# libc, the input, hardware code paths. The ABI itself (ELF class, machine) is the point of
# a 32/64-bit comparison, so it is not one of them.
_CONFOUNDER_FACTS = {"compiler", "cc", "libc", "openssl", "hw_paths", "input_sha256", "code_path"}


def _is_confounder(key: str) -> bool:
    last = key.rsplit(".", 1)[-1]
    return last in _CONFOUNDER_FACTS or "version" in last or key.startswith("target.packages.")


def confounders(facts_a: dict[str, Any], facts_b: dict[str, Any], workload: str,
                metric: str | None = None) -> list[str]:
    """Facts of the two configurations that differ and could explain a difference.

    A workload's `code_paths` ({metric: path}) concern one metric each: only that metric's
    path is compared.
    """

    def relevant(facts: dict[str, Any]) -> dict[str, Any]:
        mine = dict(facts.get("workloads", {}).get(workload, {}))
        paths = mine.pop("code_paths", None) or {}
        if metric in paths:
            mine["code_path"] = paths[metric]
        scoped = {"target": facts.get("target", {}), "workload": mine}
        return {k: v for k, v in _flatten(scoped).items() if _is_confounder(k)}

    a, b = relevant(facts_a), relevant(facts_b)
    return [f"{key.split('.', 1)[1]}: {a.get(key)} vs {b.get(key)}"
            for key in sorted(a.keys() | b.keys()) if a.get(key) != b.get(key) and key in a and key in b]


def is_emulated(facts: dict[str, Any]) -> bool:
    return bool(facts.get("target", {}).get("emulated"))


def analyze(run: Run, trials: Sequence[Trial], noise_floor: float | None = None) -> Analysis:
    """Compare every configuration of one run with its baseline (paired by round)."""
    s = run.settings
    base = run.configs[0].name
    measured = [t for t in trials if t.spec.round > 0]
    conditions = RunConditions(measured, run.facts.get("machine", {}))
    comparisons: list[Comparison] = []
    values: dict[tuple[str, str, str], list[float]] = {}
    for spec in run.workloads:
        for metric in spec.metrics:
            for config in run.configs:
                values[(spec.name, metric.name, config.name)] = metric_values(measured, spec.name, metric.name,
                                                                              config.name)
            if not any(values[(spec.name, metric.name, c.name)] for c in run.configs) and not any(
                    t.spec.workload == spec.name and not t.ok for t in trials):
                continue  # a metric this run's parameters do not produce
            for config in run.configs[1:]:
                ratios = metric_log_ratios(measured, spec, metric.name, base, config.name)
                est = paired_estimate(list(ratios.values()), s.confidence)
                cfg_facts, base_facts = run.facts.get(config.name, {}), run.facts.get(base, {})
                flags = trial_flags(
                    values[(spec.name, metric.name, config.name)],
                    list(ratios.keys()), list(ratios.values()),
                    # imported results may not know the wall time (0): unknown, not short
                    [t.wall_s for t in measured
                     if t.spec.workload == spec.name and t.spec.config == config.name and t.wall_s > 0],
                )
                flags += conditions.flags(t for t in measured if t.spec.workload == spec.name
                                          and t.spec.config in (base, config.name))
                emulated = is_emulated(cfg_facts) or is_emulated(base_facts)
                if emulated:
                    flags.append("emulated")
                failed = [t for t in trials if t.spec.workload == spec.name and not t.ok
                          and t.spec.config in (base, config.name)]
                if failed:
                    flags.append("failed: " + (failed[0].error or "error"))
                comparisons.append(Comparison(
                    workload=spec.name, category=spec.category, metric=metric.name, unit=metric.unit,
                    direction=str(unit(metric.unit).direction), headline=metric.name == spec.headline,
                    baseline=base, config=config.name,
                    medians={c: statistics.median(values[(spec.name, metric.name, c)])
                             for c in (base, config.name) if values[(spec.name, metric.name, c)]},
                    log_ratios=ratios, estimate=est,
                    verdict=Verdict.INCONCLUSIVE if emulated else verdict(est, s.threshold),
                    flags=tuple(flags),
                    confounders=tuple(confounders(base_facts, cfg_facts, spec.name, metric.name)),
                ))
    return Analysis(
        runs=(run,), configs=tuple(run.configs), workloads=tuple(run.workloads),
        comparisons=tuple(comparisons), summaries=summarize(comparisons, run.configs, s.confidence, s.seed),
        values=values, threshold=s.threshold, noise_floor=noise_floor, conditions=tuple(conditions.lines),
        facts={"machine": run.facts.get("machine", {}), **{c.name: run.facts.get(c.name, {}) for c in run.configs}},
    )


def summarize(comparisons: Sequence[Comparison], configs: Sequence[Config], confidence: float, seed: int) -> tuple[Summary, ...]:
    """Geomean over one headline metric per workload, per non-baseline configuration."""
    out = []
    for config in configs[1:]:
        heads = [c for c in comparisons if c.config == config.name and c.headline and c.log_ratios]
        # No workload has an interval yet (too few rounds): a suite verdict would claim what none can.
        ratios = {c.workload: c.log_ratios for c in heads} if any(c.estimate for c in heads) else {}
        categories = {c.workload: c.category for c in heads}
        counts = {v: sum(1 for c in heads if c.verdict == v) for v in Verdict}
        out.append(Summary(
            config=config.name,
            geomean=geomean(ratios, confidence=confidence, seed=seed),
            by_category=geomean_by_category(ratios, categories, confidence=confidence, seed=seed) if ratios else {},
            faster=counts[Verdict.FASTER], slower=counts[Verdict.SLOWER],
            same=counts[Verdict.SAME], inconclusive=counts[Verdict.INCONCLUSIVE],
        ))
    return tuple(out)
