"""Wording and number formats shared by every renderer, so all reports say the same thing."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from shootout.base.model import Config, WorkloadSpec
from shootout.base.units import UNITS, fmt_duration, unit
from shootout.judge.analysis import Analysis, Comparison, Summary
from shootout.report.lostworkloads import lost_phrase
from shootout.stats import Estimate, Resolution, Verdict
from shootout.workloads import cpuclock

TIMES = "\u00d7"  # the multiplication sign of "1.070×"
MINUS = "\u2212"
EN_DASH = "\u2013"
NOT_JUDGED = str(Verdict.NOT_JUDGED)


def fmt_value(value: float | None, symbol: str) -> str:
    """A median with its unit, in the unit's display format."""
    if value is None or not math.isfinite(value):
        return "n/a"
    u = UNITS.get(symbol)
    return u.format(value) if u else f"{value:.4g} {symbol}"


def fmt_ratio(ratio: float) -> str:
    """A ratio that is not a speed-up (a price ratio, performance per price): '1.070×'."""
    return f"{ratio:.3f}{TIMES}"


def fmt_ratio_interval(ratio: float, low: float, high: float) -> str:
    """Such a ratio with its interval: '1.070× [1.051, 1.089]'."""
    return f"{fmt_ratio(ratio)} [{low:.3f}, {high:.3f}]"


FASTER, SLOWER = str(Verdict.FASTER), str(Verdict.SLOWER)


class Speed(NamedTuple):
    """One speed-up as every output says it, from the compared configuration's side against
    the baseline: number '28.0%', word 'slower', interval '27.4–28.6%' (the number's word
    holds for both ends) or '−16.6% to +20.4%' (an interval across no change: − slower,
    + faster; short enough for a cell of an 80-column table).

    Percentages of the baseline's performance, so that the number, its word and the table's
    column ('X vs baseline') speak of the same thing; never the winner's side in one place
    and the configuration's in another."""

    number: str
    word: str
    interval: str

    def __str__(self) -> str:
        return f"{self.number} {self.word} [{self.interval}]"

    @property
    def short(self) -> str:
        return f"{self.number} {self.word}"


def _percent(size: float) -> str:
    return f"{size * 100:,.1f}"


def _size(ratio: float, word: str) -> float:
    """How much faster or slower than the baseline, as a fraction of its performance."""
    return ratio - 1.0 if word == FASTER else 1.0 - ratio


def speed(ratio: float, low: float, high: float) -> Speed:
    """The one framing of a speed-up ratio (configuration / baseline) and its interval."""
    word = FASTER if ratio >= 1.0 else SLOWER
    if (low >= 1.0) if word == FASTER else (high <= 1.0):
        ends = sorted((_size(low, word), _size(high, word)))
        interval = f"{_percent(ends[0])}{EN_DASH}{_percent(ends[1])}%"
    else:
        interval = f"{MINUS}{_percent(1.0 - low)}% to +{_percent(high - 1.0)}%"  # across no change: signed
    return Speed(f"{_percent(_size(ratio, word))}%", word, interval)


def speed_of(est: Estimate) -> Speed:
    return speed(est.ratio, est.low, est.high)


def speed_tick(ratio: float) -> str:
    """An axis tick of speed-ups in the same words: 0.8 -> '20% slower', 1 -> '0%'."""
    if ratio == 1.0:
        return "0%"
    word = FASTER if ratio > 1.0 else SLOWER
    return f"{_size(ratio, word) * 100:.3g}% {word}"


def speed_sentence(est: Estimate, subject: str, base: str, scope: str = "") -> str:
    """'i386 is 28.0% slower than amd64[ on …] (interval 27.4–28.6%)'."""
    s = speed_of(est)
    return f"{subject} is {s.short} than {base}{scope} (interval {s.interval})"


def fmt_estimate(est: Estimate | None, why: str = "too few rounds") -> str:
    """'28.0% slower [27.4–28.6%]', or why there is no estimate."""
    if est is None:
        return f"n/a ({why})"
    return str(speed_of(est))


def no_estimate(comp: Comparison) -> str:
    """Why a comparison shows no estimate, for its cell: the judge's reason is in its notes."""
    return NOT_JUDGED if comp.why else "too few rounds"


def fmt_comparison(comp: Comparison) -> str:
    """The number beside a comparison's verdict: its speed-up, or, where a guard decided the
    verdict (better/worse), the counts that decided it, so number and word agree."""
    if comp.decided_by is not None:
        return comp.decided_by.figure()
    return fmt_estimate(comp.estimate, no_estimate(comp))


def no_geomean(summary: Summary | None, short: bool = False) -> str:
    """Why a configuration's suite geomean has no estimate or no verdict (short: for a table cell)."""
    if summary is None or not summary.why:
        return "too few rounds"
    if not short:
        return summary.why
    return "speed not judged" if summary.guarded and summary.geomean is None else NOT_JUDGED


def fmt_suite(est: Estimate | None, summary: Summary | None) -> str:
    """A geomean cell: its estimate, or why there is none."""
    return fmt_estimate(est) if est is not None else f"n/a ({no_geomean(summary, short=True)})"


def suite_word(est: Estimate | None, judged: Verdict | None) -> Verdict | None:
    """The verdict beside a geomean cell: none where it has no estimate, unless it is not judged."""
    return judged if est is not None or judged is Verdict.NOT_JUDGED else None


def workloads(n: int) -> str:
    return f"{n} workload" if n == 1 else f"{n} workloads"


_SI = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))


def fmt_param(name: str, value: object) -> str:
    """One stored parameter as a label: sizes in bytes as MB/GB (decimal: 10^6/10^9, as units.py's MB)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{name} = {value}"
    if name == "size" or name.endswith(("_bytes", "_size")):
        for scale, unit_name in _SI:
            if abs(value) >= scale:
                return f"{name} = {value / scale:,.4g} {unit_name}"
        return f"{name} = {value:g} bytes"
    return f"{name} = {value:,}" if isinstance(value, int) else f"{name} = {value:,.6g}"


def run_params(analysis: Analysis, workload: str) -> str:
    """The parameters the run(s) stored for a workload (sizes, iterations, tabs), for labels:
    a description names what a workload does, these name how much this run did. Scalars
    only; where runs differ, each run's value."""
    values: dict[str, list[object]] = {}
    for run in analysis.runs:
        for name, value in run.params.get(workload, {}).items():
            if isinstance(value, (int, float, str)) and len(str(value)) <= 40 and value not in values.get(name, []):
                values.setdefault(name, []).append(value)
    return ", ".join(" vs ".join(fmt_param(name, v) for v in vs) for name, vs in values.items())


def overrides_lines(analysis: Analysis) -> list[str]:
    """The parameters the run(s) were given with --set, over the file's or the experiment's: one line."""
    given = [f"{workload}.{name} = {value!r}" for run in analysis.runs
             for workload, table in run.settings.overrides.items() for name, value in table.items()]
    return [f"set with --set: {', '.join(dict.fromkeys(given))}"] if given else []


def workload_description(analysis: Analysis, spec: WorkloadSpec | None, workload: str) -> str:
    """A workload's description with this run's parameters: 'SHA-1 of … (this run: size = 2 GB)'."""
    desc = spec.description if spec else ""
    params = run_params(analysis, workload)
    if not params:
        return desc
    return f"{desc} (this run: {params})" if desc else f"this run: {params}"


def direction_text(direction: str) -> str:
    return "higher is better" if direction == "higher" else "lower is better"


def config_map(analysis: Analysis) -> dict[str, Config]:
    return {c.name: c for c in analysis.configs}


def display(analysis: Analysis, name: str) -> str:
    cfg = config_map(analysis).get(name)
    return cfg.display if cfg else name


def baseline(analysis: Analysis) -> Config:
    return analysis.configs[0]


def others(analysis: Analysis) -> list[Config]:
    return list(analysis.configs[1:])


@dataclass(frozen=True)
class MetricRow:
    """One (workload, metric) with its comparison against the baseline for each other config."""

    spec: WorkloadSpec | None
    workload: str
    metric: str
    unit: str
    direction: str
    headline: bool
    comparisons: tuple[Comparison, ...]  # in configuration order

    @property
    def first(self) -> Comparison:
        return self.comparisons[0]


def metric_rows(analysis: Analysis) -> list[MetricRow]:
    """Comparisons grouped per metric, in catalogue order: workloads, their metrics, configs."""
    specs = {w.name: w for w in analysis.workloads}
    workload_order = {w.name: i for i, w in enumerate(analysis.workloads)}
    config_order = {c.name: i for i, c in enumerate(analysis.configs)}
    groups: dict[tuple[str, str], list[Comparison]] = {}
    for comp in analysis.comparisons:
        groups.setdefault((comp.workload, comp.metric), []).append(comp)

    def metric_index(key: tuple[str, str]) -> int:
        spec = specs.get(key[0])
        names = [m.name for m in spec.metrics] if spec else []
        return names.index(key[1]) if key[1] in names else len(names)

    first_seen = {key: i for i, key in enumerate(groups)}
    keys = sorted(
        groups,
        key=lambda k: (workload_order.get(k[0], len(workload_order)), metric_index(k), first_seen[k]),
    )
    rows = []
    for key in keys:
        comps = sorted(groups[key], key=lambda c: config_order.get(c.config, len(config_order)))
        c0 = comps[0]
        rows.append(
            MetricRow(specs.get(key[0]), key[0], key[1], c0.unit, c0.direction, c0.headline, tuple(comps))
        )
    return rows


def one_side_rows(analysis: Analysis) -> list[MetricRow]:
    """A run of one configuration compares nothing, but measured: a row per metric with values,
    without comparisons (its medians are the figures; none for a run that compared)."""
    if len(analysis.configs) != 1 or analysis.comparisons or len(analysis.runs) != 1:
        return []
    (config,), (run,) = analysis.configs, analysis.runs
    return [MetricRow(spec, spec.name, metric.name, metric.unit, str(unit(metric.unit).direction),
                      metric.name == cpuclock.headline(run, spec), ())
            for spec in analysis.workloads for metric in spec.metrics
            if analysis.values.get((spec.name, metric.name, config.name))]


class SideFigures(NamedTuple):
    """A one-configuration row's figures over its rounds."""

    median: float
    min: float
    max: float
    rounds: int


def side_figures(analysis: Analysis, row: MetricRow) -> SideFigures:
    values = analysis.values[(row.workload, row.metric, analysis.configs[0].name)]
    return SideFigures(statistics.median(values), min(values), max(values), len(values))


def all_rows(analysis: Analysis) -> list[MetricRow]:
    """The rows to show: the comparisons' (metric_rows), or one configuration's figures."""
    return metric_rows(analysis) or one_side_rows(analysis)


def rows_by_workload(analysis: Analysis) -> dict[str, list[MetricRow]]:
    """metric_rows grouped per workload, workloads in the same (catalogue) order."""
    out: dict[str, list[MetricRow]] = {}
    for row in metric_rows(analysis):
        out.setdefault(row.workload, []).append(row)
    return out


def headline_comparisons(analysis: Analysis, config: str) -> list[Comparison]:
    return [c for c in analysis.comparisons if c.headline and c.config == config]


def geomean_workload_count(analysis: Analysis, config: str) -> int:
    """Workloads that enter the geomean: headline metrics with data, less those left out."""
    summary = next((s for s in analysis.summaries if s.config == config), None)
    left_out = len(summary.left_out) + len(summary.guarded) if summary else 0
    return sum(1 for c in headline_comparisons(analysis, config) if c.log_ratios or c.estimate) - left_out


def row_medians(analysis: Analysis, row: MetricRow) -> dict[str, float]:
    """Median per configuration of one metric: from the comparisons, else from the raw values."""
    medians: dict[str, float] = {}
    for comp in row.comparisons:
        medians.update(comp.medians)
    for cfg in analysis.configs:
        vals = analysis.values.get((row.workload, row.metric, cfg.name))
        if cfg.name not in medians and vals:
            medians[cfg.name] = statistics.median(vals)
    return medians


def _undecided_because(summary: Summary) -> str:
    # "needs more rounds" would contradict rows that are all decided, some each way
    return "the workloads go both ways" if summary.faster and summary.slower and not summary.inconclusive \
        else "needs more rounds"


def _in_brackets(est: Estimate, other: str) -> str:
    """An estimate beside a sentence that gives no verdict: 'i386 28.0% slower, interval 27.4–28.6%'."""
    s = speed_of(est)
    return f"{other} {s.short}, interval {s.interval}"


def summary_sentence(analysis: Analysis, summary: Summary) -> str:
    """The one-sentence answer for one configuration against the baseline."""
    base = baseline(analysis).display
    other = display(analysis, summary.config)
    n = geomean_workload_count(analysis, summary.config)
    est = summary.geomean
    delta = analysis.threshold * 100
    scope = f" on the geometric mean of {workloads(n)}"
    if summary.verdict is Verdict.NOT_JUDGED:
        head = f"No suite verdict for {other} against {base}: {no_geomean(summary)}"
        if est is not None:
            head += f" ({_in_brackets(est, other)})"
    elif est is None:
        head = f"No suite geomean for {other} against {base}: {no_geomean(summary)}"
    else:
        v = summary.verdict
        if v in (Verdict.FASTER, Verdict.SLOWER):
            head = speed_sentence(est, other, base, scope)
        elif v is Verdict.SAME:
            head = f"{other} and {base} perform the same within \u00b1{delta:g}%{scope} ({_in_brackets(est, other)})"
        else:
            head = (f"No clear winner between {other} and {base}{scope} "
                    f"({_in_brackets(est, other)}; {_undecided_because(summary)})")
    if summary.note:
        head += f" ({summary.note})"
    if lost := lost_phrase(analysis):
        head += f" ({lost})"
    parts = []
    if summary.faster + summary.slower + summary.same + summary.inconclusive or not summary.guarded:
        parts = [f"{other} {FASTER} in {summary.faster}", f"{SLOWER} in {summary.slower}"]
    if summary.guarded:  # decided by a guard (e.g. tabs lost), not by speed
        parts.append(f"{other} better in {summary.better} and {base} better in {summary.worse} by what they lost "
                     "(their speed not judged)")
    if summary.same:
        parts.append(f"no difference beyond \u00b1{delta:g}% in {summary.same}")
    if summary.inconclusive:
        parts.append(f"inconclusive in {summary.inconclusive}")
    if summary.not_judged:
        parts.append(f"{NOT_JUDGED} in {summary.not_judged}")
    return f"{head}; {', '.join(parts)}."


def change_phrase(comp: Comparison, analysis: Analysis) -> str:
    """One comparison in words, in the framing of the summary sentence, with its verdict."""
    est = comp.estimate
    base = display(analysis, comp.baseline)
    other = display(analysis, comp.config)
    if comp.decided_by is not None:
        winner, loser = (other, base) if comp.verdict is Verdict.BETTER else (base, other)
        by = comp.decided_by
        return (f"{winner} is better than {loser} by {by.amount} ({other} {by.lost.lost:g}, {base} "
                f"{by.lost.baseline:g} over {by.lost.rounds} rounds), whatever the speed: speed-up "
                f"{fmt_estimate(est)}, not judged")
    if est is None:
        return f"{other} against {base}: not enough rounds for an interval"
    said = speed_sentence(est, other, base)
    if comp.verdict is Verdict.ESTIMATE:
        return f"{said}; a sub-metric, no verdict"
    if comp.verdict is Verdict.SAME:
        return f"{said}: the same, no difference beyond \u00b1{analysis.threshold * 100:g}%"
    if comp.verdict is Verdict.INCONCLUSIVE:
        return f"{said}: inconclusive (the interval crosses the \u00b1{analysis.threshold * 100:g}% threshold)"
    return f"{said}: {comp.verdict}"


def all_notes(analysis: Analysis) -> list[str]:
    """The analysis's notes, then each run's own note (e.g. how an imported run was measured)."""
    notes: list[str] = []
    for note in [*analysis.notes, *(run.note for run in analysis.runs)]:
        if note and note not in notes:
            notes.append(note)
    return notes


def notes_of(comp: Comparison) -> list[str]:
    """Flags, confounders and what an inconclusive verdict would need, as short notes beside a number."""
    notes = ([comp.why] if comp.why else []) + list(comp.flags) + [f"confounder: {c}" for c in comp.confounders]
    if comp.resolution is not None:
        notes.append(resolution_text(comp.resolution))
    return notes


def notes_by_comparison(row: MetricRow, configs: list[Config]) -> list[tuple[str, list[str]]]:
    """A metric row's notes, one entry per comparison that has any: (configuration, notes).

    Each comparison keeps its own (two comparisons' flags merged in one cell read as if both
    had all of them); the configuration is named only when the row compares several."""
    by_config = {c.config: c for c in row.comparisons}
    out = []
    for cfg in configs:
        comp = by_config.get(cfg.name)
        if comp is not None and (notes := notes_of(comp)):
            out.append((cfg.display if len(configs) > 1 else "", notes))
    return out


def resolution_text(res: Resolution) -> str:
    """'resolves ±2.4%; same at ±3.1%; ±1% needs ~170 rounds (~25 min)'."""
    text = f"resolves \u00b1{res.resolves:.1%}; 'same' at \u00b1{res.same_at:.1%}"
    if res.rounds is None:
        return text + "; the estimate sits at the threshold: more rounds would hardly settle it"
    text += f"; the threshold needs ~{res.rounds} rounds"
    return text + (f" (~{fmt_duration(res.seconds, 'rough')})" if res.seconds is not None else "")


def rule_lines(analysis: Analysis) -> list[str]:
    """Which rule produced the intervals shown with verdicts (named in every output); where
    workloads had their own last looks (measure/roundplan.py), the workloads of each rule."""
    rules = _headline_rules(analysis)
    if len(rules) < 2:
        return [f"verdict intervals: {rule}" for rule in rules]
    names: dict[str, list[str]] = {rule: [] for rule in rules}
    for c in analysis.comparisons:
        if c.headline and c.estimate and c.estimate.rule in names and c.workload not in names[c.estimate.rule]:
            names[c.estimate.rule].append(c.workload)
    # the rules differ in their looks only: what they share once, then each workload's looks
    words = {rule: re.split(r"(?<=[,;]) ", rule) for rule in rules}
    head = _shared(list(words.values()))
    tail = _shared([w[len(head):][::-1] for w in words.values()])[::-1]
    if not head:
        return [f"verdict intervals of {', '.join(names[rule])}: {rule}" for rule in rules]
    looks = [f"{', '.join(names[rule])} {' '.join(words[rule][len(head):len(words[rule]) - len(tail)]).rstrip(',;')}"
             for rule in rules]
    return [f"verdict intervals: {' '.join(head).rstrip(',;')}; {' '.join(tail) + '; ' if tail else ''}"
            f"{'; '.join(looks)}"]


def _shared(lists: list[list[str]]) -> list[str]:
    """The leading words every list has."""
    out = []
    for same in zip(*lists):
        if len(set(same)) > 1:
            break
        out.append(same[0])
    return out


def _headline_rules(analysis: Analysis) -> list[str]:
    return sorted({c.estimate.rule for c in analysis.comparisons
                   if c.headline and c.estimate and c.estimate.rule and not c.why})


def capitalized(line: str) -> str:
    """A legend line as a sentence of a report: its first letter upper case ('[interval]' kept)."""
    return line[:1].upper() + line[1:]


def promised_level(analysis: Analysis) -> int:
    """What every interval shown with a verdict promises, in percent (--confidence; 95)."""
    for comp in analysis.comparisons:
        if comp.estimate is not None:
            return round(comp.estimate.confidence * 100)
    return round(analysis.runs[0].settings.confidence * 100) if analysis.runs else 95


def speed_legend(analysis: Analysis) -> str:
    """What the number and its word mean, and the threshold of the verdicts."""
    return (f"speed-up: how much faster or slower each configuration performs than {baseline(analysis).display}, "
            f"in percent of its performance, whatever the metric's direction; verdict threshold "
            f"\u00b1{analysis.threshold * 100:g}%")


def interval_legend(analysis: Analysis) -> str:
    """The interval in plain words, and why it is wider than a plain one: the sequential rule
    (looks after every round) and Bonferroni over the headline comparisons (stats/design.py)."""
    level = f"{promised_level(analysis)}%"
    rules = " ".join(_headline_rules(analysis))
    looks, many = "sequential" in rules, "Bonferroni" in rules
    lead = f"[interval]: where the true speed-up lies ({MINUS} slower, + faster where it spans both)"
    if not looks and not many:
        return f"{lead}, at {level}"
    why = " and ".join(w for w, on in (("the sequential rule", looks), ("the number of comparisons", many)) if on)
    holds = "every verdict of the run holds" if many else "the verdict holds"
    together = " together" if many else ""
    stopped = ", whichever round each workload stopped at" if looks else ""
    return (f"{lead}, at the level {why} require{'' if looks and many else 's'} (wider than a plain {level} "
            f"interval, so that {holds} at {level}{together}{stopped})")


def iter_summaries(analysis: Analysis) -> Iterator[Summary]:
    order = {c.name: i for i, c in enumerate(analysis.configs)}
    yield from sorted(analysis.summaries, key=lambda s: order.get(s.config, len(order)))
