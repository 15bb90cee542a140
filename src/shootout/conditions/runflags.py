"""Condition flags measured against the run itself, not against an ideal machine.

On a VM every trial may see steal time and a clock below its best; a flag on every row says
nothing. So each condition is a number per trial (steal, clock deficit, other programs' CPU
time, temperature, throttling) and the run's *typical* trial (the median over all measured
trials) is the reference:

- what the typical trial saw beyond a condition's limit is a machine-wide condition, said
  once above the results (as is an excess that hit many trials, spread over every workload
  by the interleaving);
- a metric is flagged only when its own trials saw more than the typical trial: its median
  trial beyond the typical one by the condition's margin, or an event that hit a few of its
  trials and is rare in the run. The flag says by how much.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shootout.base.model import Trial
from shootout.conditions.clockflags import (
    DROP_LIMIT,
    HOT_C,
    STEAL_LIMIT_PCT,
    reference_mhz,
)
from shootout.conditions.repeats import LIMIT_CPUS, others_share, uneven
from shootout.system.cpureserve import HELD

RARE_SHARE = 0.10  # affected trials this rare in the run single out the metrics they hit


@dataclass(frozen=True)
class Condition:
    flag: str
    limit: float  # a trial beyond this was affected at all
    margin: float  # beyond the typical trial by more than this, a trial was worse off than it
    excess: Callable[[float, float], str]  # (metric median, typical) -> "+2.1 pts"
    worst: Callable[[float], str]  # the worst affected trial -> "up to 12%"
    typical: Callable[[float], str]  # the machine-wide line, from the typical trial's value


CONDITIONS = (
    Condition("steal", STEAL_LIMIT_PCT, STEAL_LIMIT_PCT, lambda m, t: f"+{m - t:.1f} pts",
              lambda w: f"up to {w:.1f}%", lambda t: f"steal: the hypervisor took {t:.1f}% of the CPU "
              "in the typical trial"),
    Condition("clock-drop", DROP_LIMIT * 100, DROP_LIMIT * 100, lambda m, t: f"\u2212{m - t:.1f}%",
              lambda w: f"\u2212{w:.0f}%", lambda t: f"clock: {t:.1f}% below its best in the typical trial"),
    Condition("busy", LIMIT_CPUS, LIMIT_CPUS, lambda m, t: f"+{m - t:.2f} CPUs", lambda w: f"up to {w:.2f} CPUs",
              lambda t: f"busy: other programs used {t:.2f} CPUs in the typical trial"),
    Condition("hot", HOT_C, 5.0, lambda m, t: f"{m:.0f} \u00b0C", lambda w: f"up to {w:.0f} \u00b0C",
              lambda t: f"hot: {t:.0f} \u00b0C in the typical trial"),
    Condition("throttled", 0.0, 0.5, lambda m, t: "", lambda w: "",
              lambda t: "throttled: the CPU was throttled in most trials"),
)


def _clock_deficit(trial: Trial, best_mhz: float | None, round_deficit: dict[int, float]) -> float | None:
    """How far below its best the clock was during the trial, in %: the monitor's fastest core
    or the clock loop of the trial's round, whichever saw more."""
    low = trial.monitor.get("min_mhz")
    seen = [round_deficit[trial.spec.round]] if trial.spec.round in round_deficit else []
    if low is not None and best_mhz:
        seen.append(max(0.0, 100.0 * (1.0 - low / best_mhz)))
    return round(max(seen), 6) if seen else None  # exactly 3% down is not beyond 3%


def _quantities(trial: Trial, best_mhz: float | None, round_deficit: dict[int, float]) -> dict[str, float | None]:
    w = trial.monitor
    throttled = w.get("throttled")
    return {
        "steal": w.get("max_steal_pct"),
        "clock-drop": _clock_deficit(trial, best_mhz, round_deficit),
        "busy": others_share(w),
        "hot": w.get("max_temp_c"),
        "throttled": None if throttled is None else float(throttled),
    }


def reserved_line(machine: Mapping[str, Any]) -> str | None:
    """Whether this machine's trials had CPUs of their own (system/cpureserve.py), for the report:
    said when they had, when --no-isolate said not to, and when another run held them (other
    reasons are the preflight's)."""
    reserved = machine.get("reserved_cpus") or {}
    if not reserved.get("reserved"):
        why = str(reserved.get("why", ""))
        return why if "--no-isolate" in why or HELD in why else None
    line = (f"trials on reserved CPU {reserved['reserved']}, everything else that may move on CPU "
            f"{reserved.get('rest', '?')}")
    if unreserved := reserved.get("unreserved_workloads"):
        line += f"; on every CPU: {', '.join(sorted(unreserved))} (more threads than reserved CPUs)"
    return line


def _key(trial: Trial) -> tuple[int, str, str]:
    return trial.spec.round, trial.spec.workload, trial.spec.config


@dataclass(frozen=True)
class _Level:
    condition: Condition
    typical: float
    bar: float  # a trial above this was affected more than the typical trial
    share: float  # of the run's trials above the bar


class RunConditions:
    """The run's typical trial per condition, the machine-wide lines, and flags per metric."""

    def __init__(self, trials: Sequence[Trial], machine: dict[str, Any],
                 set_aside: Sequence[Mapping[str, Any]] = ()) -> None:
        """machine: the run's machine facts; set_aside: the attempts the run measured again."""
        clock = machine.get("clock_mhz") or []
        start = clock[0][1] if clock else None
        round_deficit = {int(r): max(0.0, 100.0 * (1.0 - mhz / start)) for r, mhz, *_ in clock if start and mhz}
        best = reference_mhz(machine.get("monitor_samples", []))
        self.values = {_key(t): _quantities(t, best, round_deficit) for t in trials if t.spec.round > 0}
        self.levels: list[_Level] = []
        self.lines: list[str] = [line] if (line := reserved_line(machine)) else []
        if set_aside:
            self.lines.append(f"repeated: other programs interrupted {len(set_aside)} trial attempt(s); they were set "
                              "aside and measured again (kept with the run)")
        configs: dict[str, set[str]] = {}
        for t in trials:
            configs.setdefault(t.spec.workload, set()).add(t.spec.config)
        self.uneven = uneven(set_aside, {w: sorted(c) for w, c in configs.items()})
        for workload, split in self.uneven.items():
            self.lines.append(f"repeated unevenly: {workload} ({split} attempts set aside): a configuration's own "
                              "work may have counted as other programs'; compare with --repeats 0")
        for c in CONDITIONS:
            seen = [q[c.flag] for q in self.values.values() if q[c.flag] is not None]
            if not seen:
                continue
            typical = statistics.median(seen)
            bar = max(c.limit, typical + c.margin)
            level = _Level(c, typical, bar, sum(v > bar for v in seen) / len(seen))
            self.levels.append(level)
            if typical > c.limit:
                self.lines.append(c.typical(typical))
            if level.share > RARE_SHARE:
                self.lines.append(f"{c.flag}: {level.share:.0%} of trials saw more than the typical one, "
                                  "spread over every workload by the interleaved order")

    def flags(self, trials: Iterable[Trial]) -> list[str]:
        """The conditions under which these trials (one metric's) were worse off than the run's typical trial."""
        trials = list(trials)
        keys = [_key(t) for t in trials]
        flags = ["repeated unevenly"] if any(t.spec.workload in self.uneven for t in trials) else []
        for level in self.levels:
            c = level.condition
            seen = [q[c.flag] for k in keys if (q := self.values.get(k)) and q[c.flag] is not None]
            if not seen:
                continue
            hit = [v for v in seen if v > level.bar]
            median = statistics.median(seen)
            if median > level.bar:
                flags.append(" ".join(filter(None, [c.flag, c.excess(median, level.typical)])))
            elif hit and level.share <= RARE_SHARE:
                flags.append(" ".join(filter(None, [c.flag, c.worst(max(hit)), f"in {len(hit)} of {len(seen)} trials"])))
        return flags
