"""kernel-modes' shape across faked Raspberry Pi boots, through the fake target: three kernel
configurations of which two share the 64-bit kernel's boots. Each shared block measures both,
interleaved; a resume in the same boot, under the wrong kernel or after the last block is refused;
a block killed mid-way continues in the same run; nothing is measured twice. No Pi is rebooted:
each boot is a fake tree (boot id, release, uname -m)."""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from shootout.base.errors import TargetError, UsageError
from shootout.base.model import Config, Run, RunSettings
from shootout.boots.identity import kernel_config
from shootout.judge.crossrun import compare_members, members_by_label
from shootout.measure import bootcampaign as campaign
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.request.request import workloads_of
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload

V7L, V8 = "6.6.51+rpt-rpi-v7l", "6.6.51+rpt-rpi-v8"
K64 = "kernel kernel8.img (aarch64)"
BENCH = {"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"}
SPEED = {"k32-u32": 1.0, "k64-u32": 1.02, "k64-u64": 1.10}
_calls = itertools.count()


def script(argv: Sequence[str], config: str, n: int) -> str:
    rng = random.Random(f"{config}:{next(_calls)}")
    return f"throughput: {1000.0 * SPEED[config] * math.exp(rng.gauss(0, 0.01)):.4f}\n"


def side(name: str, image: str) -> Config:
    """kernel:IMAGE with the fake target standing in for the userspace its trials run in."""
    inside = Config(name=name, target="fake", options=(("script", "pi"),))
    return dataclasses.replace(kernel_config(f"kernel:{image}/fake", inside), name=name, label=name)


def rebuild(run: Run) -> list:
    return workloads_of([w.name for w in run.workloads], run.user_workloads)


def next_block(runner: Runner, root: Path) -> campaign.BlockOutcome:
    """What `shootout run --resume last` does after a (faked) reboot."""
    step = campaign.prepare_resume(runner.store, runner.store.get_run("last"), root)
    return campaign.resume(runner, step, rebuild, {})


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Runner, RunRequest]:
    SCRIPTS["pi"] = script
    configs = [side("k32-u32", "kernel7l.img"), side("k64-u32", "kernel8.img"), side("k64-u64", "kernel8.img")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    request = RunRequest(configs, [CommandWorkload(BENCH)], RunSettings(seed=3, min_rounds=6, max_rounds=6),
                         user_workloads={"bench": BENCH})
    return Runner(store, Journal(tmp_path)), request


def test_shared_boots_measure_each_side_once_per_block(setup: tuple[Runner, RunRequest], fake_boot) -> None:
    runner, request = setup
    store = runner.store
    boot1 = fake_boot("boot-1", V8, "aarch64")
    first = campaign.start(runner, request, campaign.plan(request.configs, 4, boot1), {}, boot1)
    assert first.campaign.schedule == [K64, "k32-u32", "k32-u32", K64]
    assert first.campaign.boots == {"k32-u32": ["k32-u32"], K64: ["k64-u32", "k64-u64"]}
    assert first.message().endswith("next: block 2 of 4, k32-u32: boot kernel kernel7l.img (armv7l), "
                                    "then run: shootout run --resume last")
    runs = len(store.list_runs())
    with pytest.raises(TargetError, match="block 2 of 4 is scheduled for k32-u32"):
        next_block(runner, boot1)
    with pytest.raises(TargetError, match="this boot runs kernel 6.6.51\\+rpt-rpi-v8 .* scheduled for k32-u32"):
        next_block(runner, fake_boot("boot-2a", V8, "aarch64"))  # the tryboot did not happen
    assert len(store.list_runs()) == runs
    second = next_block(runner, fake_boot("boot-2", V7L, "armv7l"))

    # Block 3, killed mid-way, then resumed in the same boot: the same run goes on.
    calls = {"n": 0}

    def dies_once(argv: Sequence[str], config: str, n: int) -> str:
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return script(argv, config, n)

    SCRIPTS["pi"] = dies_once
    boot3 = fake_boot("boot-3", V7L, "armv7l")
    with pytest.raises(KeyboardInterrupt):
        next_block(runner, boot3)
    killed = store.get_run("last")
    third = next_block(runner, boot3)
    assert third.run_id == killed.id and store.get_run(killed.id).status == "complete"
    SCRIPTS["pi"] = script
    fourth = next_block(runner, fake_boot("boot-4", V8, "aarch64"))
    assert fourth.next_index is None
    with pytest.raises(UsageError, match="all 4 blocks of this run across boots are measured"):
        next_block(runner, fake_boot("boot-5", V8, "aarch64"))

    ids = [first.run_id, second.run_id, third.run_id, fourth.run_id]
    assert len(set(ids)) == 4 and len(store.list_runs()) == 4
    blocks = [store.get_run(r) for r in ids]
    assert [[c.name for c in r.configs] for r in blocks] == [["k64-u32", "k64-u64"], ["k32-u32"], ["k32-u32"],
                                                              ["k64-u32", "k64-u64"]]
    for run in blocks:  # every side once per round and workload: nothing twice, nothing missing
        measured = collections.Counter((t.spec.round, t.spec.config) for t in store.trials(run.id) if not t.spec.warmup)
        assert set(measured.values()) == {1} and len(measured) == 6 * len(run.configs)
    shared = [t.spec for t in store.trials(first.run_id) if not t.spec.warmup]
    assert {t.round for t in shared if t.config == "k64-u32"} == {t.round for t in shared if t.config == "k64-u64"}
    assert campaign.groups(store, first.campaign) == {"k32-u32": [second.run_id, third.run_id],
                                                      "k64-u32": [first.run_id, fourth.run_id],
                                                      "k64-u64": [first.run_id, fourth.run_id]}
    hint = campaign.compare_hint(store, first.campaign)
    assert hint == f"shootout compare {' '.join(map(str, sorted(ids)))} --by-label"
    # The comparison the hint asks for: the userspaces paired within the shared boots, the kernels between boots.
    analysis = compare_members(members_by_label(blocks, [store.trials(r.id) for r in blocks]))
    heads = {c.config: c for c in analysis.comparisons if c.headline}
    assert heads and all(c.estimate is not None for c in heads.values())
    print(hint, {name: (c.baseline, c.estimate) for name, c in heads.items()})
