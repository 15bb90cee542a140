"""Compare configurations across stored runs (another machine, another day, another kernel).

A member of the comparison is one configuration measured in one or more runs:
- `shootout compare 3 7`: each (run, configuration) on its own, named "run3:host";
- `shootout compare 3 5 vs 7 9`: each side's configurations, pooled by name over its runs;
- `shootout compare 3 5 7 9 --by-label`: (run, configuration) pairs grouped by their label.

How two members are compared depends on what was measured:
- both in the one same run: paired by round, exactly as `shootout show` does;
- both in the same two or more runs: the per-run paired means, t-interval across runs;
- two or more runs on either side: per-run means, Welch (stats.runs), so the interval
  includes how much runs of one configuration differ from each other;
- one run each: the two runs' values as independent samples. That interval knows nothing of
  run-to-run drift, and says so ("within-run only") wherever it is shown.

Workloads are matched by name and parameters; whatever does not match is listed in the
notes, never dropped silently.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from shootout.base.errors import UsageError
from shootout.base.model import Config, Run, Trial, WorkloadSpec
from shootout.base.runfacts import RunFacts
from shootout.base.units import unit
from shootout.judge.analysis import (
    WITHIN_RUN,
    Analysis,
    Comparison,
    Summary,
    confounders,
    judged,
    log_perf,
    metric_log_ratios,
    metric_values,
    run_design,
    settle,
    summarize,
)
from shootout.judge.machines import machines_note
from shootout.stats import (
    Design,
    Estimate,
    Verdict,
    across_runs,
    between_runs,
    unpaired_estimate,
    unpaired_geomean,
)
from shootout.workloads import cpuclock

UNPAIRED_NOTE = "unpaired comparison across runs: the differences include any drift between the runs"
ACROSS_BOOTS_NOTE = ("across boots: each run is one boot of a run across boots (shootout run --across-boots), "
                     "blocks in an A B B A order; the differences include the kernels and any drift between boots")
ACROSS_RUNS_RULE = (
    "Across runs: with two or more runs on a side, every run contributes its mean (log performance, or paired "
    "log-ratio for configurations measured in the same runs) and the interval is Welch's t on those means, so it "
    "includes how much runs of one configuration differ; with one run per side the two runs' values are compared "
    "as independent samples (Hodges\u2013Lehmann shift, Mann\u2013Whitney interval), " + WITHIN_RUN + ".")


@dataclass(frozen=True)
class Part:
    run: Run
    trials: Sequence[Trial]
    config: str  # the configuration's name inside this run


@dataclass(frozen=True)
class Member:
    config: Config  # renamed for the comparison
    parts: tuple[Part, ...]

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(p.run.id for p in self.parts)


def _runs_label(runs: Sequence[Run]) -> str:
    ids = [str(r.id) for r in runs]
    return f"run {ids[0]}" if len(ids) == 1 else "runs " + "+".join(ids)


def members_by_run(runs: Sequence[Run], trials: Sequence[Sequence[Trial]]) -> list[Member]:
    return [Member(dataclasses.replace(c, name=f"run{r.id}:{c.name}", label=f"{c.display} (run {r.id})"),
                   (Part(r, t, c.name),)) for r, t in zip(runs, trials) for c in r.configs]


def members_by_side(sides: Sequence[Sequence[tuple[Run, Sequence[Trial]]]]) -> list[Member]:
    """Each side's configurations, by name, pooled over the side's runs."""
    out = []
    for side in sides:
        label = _runs_label([r for r, _ in side])
        names = list(dict.fromkeys(c.name for r, _ in side for c in r.configs))
        for name in names:
            parts = tuple(Part(r, t, name) for r, t in side if any(c.name == name for c in r.configs))
            first = next(c for c in parts[0].run.configs if c.name == name)
            out.append(Member(dataclasses.replace(first, name=f"{label.replace(' ', '')}:{name}",
                                                  label=f"{first.display} ({label})"), parts))
    return out


def members_by_label(runs: Sequence[Run], trials: Sequence[Sequence[Trial]]) -> list[Member]:
    """(run, configuration) pairs grouped by the configuration's label."""
    groups: dict[str, list[tuple[Config, Part]]] = {}
    for run, run_trials in zip(runs, trials):
        for config in run.configs:
            groups.setdefault(config.display, []).append((config, Part(run, run_trials, config.name)))
    out = []
    for label, items in groups.items():
        parts = tuple(p for _, p in items)
        runs_text = _runs_label([p.run for p in parts])
        out.append(Member(dataclasses.replace(items[0][0], name=label, label=f"{label} ({runs_text})"), parts))
    return out


def _estimate(base: Member, other: Member, spec: WorkloadSpec, metric: str, symbol: str, design: Design,
              headline: bool) -> tuple[Estimate | None, dict[int, float], tuple[str, ...]]:
    """(interval, paired log-ratios if any, flags) of `other` against `base` for one metric."""
    shared = [(b, o) for b in base.parts for o in other.parts
              if b.run.id == o.run.id and b.run.settings.interleaved]
    if len(shared) == len(base.parts) == len(other.parts):  # measured side by side in every run
        if len(shared) == 1:
            (b, o), = shared
            ratios = metric_log_ratios(b.trials, spec, metric, b.config, o.config)
            return run_design(b.run, headline, spec.name).estimate(list(ratios.values())), ratios, ()
        effects = [statistics.fmean(r.values()) for b, o in shared
                   if (r := metric_log_ratios(b.trials, spec, metric, b.config, o.config))]
        return design.adopt(across_runs(effects, design.per_look())), {}, ()
    means = [[statistics.fmean(log_perf(v, symbol)) for p in m.parts
              if (v := metric_values(p.trials, spec.name, metric, p.config))] for m in (base, other)]
    if max(len(m) for m in means) >= 2:
        return design.adopt(between_runs(means[0], means[1], design.per_look())), {}, ()
    a, b = (log_perf(metric_values(m.parts[0].trials, spec.name, metric, m.parts[0].config), symbol)
            for m in (base, other))
    return design.adopt(unpaired_estimate(a, b, design.per_look())), {}, (WITHIN_RUN,)


def _matched(base: Member, other: Member, notes: list[str]) -> list[WorkloadSpec]:
    """Workloads both members ran with the same parameters in all their runs."""
    ref = base.parts[0].run
    specs = {w.name: w for w in ref.workloads}
    out = []
    for name, spec in specs.items():
        missing = [p.run.id for p in (*base.parts, *other.parts) if name not in {w.name for w in p.run.workloads}]
        if missing:
            notes.append(f"{name}: not in run {', '.join(map(str, sorted(set(missing))))}, not compared")
        elif any(p.run.params.get(name) != ref.params.get(name) for p in (*base.parts, *other.parts)):
            notes.append(f"{name}: parameters differ between the runs, not compared")
        else:
            out.append(spec)
    return out


def _judged_metric(base: Member, other: Member, spec: WorkloadSpec, notes: list[str]) -> str | None:
    """The metric that carries the verdict: the headline every run judged (its workload's own,
    or the CPU time a run chose: cpuclock). Runs that judged different ones are never set side
    by side on either silently: the base run's headline is used where every run recorded it,
    and a note says so; where some run lacks it, the workload is not compared."""
    parts = [p for m in (base, other) for p in m.parts]
    judged = {p.run.id: cpuclock.headline(p.run, _own_spec(p.run, spec)) for p in parts}
    if len(set(judged.values())) == 1:
        return next(iter(judged.values()))
    said = "; ".join(f"{metric} in run {', '.join(str(r) for r, m in judged.items() if m == metric)}"
                     for metric in dict.fromkeys(judged.values()))
    lacking = sorted({p.run.id for p in parts if not metric_values(p.trials, spec.name, spec.headline, p.config)})
    if lacking:
        notes.append(f"{spec.name}: the runs judged different headlines ({said}); run "
                     f"{', '.join(map(str, lacking))} has no {spec.headline}: not compared")
        return None
    notes.append(f"{spec.name}: the runs judged different headlines ({said}): compared on {spec.headline}, "
                 "which every run recorded")
    return spec.headline


def _own_spec(run: Run, spec: WorkloadSpec) -> WorkloadSpec:
    """The workload as this run defined it (its headline may differ from another run's)."""
    return next((w for w in run.workloads if w.name == spec.name), spec)


def compare_members(members: Sequence[Member]) -> Analysis:
    if len(members) < 2:
        raise UsageError("nothing to compare: the runs hold one configuration between them",
                         "give runs of two configurations, e.g. shootout compare 3 5 vs 7 9")
    base, others = members[0], members[1:]
    settings = base.parts[0].run.settings
    names = {w.name for w in base.parts[0].run.workloads}
    strangers = sorted({p.run.id for m in others for p in m.parts if not names & {w.name for w in p.run.workloads}})
    if strangers:
        raise UsageError(f"run {', '.join(map(str, strangers))} and run {base.parts[0].run.id} share no workload",
                         "compare runs of the same workloads: shootout runs lists what each run measured")
    notes: list[str] = []
    per_member = {o.config.name: _matched(base, o, notes) for o in others}
    if not any(per_member.values()):
        raise UsageError("these runs share no workload run with the same parameters",
                         "compare runs of the same workloads with the same parameters")
    family = sum(len(specs) for specs in per_member.values())
    designs = {True: Design(settings.confidence, family), False: Design(settings.confidence)}
    comparisons: list[Comparison] = []
    values: dict[tuple[str, str, str], list[float]] = {}
    for other in others:
        for spec in per_member[other.config.name]:
            judged_metric = _judged_metric(base, other, spec, notes)
            if judged_metric is None:
                continue
            for metric in spec.metrics:
                for m in (base, other):
                    values[(spec.name, metric.name, m.config.name)] = [
                        v for p in m.parts for v in metric_values(p.trials, spec.name, metric.name, p.config)]
                a, b = values[(spec.name, metric.name, base.config.name)], values[(spec.name, metric.name,
                                                                                     other.config.name)]
                if not a and not b:
                    continue
                headline = metric.name == judged_metric
                est, ratios, flags = _estimate(base, other, spec, metric.name, metric.unit, designs[headline],
                                               headline)
                comparisons.append(settle(Comparison(
                    workload=spec.name, category=spec.category, metric=metric.name, unit=metric.unit,
                    direction=str(unit(metric.unit).direction), headline=headline,
                    baseline=base.config.name, config=other.config.name,
                    medians={k: statistics.median(v) for k, v in ((base.config.name, a), (other.config.name, b)) if v},
                    log_ratios=ratios, estimate=est, verdict=judged(est, headline, settings.threshold),
                    paired=bool(ratios), flags=flags,
                    confounders=tuple(confounders(base.parts[0].run.facts.side(base.parts[0].config),
                                                  other.parts[0].run.facts.side(other.parts[0].config),
                                                  spec.name, metric.name)),
                ), settings.threshold, None))
    summaries = tuple(_summary(base, o, comparisons, values, designs[True], settings.threshold) for o in others)
    runs = tuple({p.run.id: p.run for m in members for p in m.parts}.values())
    return Analysis(
        runs=runs, configs=tuple(m.config for m in members),
        workloads=tuple({w.name: w for specs in per_member.values() for w in specs}.values()),
        comparisons=tuple(comparisons), summaries=summaries, values=values, threshold=settings.threshold,
        notes=tuple(dict.fromkeys([*_leading_notes(members, runs, comparisons), *notes])),
        facts=_member_facts(members), lost=dict(members[0].parts[0].run.lost), rules=_rules(designs[True]),
    )


def _leading_notes(members: Sequence[Member], runs: Sequence[Run], comparisons: Sequence[Comparison]) -> list[str]:
    """The notes a cross-run comparison opens with: the machines, one campaign, what the intervals include."""
    out = []
    if machines := machines_note((m.config.display, p.run.facts.side(p.config), p.run.facts.machine)
                                 for m in members for p in m.parts):
        out.append(machines)
    if _one_campaign(runs):
        out.append(ACROSS_BOOTS_NOTE)
    if any(WITHIN_RUN in c.flags for c in comparisons):
        out.append(f"{WITHIN_RUN}: with one run per side an interval shows only the spread inside each run; "
                   "compare two or more runs per side (shootout compare 3 5 vs 7 9) to include it")
    else:
        out.append(UNPAIRED_NOTE)
    return out


def _member_facts(members: Sequence[Member]) -> RunFacts:
    """The machine of the baseline's first run, and each side's configuration facts with its machine."""
    facts = RunFacts(machine=members[0].parts[0].run.facts.machine)
    for m in members:
        p = m.parts[0]
        facts.sides[m.config.name] = {**p.run.facts.side(p.config), "machine": p.run.facts.machine}
    return facts


def _one_campaign(runs: Sequence[Run]) -> bool:
    """Whether every run is a block of the same run across boots (measure/bootcampaign.py marks them)."""
    ids = {(r.across_boots or {}).get("campaign") for r in runs}
    return len(ids) == 1 and None not in ids


def _summary(base: Member, other: Member, comparisons: Sequence[Comparison],
             values: dict[tuple[str, str, str], list[float]], design: Design, threshold: float) -> Summary:
    """The suite of `other` against `base`, its interval under the headline rows' rule."""
    heads = [c for c in comparisons if c.config == other.config.name and c.headline]
    if all(c.log_ratios for c in heads):  # one shared run: the paired summary
        return summarize(heads, [base.config, other.config], design, threshold=threshold)[0]
    counts = {v: sum(1 for c in heads if c.verdict == v) for v in Verdict}
    note = WITHIN_RUN if len(base.parts) == 1 and len(other.parts) == 1 else ""
    if len(heads) == 1:  # the geomean of one workload is that workload
        est = heads[0].estimate
    elif note:
        samples = {c.workload: (log_perf(values[(c.workload, c.metric, c.baseline)], c.unit),
                                log_perf(values[(c.workload, c.metric, c.config)], c.unit)) for c in heads}
        est = design.adopt(unpaired_geomean(samples, design.per_look()))
    else:
        est = design.adopt(_runs_geomean(base, other, heads, design.per_look()))
    return Summary(other.config.name, est, {}, counts[Verdict.FASTER], counts[Verdict.SLOWER],
                   counts[Verdict.SAME], counts[Verdict.INCONCLUSIVE], note=note, threshold=threshold)


def _runs_geomean(base: Member, other: Member, heads: Sequence[Comparison], confidence: float) -> Estimate | None:
    """Geomean with runs as the units: each run's mean over workloads of its mean log performance
    (or, for runs holding both configurations, of its mean paired log-ratio)."""
    def suite_mean(part: Part, against: Part | None) -> float | None:
        per_workload = []
        for c in heads:
            spec = next(w for w in part.run.workloads if w.name == c.workload)
            if against is None:
                vals = log_perf(metric_values(part.trials, c.workload, c.metric, part.config), c.unit)
            else:
                vals = list(metric_log_ratios(part.trials, spec, c.metric, against.config, part.config).values())
            if not vals:
                return None
            per_workload.append(statistics.fmean(vals))
        return statistics.fmean(per_workload) if per_workload else None

    if {p.run.id for p in base.parts} == {p.run.id for p in other.parts}:
        pairs = {p.run.id: p for p in base.parts}
        effects = [e for o in other.parts if (e := suite_mean(o, pairs[o.run.id])) is not None]
        return across_runs(effects, confidence)
    a = [x for p in base.parts if (x := suite_mean(p, None)) is not None]
    b = [x for p in other.parts if (x := suite_mean(p, None)) is not None]
    return between_runs(a, b, confidence)


def _rules(headline: Design) -> tuple[str, ...]:
    out = [ACROSS_RUNS_RULE]
    if headline.family > 1:
        out.append(f"Many verdicts: the {headline.confidence:.0%} covers all {headline.family} headline comparisons "
                   "together (Bonferroni); sub-metrics are estimates with intervals and get no verdict.")
    return tuple(out)

