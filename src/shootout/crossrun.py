"""Compare configurations across stored runs (another machine, another day): unpaired.

Each run's configurations become configurations of one comparison, named
"run<id>:<config>". Workloads are matched by name, parameters and tool versions;
whatever does not match is listed in the notes, never dropped silently.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence

from shootout.analysis import Analysis, Comparison, Summary, confounders, metric_values
from shootout.model import Config, Run, Trial, WorkloadSpec
from shootout.stats import Verdict, unpaired_estimate, unpaired_geomean, verdict
from shootout.units import performance, unit

UNPAIRED_NOTE = "unpaired comparison across runs: the differences include any drift between the runs"


def compare_runs(runs: Sequence[Run], trials: Sequence[Sequence[Trial]]) -> Analysis:
    members: list[tuple[Config, Run, Sequence[Trial], str]] = []
    for run, run_trials in zip(runs, trials):
        for config in run.configs:
            renamed = dataclasses.replace(config, name=f"run{run.id}:{config.name}",
                                          label=f"{config.display} (run {run.id})")
            members.append((renamed, run, run_trials, config.name))
    base_cfg, base_run, base_trials, base_orig = members[0]
    notes = [UNPAIRED_NOTE]
    specs: dict[str, WorkloadSpec] = {w.name: w for w in base_run.workloads}
    comparisons: list[Comparison] = []
    values: dict[tuple[str, str, str], list[float]] = {}
    threshold = base_run.settings.threshold
    for cfg, run, run_trials, orig in members[1:]:
        other = {w.name: w for w in run.workloads}
        for name in sorted(specs.keys() ^ other.keys()):
            notes.append(f"{name}: only in {'run ' + str(base_run.id) if name in specs else 'run ' + str(run.id)}, not compared")
        for name, spec in specs.items():
            if name not in other:
                continue
            if base_run.params.get(name) != run.params.get(name):
                notes.append(f"{name}: parameters differ between run {base_run.id} and run {run.id}, not compared")
                continue
            facts_a = base_run.facts.get(base_orig, {})
            facts_b = run.facts.get(orig, {})
            for metric in spec.metrics:
                a = metric_values(base_trials, name, metric.name, base_orig)
                b = metric_values(run_trials, name, metric.name, orig)
                values[(name, metric.name, base_cfg.name)] = a
                values[(name, metric.name, cfg.name)] = b
                est = unpaired_estimate([math.log(performance(v, metric.unit)) for v in a],
                                        [math.log(performance(v, metric.unit)) for v in b], base_run.settings.confidence)
                comparisons.append(Comparison(
                    workload=name, category=spec.category, metric=metric.name, unit=metric.unit,
                    direction=str(unit(metric.unit).direction), headline=metric.name == spec.headline,
                    baseline=base_cfg.name, config=cfg.name,
                    medians={k: statistics.median(v) for k, v in ((base_cfg.name, a), (cfg.name, b)) if v},
                    log_ratios={}, estimate=est, verdict=verdict(est, threshold), paired=False,
                    confounders=tuple(confounders(facts_a, facts_b, name, metric.name)),
                ))
    summaries = []
    for cfg, *_ in members[1:]:
        heads = [c for c in comparisons if c.config == cfg.name and c.headline]
        samples = {c.workload: ([math.log(performance(v, c.unit)) for v in values[(c.workload, c.metric, c.baseline)]],
                                [math.log(performance(v, c.unit)) for v in values[(c.workload, c.metric, c.config)]])
                   for c in heads}
        counts = {v: sum(1 for c in heads if c.verdict == v) for v in Verdict}
        summaries.append(Summary(cfg.name, unpaired_geomean(samples, seed=base_run.settings.seed), {},
                                 counts[Verdict.FASTER], counts[Verdict.SLOWER], counts[Verdict.SAME],
                                 counts[Verdict.INCONCLUSIVE]))
    facts = {"machine": base_run.facts.get("machine", {})}
    for cfg, run, _, orig in members:
        facts[cfg.name] = {**run.facts.get(orig, {}), "machine": run.facts.get("machine", {})}
    return Analysis(
        runs=tuple(runs), configs=tuple(m[0] for m in members), workloads=tuple(specs.values()),
        comparisons=tuple(comparisons), summaries=tuple(summaries), values=values, threshold=threshold,
        notes=tuple(notes), facts=facts,
    )
