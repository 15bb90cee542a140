"""A run across boots end to end, through the fake target and faked boots (boot id, release).

Two kernels over four boots (A B B A), resumed between them as a user would after each
reboot; resumes under the wrong kernel or in the same boot are refused in one line.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Sequence
from pathlib import Path

import pytest

from shootout.base.errors import TargetError, UsageError
from shootout.base.model import Config, Run, RunSettings
from shootout.judge.crossrun import compare_members, members_by_side
from shootout.measure import bootcampaign as campaign
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.request.request import workloads_of
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

K64, K32 = "6.1.0-28-amd64", "6.1.0-28-686-pae"
BENCH = {"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"}


_calls = itertools.count()


def script(argv: Sequence[str], config: str, n: int) -> str:
    """The 64-bit kernel is 5% faster; 1% noise, fresh in every trial of every boot."""
    rng = random.Random(f"{config}:{next(_calls)}")
    return f"throughput: {1000.0 * (1.05 if config == 'k64' else 1.0) * math.exp(rng.gauss(0, 0.01)):.4f}\n"


def next_block(runner: Runner, root: Path) -> campaign.BlockOutcome:
    """What `shootout run --resume last` does after a (faked) reboot."""
    step = campaign.prepare_resume(runner.store, runner.store.get_run("last"), root)
    return campaign.resume(runner, step, rebuild, {})


def rebuild(run: Run) -> list:
    return workloads_of([w.name for w in run.workloads], run.user_workloads)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Runner, RunRequest]:
    SCRIPTS["boots"] = script
    configs = [Config(name=name, target="fake", options=(("script", "boots"), ("kernel", release)))
               for name, release in (("k64", K64), ("k32", K32))]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    request = RunRequest(configs, [CommandWorkload(BENCH)], RunSettings(seed=5, min_rounds=6, max_rounds=6),
                         user_workloads={"bench": BENCH})
    return Runner(store, Journal(tmp_path)), request


def test_two_kernels_over_four_faked_boots(setup: tuple[Runner, RunRequest], fake_boot) -> None:
    runner, request = setup
    store = runner.store
    lines = []
    # Boot 1 runs the 32-bit kernel: the schedule starts with it.
    boot1 = fake_boot("boot-1", K32)
    first = campaign.start(runner, request, campaign.plan(request.configs, 4, boot1), {"hostname": "pi"}, boot1)
    assert first.campaign.schedule == ["k32", "k64", "k64", "k32"]
    lines.append(first.message())
    assert lines[-1].endswith("next: block 2 of 4, k64: boot kernel 6.1.0-28-amd64, then run: shootout run --resume last")

    # The user forgot to switch kernels: refused, nothing stored.
    runs_before = len(store.list_runs())
    with pytest.raises(TargetError, match=r"this boot runs kernel 6.1.0-28-686-pae .* block 2 of 4 is scheduled for k64"):
        next_block(runner, fake_boot("boot-2a", K32))
    assert len(store.list_runs()) == runs_before

    second = next_block(runner, fake_boot("boot-2", K64))
    lines.append(second.message())
    assert "reboot (same kernel, a fresh boot)" in lines[-1]
    # Not rebooted: block 3 is the same kernel but must be a fresh boot.
    with pytest.raises(TargetError, match="this boot \\(boot-2\\) already measured block 2; block 3 of 4 needs a fresh boot"):
        next_block(runner, fake_boot("boot-2", K64))
    third = next_block(runner, fake_boot("boot-3", K64))
    lines.append(third.message())
    fourth = next_block(runner, fake_boot("boot-4", K32))
    lines.append(fourth.message())
    assert lines[-1].endswith("all 4 blocks are measured")
    with pytest.raises(UsageError, match="all 4 blocks of this run across boots are measured"):
        next_block(runner, fake_boot("boot-5", K32))

    sides = campaign.groups(store, first.campaign)
    assert sides == {"k32": [first.run_id, fourth.run_id], "k64": [second.run_id, third.run_id]}
    runs = [store.get_run(r) for r in (first.run_id, second.run_id, third.run_id, fourth.run_id)]
    assert all(r.status == "complete" and len(r.configs) == 1 for r in runs)
    assert [r.configs[0].name for r in runs] == ["k32", "k64", "k64", "k32"]
    assert len({r.facts.machine["boot"]["boot_id"] for r in runs}) == 4
    assert all(r.params == runs[0].params for r in runs)  # the same work in every block
    means = {side: statistics.mean(statistics.median(t.values["value"] for t in store.trials(r))
                                   for r in ids) for side, ids in sides.items()}
    assert means["k64"] / means["k32"] == pytest.approx(1.05, rel=0.01)
    # `shootout compare` of the two sides: between-run statistics, labelled across boots
    analysis = compare_members(members_by_side([[(store.get_run(r), store.trials(r)) for r in ids]
                                                for ids in sides.values()]))
    head = next(c for c in analysis.comparisons if c.headline)
    assert analysis.notes[0].startswith("across boots: ") and head.estimate is not None
    assert head.estimate.n == 4 and head.estimate.method == "welch on run means"  # 2 boots a side, not trials
    assert head.estimate.low < 1.05 < head.estimate.high and head.estimate.low < head.estimate.high
    print("\n".join(lines + [campaign.compare_hint(store, first.campaign), f"block medians per side: {means}",
                     f"{analysis.notes[0]}", f"k64 vs k32: {head.estimate}"]))


def test_a_block_killed_mid_way_continues_in_the_same_boot(setup: tuple[Runner, RunRequest], fake_boot) -> None:
    runner, request = setup
    calls = {"n": 0}

    def dies_once(argv: Sequence[str], config: str, n: int) -> str:
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt  # like Ctrl-C in the middle of block 1
        return script(argv, config, n)

    SCRIPTS["boots"] = dies_once
    boot = fake_boot("boot-1", K64)
    with pytest.raises(KeyboardInterrupt):
        campaign.start(runner, request, campaign.plan(request.configs, 4, boot), {}, boot)
    killed = runner.store.get_run("last")
    assert killed.status == "interrupted"
    again = next_block(runner, boot)
    assert again.run_id == killed.id and again.block == 0
    assert runner.store.get_run(killed.id).status == "complete"
    # Had the machine rebooted instead, the block starts over in a new run of its own.
    SCRIPTS["boots"] = dies_once
    calls["n"] = 0
    with pytest.raises(KeyboardInterrupt):
        next_block(runner, fake_boot("boot-2", K32))
    cut = runner.store.get_run("last")
    fresh = next_block(runner, fake_boot("boot-3", K32))
    assert fresh.run_id != cut.id and fresh.block == 1 and runner.store.get_run(cut.id).status == "interrupted"
