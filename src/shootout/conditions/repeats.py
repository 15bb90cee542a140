"""Trials that other programs interrupted are measured again.

Why: on a machine where something else runs now and then (a desktop, a cron job, a build,
the on/off load of benchmarks/verdicts.py), a trial that shared the CPUs with another program
took 20-90% longer here (0.2 s trials, both CPUs busy 1.3 s in every 3 s). One such trial
in a pair adds more noise than the rest of the round, so the interval widens and the run
needs many more rounds, or cannot resolve the threshold at all.

The rule: a measured trial (not the warm-up) during which programs outside shootout's process
tree used more than a quarter of a CPU on average (and at least 30 ms, as /proc/stat counts in
10 ms ticks) is set aside and run again, up to `run --repeats` times (3); the next attempt is
kept whatever it saw, so every trial ends. Before running it again the runner waits (up to 2 s)
until a 0.1 s window shows other programs below that quarter of a CPU: a burst of load
outlasts a short trial, and three attempts at once would all meet the same burst.

Why verdicts stay honest: whether a trial is repeated depends only on what *other* programs
did while it ran, never on its own time or result, and the configurations do not change what
other programs do. The trial, its daemons and a VM are inside the tree, and kernel threads,
whose work a configuration may cause (compression, writeback, swap), run in system time,
which is not counted. So every configuration's kept trials pass the same test; the simulations
in tests/unit/test_stats_simulation.py show the error rates holding under on/off load.

Reserved CPUs (system/cpureserve.py): a trial that ran on CPUs reserved for it is judged by those
CPUs' lines of /proc/stat alone; what other programs do on the remaining CPU does not touch it.

Steady load: when nearly every attempt is interrupted, measuring again buys nothing. While
more than 80% of the run's attempts so far (20 or more) were interrupted, or after three waits
in a row that found no quiet moment (until an attempt is quiet), trials are kept as they come.

Nothing is lost: the run's facts list every set-aside attempt (its values, wall time and the
others' CPU), and the report says how many there were. If a configuration does make another
program work (a daemon outside the tree that its trials wake), its attempts are set aside more
often than the others'; uneven() finds that by a binomial test, and the report flags the
workload, since its kept trials may then be the configuration's lucky ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy.special import bdtr

from shootout.base.model import Trial

LIMIT_CPUS = 0.25  # others' CPU per second of the trial above this: interrupted
MIN_CPU_S = 0.03  # ... and at least this much, three ticks of /proc/stat
QUIET_WAIT_S = 2.0  # before an attempt again, wait at most this long for other programs to stop
STEADY_AFTER = 20  # attempts before the run can call its load steady
STEADY_SHARE = 0.8  # interrupted share of attempts that means steady load
STEADY_WAITS = 3  # waits in a row that found no quiet moment: steady load
UNEVEN_P = 0.01  # two-sided binomial p below this: set aside unevenly between configurations


def others_share(window: Mapping[str, Any]) -> float | None:
    """CPUs' worth of other programs' work during a trial (a monitor window); 0 below what
    /proc/stat's ticks can tell from nothing, None when not measured."""
    seconds, share = window.get("others_cpu_s"), window.get("others_cpus")
    if seconds is None or share is None:
        return None
    return share if seconds > MIN_CPU_S else 0.0


def interrupted(trial: Trial) -> bool:
    """Other programs used a CPU's share while this trial ran (see the module's docstring)."""
    share = others_share(trial.monitor)
    return share is not None and share > LIMIT_CPUS


def record(trial: Trial) -> dict[str, Any]:
    """A set-aside attempt as the run's facts keep it."""
    return {"round": trial.spec.round, "workload": trial.spec.workload, "config": trial.spec.config,
            "started_at": trial.started_at, "wall_s": trial.wall_s, "values": trial.values,
            "others_cpus": trial.monitor.get("others_cpus")}


@dataclass
class Repeats:
    """The run's count of attempts, and the decision to measure a trial again."""

    allowed: int  # attempts set aside at most per trial (run --repeats); the next one is kept
    attempts: int = 0
    hit: int = 0
    waits_run_out: int = 0  # in a row, since the last quiet attempt

    @property
    def steady(self) -> bool:
        return (self.waits_run_out >= STEADY_WAITS
                or (self.attempts >= STEADY_AFTER and self.hit > STEADY_SHARE * self.attempts))

    def waited(self, seconds: float) -> None:
        """After a wait for quiet (Monitor.wait_quiet): one that ran its full length counts."""
        self.waits_run_out = self.waits_run_out + 1 if seconds >= QUIET_WAIT_S else 0

    def again(self, trial: Trial, attempt: int) -> bool:
        """Count this attempt (0 for a trial's first); True when it is to be set aside and run again."""
        if trial.spec.warmup or not trial.ok:
            return False  # the warm-up is not a result; a failure is handled as one
        self.attempts += 1
        hit = interrupted(trial)
        self.hit += hit
        if not hit:
            self.waits_run_out = 0
        return hit and attempt < self.allowed and not self.steady


def uneven(set_aside: Iterable[Mapping[str, Any]], configs: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Workloads whose configurations had attempts set aside unevenly: workload -> "B 12, A 2".

    configs: workload -> its configurations (each ran as many trials). Were the rule blind to
    the configuration, the most and the least set-aside configuration would split their
    attempts like a fair coin; a split beyond UNEVEN_P (two-sided) says it was not.
    """
    counts = Counter((a["workload"], a["config"]) for a in set_aside)
    out = {}
    for workload, names in configs.items():
        ranked = sorted(names, key=lambda c: -counts[(workload, c)])
        most, least = counts[(workload, ranked[0])], counts[(workload, ranked[-1])]
        if len(names) > 1 and min(1.0, 2.0 * float(bdtr(least, most + least, 0.5))) < UNEVEN_P:
            out[workload] = ", ".join(f"{c} {counts[(workload, c)]}" for c in ranked)
    return out
