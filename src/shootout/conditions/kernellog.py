"""What the kernel log says about the machine, sorted: throttling, under-voltage, OOM kills.

An OOM kill is one episode of many lines ("X invoked oom-killer", a stack, the cgroup's
statistics, "oom-kill:...task_memcg=/...", "Killed process N (name)"): it is counted once,
at its "Killed process" line. Kills inside shootout's own cgroups are its memory-limited
trials doing what they were set up to do (the tabs workload counts its lost tabs itself), so
they are counted apart and never alarm a later run.

The kernel prints an episode's header (its statistics and its "oom-kill:" line, which name the
cgroup) at most 10 times in 5 s; past that a kill is its "Memory cgroup out of memory: Killed
process" line alone. Such a kill is a memory cgroup's, and within those 5 s of a named one it is
counted with the cgroup named last: a memory-limited run's quick kills are all its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shootout.system.cgroups import is_ours

_UNDERVOLTAGE = re.compile(r"under-?voltage|voltage normali[sz]ed", re.IGNORECASE)
_THROTTLING = re.compile(
    r"throttl|temperature (above|over) threshold|critical temperature|thermal.*(trip|shutdown)", re.IGNORECASE)
_KILLED = re.compile(r"^.*?Killed process (\d+)(?: \([^)]*\))?", re.IGNORECASE)
_OOM_KILL = re.compile(r"^oom-kill:.*?\btask_memcg=([^,]*).*?\bpid=(\d+)")
_MEMCG_STATS = re.compile(r"^Memory cgroup stats for (\S+?):?$")  # kernels before 4.19 have no oom-kill: line
_MEMCG_KILL = re.compile(r"^Memory cgroup out of memory:", re.IGNORECASE)  # not the whole machine's OOM
RATE_LIMIT_S = 5.0  # the kernel's oom_rs interval (DEFAULT_RATELIMIT_INTERVAL): headers left out within it


@dataclass
class KernelEvents:
    throttling: list[str] = field(default_factory=list)  # throttling and thermal messages
    under_voltage: list[str] = field(default_factory=list)
    oom_kills: list[str] = field(default_factory=list)  # one line per kill outside shootout's cgroups
    own_oom_kills: int = 0  # kills inside cgroups a shootout run made

    def as_fact(self) -> dict[str, object]:
        return {"throttling": self.throttling, "under_voltage": self.under_voltage,
                "oom_kills": self.oom_kills, "own_oom_kills": self.own_oom_kills}


def sort_events(records: list[tuple[float, str]], since: float = 0.0) -> KernelEvents:
    """The log's (time, message) records at or after `since`, sorted into the kinds above."""
    found = KernelEvents()
    memcg_of: dict[str, str] = {}  # pid -> the cgroup its oom-kill: line named
    stats_for = ""  # the cgroup of the episode under way, from its statistics header
    named: tuple[float, str] = (float("-inf"), "")  # when the last kill with a named cgroup came, and that cgroup
    for ts, msg in records:
        if ts < since:
            continue
        if m := _OOM_KILL.match(msg):
            memcg_of[m.group(2)] = m.group(1)
        elif m := _MEMCG_STATS.match(msg):
            stats_for = m.group(1)
        elif m := _KILLED.search(msg):
            memcg = memcg_of.pop(m.group(1), stats_for)
            stats_for = ""
            if memcg:
                named = (ts, memcg)
            elif _MEMCG_KILL.match(msg) and ts - named[0] <= RATE_LIMIT_S:
                memcg = named[1]  # its header left out by the rate limit
            if is_ours(memcg):
                found.own_oom_kills += 1
            else:
                found.oom_kills.append(f"{m.group(0)} in {memcg}" if memcg else m.group(0))
        elif _UNDERVOLTAGE.search(msg):
            found.under_voltage.append(msg)
        elif _THROTTLING.search(msg):
            found.throttling.append(msg)
    return found


def _count(items: list[str], what: str, where: str = "") -> str:
    return f"{len(items)} {what}{'' if len(items) == 1 else 's'}{where}"


def describe(events: KernelEvents, span: str = "since boot") -> list[str]:
    """Preflight lines: one per kind found, or one saying there is none."""
    lines = [f"kernel log: {_count(items, what, where)} {span}; latest: {items[-1]}"
             for items, what, where in ((events.throttling, "throttling message", ""),
                                        (events.under_voltage, "under-voltage message", ""),
                                        (events.oom_kills, "OOM kill", " outside shootout's cgroups")) if items]
    if not lines:
        lines = [f"kernel log: no throttling, under-voltage or OOM kill {span}"]
    if events.own_oom_kills:
        lines[-1] += (f" ({events.own_oom_kills} OOM kill{'' if events.own_oom_kills == 1 else 's'} in shootout's "
                      "own memory-limited cgroups not counted)")
    return lines
