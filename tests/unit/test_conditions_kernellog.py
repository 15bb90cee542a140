"""Kernel log records sorted into throttling, under-voltage and OOM kills, over recorded logs:
an OOM kill in shootout's own trial cgroup is not an alarm for a later run."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.conditions import preflight
from shootout.conditions.kernellog import describe, sort_events
from shootout.conditions.throttling import parse_kmsg
from shootout.system.cgroups import is_ours, unique_name

LOGS = Path(__file__).parents[1] / "fixtures" / "kernel-log"


def recorded(name: str) -> list[tuple[float, str]]:
    return parse_kmsg((LOGS / name).read_text().splitlines())


def after_many_tabs_runs(own_kills: int) -> list[tuple[float, str]]:
    """The recorded own-cgroup episode as often as a tabs run's trials hit their limit
    (three matching messages each: the 295 the issue saw), then other things the log holds."""
    own = recorded("oom-in-shootout-trial.kmsg")
    log = [(ts + i * 10.0, msg) for i in range(own_kills) for ts, msg in own]
    end = log[-1][0]
    return log + [
        (end + 1, "CPU0: Core temperature above threshold, cpu clock throttled (total events = 1)"),
        (end + 2, "hwmon hwmon1: Undervoltage detected!"),
        (end + 3, "hwmon hwmon1: Voltage normalised"),
    ] + [(end + 4 + ts - recorded("oom-in-other-cgroup.kmsg")[0][0], msg)
         for ts, msg in recorded("oom-in-other-cgroup.kmsg")]


def test_own_oom_kills_are_counted_apart_from_everything_else() -> None:
    events = sort_events(after_many_tabs_runs(98))
    assert events.own_oom_kills == 98
    assert events.oom_kills == ["Memory cgroup out of memory: Killed process 19546 (python3) in /batch-job"]
    assert events.throttling == ["CPU0: Core temperature above threshold, cpu clock throttled (total events = 1)"]
    assert events.under_voltage == ["hwmon hwmon1: Undervoltage detected!", "hwmon hwmon1: Voltage normalised"]


def test_an_oom_kill_elsewhere_is_one_kill_not_its_messages() -> None:
    events = sort_events(recorded("oom-in-other-cgroup.kmsg"))
    assert (len(events.oom_kills), events.own_oom_kills, events.throttling, events.under_voltage) == (1, 0, [], [])


def test_only_records_since_the_given_time_count() -> None:
    log = after_many_tabs_runs(3)
    events = sort_events(log, since=log[-1][0] - 0.5)  # the last record only: the other cgroup's kill
    assert (events.own_oom_kills, len(events.oom_kills), events.throttling) == (0, 1, [])


def test_without_an_oom_kill_line_the_statistics_header_names_the_cgroup() -> None:
    # kernels before 4.19 print no "oom-kill:" line
    log = [(t, m) for t, m in recorded("oom-in-shootout-trial.kmsg") if not m.startswith("oom-kill:")]
    assert sort_events(log).own_oom_kills == 1


def test_preflight_lines_after_runs_of_shootout_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight, "read_kernel_log", lambda: after_many_tabs_runs(98)[:80 * 98])
    lines: list[str] = []
    cond: dict[str, object] = {}
    preflight._kernel_log(lines, cond)
    assert lines == ["kernel log: no throttling, under-voltage or OOM kill since boot "
                     "(98 OOM kills in shootout's own memory-limited cgroups not counted)"]
    assert cond["kernel_events"] == {"throttling": [], "under_voltage": [], "oom_kills": [], "own_oom_kills": 98}


def test_preflight_lines_keep_the_kinds_apart() -> None:
    lines = describe(sort_events(after_many_tabs_runs(2)))
    assert lines == [
        "kernel log: 1 throttling message since boot; latest: CPU0: Core temperature above threshold, "
        "cpu clock throttled (total events = 1)",
        "kernel log: 2 under-voltage messages since boot; latest: hwmon hwmon1: Voltage normalised",
        "kernel log: 1 OOM kill outside shootout's cgroups since boot; latest: Memory cgroup out of memory: "
        "Killed process 19546 (python3) in /batch-job (2 OOM kills in shootout's own memory-limited cgroups "
        "not counted)",
    ]


@pytest.mark.parametrize("path, ours", [
    (f"/{unique_name('shootout')}/trial-4", True),
    (f"/{unique_name('shootout-throttle')}", True),
    ("/shootout-19110-f92aa1", True),
    ("/batch-job", False),
    ("/", False),
    ("/system.slice/shootout-backup.service", False),
], ids=["own-trial", "own-throttle", "another-run", "batch-job", "root", "a-service"])  # names alike in every process
def test_which_cgroups_are_shootouts(path: str, ours: bool) -> None:
    assert is_ours(path) is ours


def test_several_kills_outside_are_counted_in_the_plural_of_the_noun() -> None:
    events = sort_events(after_many_tabs_runs(2))
    events.oom_kills.append(events.oom_kills[-1])
    (line,) = [x for x in describe(events) if "OOM kill" in x and "latest" in x]
    assert line.startswith("kernel log: 2 OOM kills outside shootout's cgroups since boot; ")


def rate_limited(kills: int, every_s: float = 0.2) -> list[tuple[float, str]]:
    """A memory-limited run whose trials were killed `kills` times, one every `every_s`: the
    kernel prints an episode's header (statistics, oom-kill: line) for 10 kills in 5 s (its
    rate limit, a window from the first kill after the last one ended), then the "Killed
    process" line alone."""
    own = recorded("oom-in-shootout-trial.kmsg")
    start = own[0][0]
    log: list[tuple[float, str]] = []
    window, shown = float("-inf"), 0
    for i in range(kills):
        at = every_s * i
        if at - window > 5.0:
            window, shown = at, 0
        shown += 1
        if shown <= 10:
            log += [(ts - start + at, msg.replace("19112", str(20000 + i))) for ts, msg in own]
        else:
            log.append((at, (f"Memory cgroup out of memory: Killed process {20000 + i} (python) total-vm:217320kB, "
                             "anon-rss:48896kB, file-rss:5776kB, shmem-rss:0kB, UID:0 pgtables:156kB oom_score_adj:0")))
    return log


def test_kills_the_rate_limit_left_unnamed_are_counted_with_the_cgroup_named_before() -> None:
    log = rate_limited(96)
    assert sum("Killed process" in msg for _, msg in log) == 96 and sum("oom-kill:" in msg for _, msg in log) == 40
    events = sort_events(log)
    assert (events.own_oom_kills, events.oom_kills) == (96, [])
    # the whole machine's OOM, or a memory cgroup's long after the last named one: not taken for shootout's
    late = log + [(19.5, "Out of memory: Killed process 4242 (java)"),
                  (600.0, "Memory cgroup out of memory: Killed process 4343 (node)")]
    events = sort_events(late)
    assert events.own_oom_kills == 96 and events.oom_kills == ["Out of memory: Killed process 4242 (java)",
                                                               "Memory cgroup out of memory: Killed process 4343 (node)"]
