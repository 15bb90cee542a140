"""From raw trials to comparisons: per metric, each configuration against the baseline.

Everything here is recomputed on read from the stored trials (the store keeps raw trials, never statistics).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from shootout.base.model import Config, Metric, Run, Trial, WorkloadSpec
from shootout.base.runfacts import RunFacts
from shootout.base.units import performance, unit
from shootout.conditions.runflags import RunConditions
from shootout.counters.pertrial import pmu_note
from shootout.judge.amounts import Amount, Decided, amounts, guard
from shootout.judge.bound import generator_flags
from shootout.judge.ceiling import ceiling_flags
from shootout.judge.confounders import confounders, is_emulated
from shootout.judge.inforce import compared_notes
from shootout.judge.machines import machines_note
from shootout.judge.why import Why, whys
from shootout.stats import (
    MIN_PAIRED_ROUNDS,
    Design,
    Estimate,
    Resolution,
    Verdict,
    resolution,
    too_few_rounds,
    trial_flags,
    unpaired_estimate,
    unpaired_geomean,
    verdict,
)
from shootout.stats.design import percent
from shootout.workloads import cpuclock

# Shown, as a flag and a note, wherever an interval knows only the spread inside one run.
WITHIN_RUN = "within-run only; run-to-run drift is not included"


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
    resolution: Resolution | None = None  # for an inconclusive headline: what would settle it
    decided_by: Decided | None = None  # the workload's guard decided the verdict (better/worse), not the speed-up
    why: str = ""  # why a headline is not judged (Verdict.NOT_JUDGED) whatever its interval says


@dataclass(frozen=True)
class Summary:
    config: str
    geomean: Estimate | None  # over one headline metric per workload
    by_category: dict[str, Estimate | None]
    faster: int
    slower: int
    same: int
    inconclusive: int
    left_out: tuple[str, ...] = ()  # headline metrics with too few rounds for the geomean
    note: str = ""  # e.g. WITHIN_RUN: what the geomean interval does not include
    better: int = 0  # headline verdicts a guard decided (e.g. fewer tabs lost), not a speed-up
    worse: int = 0
    guarded: tuple[str, ...] = ()  # workloads left out of the geomean because a guard decided them
    not_judged: int = 0  # headline rows that get no verdict whatever their interval says (their why)
    why: str = ""  # why the geomean gets no verdict (Verdict.NOT_JUDGED) whatever its interval says
    category_why: dict[str, str] = field(default_factory=dict)  # the same per category geomean
    threshold: float = field(kw_only=True)  # δ of the verdicts below: the run's
    # The suite's verdicts, judged once when the summary is made, by the rule every verdict follows
    # (stats.verdict): the geomean's (inconclusive without one) and each category geomean's, keyed
    # as by_category. Renderers read these and judge nothing.
    verdict: Verdict = field(init=False)
    category_verdicts: dict[str, Verdict] = field(init=False)

    def __post_init__(self) -> None:
        def judge(est: Estimate | None, why: str) -> Verdict:
            return Verdict.NOT_JUDGED if why else verdict(est, self.threshold)

        object.__setattr__(self, "verdict", judge(self.geomean, self.why))
        object.__setattr__(self, "category_verdicts", {cat: judge(est, self.category_why.get(cat, ""))
                                                       for cat, est in self.by_category.items()})


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
    facts: RunFacts = field(default_factory=RunFacts)  # the machine's and each configuration's
    lost: dict[str, str] = field(default_factory=dict)  # configurations asked for that could not run (Run.lost)
    rules: tuple[str, ...] = ()  # the statistical rules used, in words, for the report's method section
    explanation: tuple[str, ...] = ()  # a named experiment's results beside its write-up's (experiments/)
    amounts: tuple[Amount, ...] = ()  # what the trials counted that may be zero, per configuration
    refused: str = ""  # why the run measured nothing (its budget), said instead of "too few rounds"
    whys: tuple[Why, ...] = ()  # the counters beside each headline, furthest from 1 first (why.py)


def budget_refusal(run: Run) -> str:
    """Why a run stopped after its warm-up, and the budget that would have paid ('' if it did not)."""
    found = run.budget_refused
    if found is None:
        return ""
    budget = found.budget_s
    budget_text = f"{budget:g} s" if budget < 120 else f"{budget / 60:g} min"
    return (f"run {run.id} was refused for its budget: {budget_text} cannot pay for the "
            f"{found.rounds} rounds a first verdict needs, so nothing was measured beyond the warm-up; "
            f"--budget {found.wanted_min}m would pay for them (or fewer workloads with -w, or --partial "
            "to measure without verdicts)")


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


def run_design(run: Run, headline: bool, workload: str | None = None) -> Design:
    """The interval rule of one run: headline metrics are a family (Bonferroni over the run's
    headline comparisons) looked at after every round up to the workload's own last look
    (measure/roundplan.py; without a workload, the run's last); sub-metrics are single estimates,
    but still looked at sequentially because the run stopped on data they are correlated with."""
    s = run.settings
    family = max(1, len(run.workloads) * (len(run.configs) - 1)) if headline else 1
    last = s.max_rounds if workload is None else s.last_look(workload)
    return Design(s.confidence, family, (s.min_rounds, last) if s.interleaved else None)


def log_perf(values: Sequence[float], symbol: str) -> list[float]:
    return [math.log(performance(v, symbol)) for v in values]


def judged(est: Estimate | None, headline: bool, threshold: float) -> Verdict:
    """Headline metrics get a verdict; sub-metrics stay estimates with intervals."""
    return verdict(est, threshold) if headline else Verdict.ESTIMATE


# The reason every emulated comparison gives for having no verdict, at any number of rounds.
EMULATED = "emulated: emulated results never get verdicts (an emulator's timings say nothing of the hardware's)"


def unjudged(design: Design, rounds: int, emulated: bool) -> str:
    """Why a headline or a geomean with this many paired rounds gets no verdict whatever its
    interval says, or '' where its interval decides (fewer than MIN_PAIRED_ROUNDS: no interval)."""
    if emulated:
        return EMULATED
    if rounds < MIN_PAIRED_ROUNDS or not design.before_first_look(rounds):
        return ""
    first = design.first_look()
    if first is None:
        return f"no verdict: no round up to {rounds} reaches the rule's level"
    return f"no verdict before round {first}, the rule's first look ({rounds} rounds measured)"


def seconds_per_round(trials: Sequence[Trial], workload: str, configs: Sequence[str]) -> float | None:
    """Median trial wall time of a workload, summed over the configurations a round runs."""
    walls = [[t.wall_s for t in trials if t.spec.workload == workload and t.spec.config == c and t.wall_s > 0]
             for c in configs]
    return sum(statistics.median(w) for w in walls) if all(walls) else None


def settle(comp: Comparison, threshold: float, per_round: float | None) -> Comparison:
    """An inconclusive headline verdict with the figures of what would have settled it."""
    if not comp.headline or comp.verdict is not Verdict.INCONCLUSIVE or comp.estimate is None or comp.why:
        return comp
    return dataclasses.replace(comp, resolution=resolution(comp.estimate, threshold, per_round))


@dataclass
class _Trials:
    """One run's trials as each of its comparisons reads them."""

    run: Run
    trials: Sequence[Trial]
    measured: list[Trial]  # the rounds, without the warm-up
    conditions: RunConditions
    values: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)  # (workload, metric, config)

    def collect(self, spec: WorkloadSpec, metric: str) -> bool:
        """Each configuration's values of the metric; False if the run's parameters do not produce it."""
        for config in self.run.configs:
            self.values[(spec.name, metric, config.name)] = metric_values(self.measured, spec.name, metric,
                                                                          config.name)
        return any(self.values[(spec.name, metric, c.name)] for c in self.run.configs) or any(
            t.spec.workload == spec.name and not t.ok for t in self.trials)

    def flags(self, spec: WorkloadSpec, metric: Metric, base: str, config: str, ratios: dict[int, float],
              emulated: bool) -> list[str]:
        """What the reader must know about one comparison: noise, conditions, ceilings, failures."""
        interleaved = self.run.settings.interleaved
        flags = trial_flags(
            self.values[(spec.name, metric.name, config)], list(ratios.keys()),
            list(ratios.values()) if interleaved else None,
            # imported results may not know the wall time (0): unknown, not short
            [t.wall_s for t in self.measured
             if t.spec.workload == spec.name and t.spec.config == config and t.wall_s > 0],
        )
        pair = [t for t in self.measured if t.spec.workload == spec.name and t.spec.config in (base, config)]
        flags += self.conditions.flags(pair)
        flags += ceiling_flags(pair, metric.name, metric.unit)
        flags += generator_flags(pair, metric.name)
        if not interleaved:
            flags.append(WITHIN_RUN)
        if emulated:
            flags.append("emulated")
        failed = [t for t in self.trials
                  if t.spec.workload == spec.name and not t.ok and t.spec.config in (base, config)]
        if failed:
            flags.append("failed: " + (failed[0].error or "error"))
        return flags

    def compare(self, spec: WorkloadSpec, metric: Metric, config: str, designs: dict[bool, Design],
                headline: bool) -> Comparison:
        """One configuration against the baseline on one metric: estimate, flags, verdict."""
        s, base = self.run.settings, self.run.configs[0].name
        a, b = self.values[(spec.name, metric.name, base)], self.values[(spec.name, metric.name, config)]
        design = designs[headline]
        cfg_facts, base_facts = self.run.facts.side(config), self.run.facts.side(base)
        emulated = is_emulated(cfg_facts) or is_emulated(base_facts)
        if s.interleaved:
            ratios = metric_log_ratios(self.measured, spec, metric.name, base, config)
            est = design.estimate(list(ratios.values()))
            why = unjudged(design, len(ratios), emulated) if headline else ""
            if why and est is None:  # no verdict anyway: the estimate of the same rounds, as a sub-metric's
                est = designs[False].estimate(list(ratios.values()))
                why += "; the interval shown is a sub-metric's, with no Bonferroni" if est else ""
        else:
            ratios = {}
            est = design.adopt(unpaired_estimate(log_perf(a, metric.unit), log_perf(b, metric.unit),
                                                 design.per_look()))
            why = EMULATED if emulated and headline else ""
        comp = Comparison(
            workload=spec.name, category=spec.category, metric=metric.name, unit=metric.unit,
            direction=str(unit(metric.unit).direction), headline=headline, baseline=base, config=config,
            medians={c: statistics.median(v) for c, v in ((base, a), (config, b)) if v},
            log_ratios=ratios, estimate=est,
            verdict=Verdict.NOT_JUDGED if why else judged(est, headline, s.threshold),
            paired=s.interleaved, flags=tuple(self.flags(spec, metric, base, config, ratios, emulated)),
            confounders=tuple(confounders(base_facts, cfg_facts, spec.name, metric.name)), why=why,
        )
        if headline:  # e.g. a setup that lost tabs is worse, never faster
            decided, by = guard(spec, self.measured, base, config, comp.verdict)
            if by is not None:
                comp = dataclasses.replace(comp, verdict=decided, decided_by=by, why="",
                                           flags=(*comp.flags, by.flag(metric.name)))
        return settle(comp, s.threshold, seconds_per_round(self.measured, spec.name, (base, config)))


def _run_notes(run: Run, summaries: Sequence[Summary], refused: str) -> list[str]:
    """The analysis's own notes, most general first: sequential runs, machines, a refusal, left-out workloads."""
    notes = [n for summary in summaries for n in left_out_notes(summary)]
    if refused:
        notes.insert(0, refused)
    if machines := machines_note((c.display, run.facts.side(c.name), run.facts.machine)
                                 for c in run.configs):
        notes.insert(0, machines)
    if not run.settings.interleaved:
        notes.insert(0, f"{WITHIN_RUN}: the configurations ran one after another, so their values are "
                        "compared as two independent samples")
    return notes


def analyze(run: Run, trials: Sequence[Trial], noise_floor: float | None = None) -> Analysis:
    """Compare every configuration of one run with its baseline: paired by round when the
    run interleaved its configurations, else (imported sequential runs) unpaired."""
    s = run.settings
    measured = [t for t in trials if t.spec.round > 0]
    # the geomean is looked at when its shortest workload stops: never after the earliest last look
    suite = run_design(run, True, min(s.last_looks, key=s.last_looks.__getitem__) if s.last_looks else None)
    seen = _Trials(run, trials, measured, RunConditions(measured, run.facts.machine, run.set_aside))
    comparisons: list[Comparison] = []
    for spec in run.workloads:
        designs = {True: run_design(run, True, spec.name), False: run_design(run, False, spec.name)}
        for metric in spec.metrics:
            if not seen.collect(spec, metric.name):
                continue  # a metric this run's parameters do not produce
            headline = metric.name == cpuclock.headline(run, spec)
            comparisons += [seen.compare(spec, metric, config.name, designs, headline)
                            for config in run.configs[1:]]
    refused = "" if measured else budget_refusal(run)  # a resumed run that measured was not refused
    # a refused run has nothing to summarize: no "too few rounds" geomean, the refusal instead
    summaries = () if refused else summarize(comparisons, run.configs, suite,
                                            seen.values if not s.interleaved else None, threshold=s.threshold)
    return Analysis(
        runs=(run,), configs=tuple(run.configs), workloads=tuple(run.workloads),
        comparisons=tuple(comparisons), summaries=summaries,
        values=seen.values, threshold=s.threshold, noise_floor=noise_floor, conditions=tuple(seen.conditions.lines),
        notes=(*compared_notes(run, trials), *cpuclock.notes(run), *pmu_note(measured),
               *_run_notes(run, summaries, refused)),
        facts=RunFacts(machine=run.facts.machine, sides={c.name: dict(run.facts.side(c.name)) for c in run.configs}),
        lost=dict(run.lost),
        rules=method_rules(suite, s.interleaved, s.own_last_looks()),
        amounts=amounts(run, measured), refused=refused, whys=whys(run, measured),
    )


def method_rules(headline: Design, paired: bool, own: Mapping[str, int] | None = None) -> tuple[str, ...]:
    """The rules behind this analysis's intervals, in words (the report's method section): the
    headline design's, or where workloads had last looks of their own (`own`, by workload), each one's."""
    level = f"{headline.confidence:.0%}"
    out = []
    if headline.sequential and headline.looks is not None:
        own = own or {}
        designs = [dataclasses.replace(headline, looks=(headline.looks[0], n)) for n in sorted(set(own.values()))]
        first = min((f for d in designs or [headline] if (f := d.first_look()) is not None), default=None)
        to = (f"each workload's own last look, planned from the budget ({', '.join(f'{w} {n}' for w, n in sorted(own.items()))})"
              if own else f"{headline.looks[1]}")
        rules = "; ".join(d.rule() for d in designs or [headline])
        out.append(
            f"Sequential rule: the run looked after every round from round {headline.looks[0]} to "
            f"{to} and stopped a workload once it was decided. So that stopping early cannot "
            f"inflate errors, the intervals are repeated confidence intervals ({rules}): the "
            f"{level} holds over all looks at once, from the crossing probabilities of a Gaussian random walk "
            "for the Wilcoxon signed-rank path; the early looks are strict and the late ones close to the "
            f"nominal level; the interval shown is that of the round the workload stopped at"
            f"{'' if first is None else f'; no verdict is possible before round {first}'}.")
    if headline.family > 1:
        out.append(
            f"Many verdicts: the {level} covers all {headline.family} headline comparisons of the run together "
            f"(Bonferroni: each uses {percent(1 - (1 - headline.confidence) / headline.family)} before the "
            f"sequential adjustment), so the chance of any wrong headline verdict in the run is at most "
            f"{1 - headline.confidence:.0%}. Sub-metrics are estimates with {level} intervals (sequential, not "
            "Bonferroni) and get no verdict.")
    if not paired:
        out.append(f"Unpaired: the configurations were not interleaved, so their values are compared as two "
                   f"independent samples (Hodges\u2013Lehmann shift, Mann\u2013Whitney interval); {WITHIN_RUN}.")
    if paired:
        out.append("Suite summary: geometric mean of one headline metric per workload with equal weights (sub-results "
                   "do not multiply a workload's weight), over the workloads with at least 6 rounds; its t-interval "
                   "takes its variance from the delete-one-round jackknife (exactly the t-interval on per-round "
                   "suite means when every workload ran every round, wider otherwise), at the level the headline "
                   "rows' rule gives the look of its shortest workload; a geomean of one workload is that workload.")
    else:
        out.append("Suite summary: geometric mean of one headline metric per workload with equal weights, with "
                   f"Welch's interval on the two samples' means ({WITHIN_RUN}).")
    return tuple(out)


def left_out_notes(summary: Summary) -> list[str]:
    out = []
    if summary.left_out:
        out.append(f"geomean of {summary.config} leaves out {', '.join(summary.left_out)} (fewer than 6 rounds)")
    if summary.guarded:
        out.append(f"geomean of {summary.config} leaves out {', '.join(summary.guarded)}: what was lost decided "
                   "its verdict, so its speed-up is not judged")
    return out


def summarize(comparisons: Sequence[Comparison], configs: Sequence[Config], design: Design,
              values: dict[tuple[str, str, str], list[float]] | None = None, *,
              threshold: float) -> tuple[Summary, ...]:
    """Geomean over one headline metric per workload, per non-baseline configuration, with its
    verdicts (and its categories') against δ = threshold, under the rule of the headline rows
    (`design`), so that a geomean never claims what its rows cannot.

    Paired comparisons use their per-round log-ratios; pass `values` for unpaired ones (the
    geomean then compares the two samples of each workload, within the run only).
    """
    out = []
    for config in configs[1:]:
        every = [c for c in comparisons if c.config == config.name and c.headline]
        counts = {v: sum(1 for c in every if c.verdict == v) for v in Verdict}
        # A guard's verdict is not a speed-up: its workload stays out of the speed-up geomean,
        # which would otherwise call "faster" a setup the guard found worse (or the reverse).
        guarded = tuple(f"{c.workload} ({c.decided_by.amount})" for c in every if c.decided_by)
        heads = [c for c in every if not c.decided_by]
        if values is None:
            ratios = {c.workload: c.log_ratios for c in heads if c.log_ratios}
            short = too_few_rounds(ratios)
            kept = {c.workload: c for c in heads if c.workload in ratios and c.workload not in short}
            left_out, note = tuple(f"{w} ({n} rounds)" for w, n in sorted(short.items())), ""
            pooled = partial(_paired_suite, design=design)
        else:
            kept, left_out, note = {c.workload: c for c in heads}, (), WITHIN_RUN
            pooled = partial(_unpaired_suite, design=design, values=values)
        est, why = _suite(list(kept.values()), pooled, design)
        by_category, category_why = {}, {}
        if values is None:
            for cat in sorted({c.category for c in kept.values()}):
                by_category[cat], category_why[cat] = _suite([c for c in kept.values() if c.category == cat],
                                                             pooled, design)
        if guarded and not kept and not left_out:
            why = f"no workload judged by speed: what was lost decided {', '.join(guarded)}"
        elif any(c.why.startswith(EMULATED) for c in heads):  # at any number of rounds, with a geomean or not
            why = EMULATED
        out.append(Summary(
            config=config.name, geomean=est, by_category=by_category,
            faster=counts[Verdict.FASTER], slower=counts[Verdict.SLOWER],
            same=counts[Verdict.SAME], inconclusive=counts[Verdict.INCONCLUSIVE],
            left_out=left_out, note=note, better=counts[Verdict.BETTER], worse=counts[Verdict.WORSE],
            guarded=guarded, not_judged=counts[Verdict.NOT_JUDGED], why=why, category_why=category_why,
            threshold=threshold,
        ))
    return tuple(out)


def _paired_suite(rows: Sequence[Comparison], design: Design) -> Estimate | None:
    return design.geomean({c.workload: c.log_ratios for c in rows})


def _unpaired_suite(rows: Sequence[Comparison], design: Design,
                    values: dict[tuple[str, str, str], list[float]]) -> Estimate | None:
    samples = {c.workload: (log_perf(values[(c.workload, c.metric, c.baseline)], c.unit),
                            log_perf(values[(c.workload, c.metric, c.config)], c.unit)) for c in rows}
    return design.adopt(unpaired_geomean(samples, design.per_look()))


def _suite(rows: Sequence[Comparison], pooled: Callable[[Sequence[Comparison]], Estimate | None],
           design: Design) -> tuple[Estimate | None, str]:
    """The geomean of these headline rows and why it gets no verdict ('' where its interval decides).

    With one workload the geomean is that workload: its estimate and its reason, so that the
    summary says what the row says. Otherwise the rows' rule: no verdict where any row is
    emulated, or before the first look of the rule at the rounds of the shortest row."""
    if len(rows) == 1:
        return rows[0].estimate, rows[0].why
    if not rows:
        return None, ""
    emulated = any(c.why.startswith(EMULATED) for c in rows)
    if not all(c.log_ratios for c in rows):  # unpaired: one look, no first look to wait for
        return pooled(rows), EMULATED if emulated else ""
    return pooled(rows), unjudged(design, min(len(c.log_ratios) for c in rows), emulated)
