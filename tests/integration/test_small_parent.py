"""This machine's trials start from the small helper: their max RSS is their own, not the
runner's, and the helper reports their faults, switches and wait for a CPU."""

from __future__ import annotations

import resource

from shootout.base.model import Config
from shootout.measure.smallparent import SmallParent
from shootout.places.host import HostTarget
from shootout.system.emulator import here as emulator_here


def test_a_trial_forked_from_the_small_parent_reports_its_own_max_rss() -> None:
    parent = SmallParent.here()
    assert isinstance(parent, SmallParent), parent
    host = HostTarget(Config(name="host"))
    try:
        direct = host.run(["sleep", "0.1"], timeout=60)
        wrap, token = parent.wrap(60)
        small = SmallParent.result(host.run(["sleep", "0.1"], timeout=60, wrap=wrap), token)
    finally:
        host.close()
    runner_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # forked from this Python process, sleep "peaks" at the runner's own RSS; from the helper, at its own
    assert direct.max_rss_kb > 20_000 and runner_kb > 20_000
    # under qemu-user (the emulated arm64 check) every process's RSS holds the emulator's ~12 MB too
    assert small.max_rss_kb < (10_000 if emulator_here() is None else 20_000) < direct.max_rss_kb
    assert small.max_rss_kb * 3 < min(direct.max_rss_kb, runner_kb)
    assert small.exit_status == 0 and small.stderr == "" and 0.1 <= small.wall_s < 5
    assert small.minor_faults is not None and small.minor_faults > 0
    assert small.run_delay_s is not None and small.voluntary_switches is not None


def test_a_failing_trial_keeps_its_status_and_its_last_line_of_stderr() -> None:
    parent = SmallParent.here()
    assert isinstance(parent, SmallParent), parent
    host = HostTarget(Config(name="host"))
    try:
        wrap, token = parent.wrap(60)
        found = SmallParent.result(host.run(["sh", "-c", "echo broken >&2; exit 3"], timeout=60, wrap=wrap), token)
        wrap, token = parent.wrap(60)
        killed = SmallParent.result(host.run(["sh", "-c", "kill -KILL $$"], timeout=60, wrap=wrap), token)
    finally:
        host.close()
    assert (found.exit_status, found.stderr_tail(1)) == (3, "broken")
    assert killed.exit_status == -9  # killed by a signal: minus the signal, as without the helper
