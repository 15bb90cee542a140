"""A run across boots in the store: one run per boot, linked by the facts they carry.

Configurations that want the same kernel share a boot: each block measures all of them,
interleaved in its rounds as any run does (a Pi's 64-bit kernel with the armhf and the arm64
userspace); the boots of different kernels follow the A B B A schedule.

Block 1 is an ordinary run of the kernel configuration that runs now (it calibrates the
work); every later block is a new run with block 1's settings, workloads and calibrated
parameters, started through Runner.resume so it does exactly the same work. Each block's
machine facts hold the boot identity, and its run's across_boots field {campaign id,
schedule, block index, every kernel configuration}; nothing else in the store changes.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config, Run
from shootout.base.paths import data_dir
from shootout.base.runfacts import RunFacts
from shootout.boots.identity import BootIdentity, KernelWant, kernel_want, read_boot
from shootout.boots.schedule import (
    Block,
    block_schedule,
    check_boot,
    matching_config,
    next_block,
    next_step,
)
from shootout.boots.switch import (
    UNIT,
    install_resume_unit,
    next_boot_journal,
    switch_next_boot,
)
from shootout.boots.wholeroot import check_others, check_sides
from shootout.measure.runner import Runner, RunRequest
from shootout.store import Store
from shootout.store.serialize import config_from_dict, config_to_dict
from shootout.system.journal import Journal
from shootout.workloads.contract import Workload

COMPARISON_LABEL = "across boots"


@dataclass(frozen=True)
class Campaign:
    id: str
    schedule: list[str]  # the boot each block measures
    configs: dict[str, Config]
    boots: dict[str, list[str]] | None = None  # boot -> its configurations; None: one boot per configuration

    def members(self, boot: str) -> list[str]:
        return (self.boots or {}).get(boot, [boot])

    @property
    def wants(self) -> dict[str, KernelWant]:
        return {boot: _want(self.configs[self.members(boot)[0]]) for boot in dict.fromkeys(self.schedule)}


@dataclass(frozen=True)
class BlockOutcome:
    run_id: int
    block: int  # 0-based
    campaign: Campaign
    next_index: int | None

    def message(self) -> str:
        done = f"block {self.block + 1} of {len(self.campaign.schedule)} ({self.campaign.schedule[self.block]}) " \
               f"is run {self.run_id}"
        # whole installs resume from the shared data directory: said with the command
        data = str(data_dir()) if any(w.root for w in self.campaign.wants.values()) else None
        return f"{done}; {next_step(self.campaign.schedule, self.next_index, self.campaign.wants, data)}"


def _want(config: Config) -> KernelWant:
    want = kernel_want(config)
    if want is None:
        raise UsageError(f"configuration {config.name} names no kernel; a run across boots compares kernels "
                         "or whole installs", "use kernel:RELEASE[:MACHINE] or boot:ROOT, or set option kernel = "
                         "RELEASE in its [[config]]")
    return want


def campaign_of(run: Run) -> Campaign | None:
    meta = run.across_boots
    if not meta:
        return None
    configs = [config_from_dict(c) for c in meta["configs"]]
    return Campaign(meta["campaign"], list(meta["schedule"]), {c.name: c for c in configs}, meta.get("boots"))


def blocks_of(store: Store, campaign: Campaign) -> list[Block]:
    found = []
    for run in store.list_runs():
        meta = run.across_boots or {}
        if meta.get("campaign") == campaign.id:
            found.append(Block(meta["block"], campaign.schedule[meta["block"]],
                               BootIdentity.from_dict(run.facts.machine["boot"]), run.id, run.status == "complete"))
    return sorted(found, key=lambda b: (b.index, b.run_id))


def _block(campaign: Campaign, block: int) -> dict[str, Any]:
    """A block's across_boots record."""
    return {"campaign": campaign.id, "schedule": campaign.schedule, "block": block,
            "configs": [config_to_dict(c) for c in campaign.configs.values()],
            **({"boots": campaign.boots} if campaign.boots else {})}


def _facts(machine: dict[str, Any], boot: BootIdentity) -> dict[str, Any]:
    return {**machine, "boot": boot.as_dict()}


def shared_boots(configs: Sequence[Config]) -> dict[str, list[str]]:
    """Boot -> the configurations that want its kernel, in order. A boot of one configuration is
    named after it, a shared one after its kernel ("kernel kernel8.img (aarch64)")."""
    by_want: dict[KernelWant, list[str]] = {}
    for config in configs:
        by_want.setdefault(_want(config), []).append(config.name)
    return {(names[0] if len(names) == 1 else f"kernel {want.describe()}"): names for want, names in by_want.items()}


def kernels(configs: Sequence[Config]) -> int:
    """How many different kernels the configurations want (0 when one of them names none)."""
    wants = [kernel_want(c) for c in configs]
    return 0 if None in wants else len(set(wants))


def plan(configs: Sequence[Config], boots: int, root: Path = Path("/"), data: Path | None = None) -> Campaign:
    """Check everything before any waiting: kernels named, schedule valid, running kernel among them
    (whole installs: every root, and what each needs to continue the run, boots/wholeroot.py).
    The schedule starts with the kernel that runs now."""
    members = shared_boots(configs)
    by_name = {c.name: c for c in configs}
    wants = {boot: _want(by_name[names[0]]) for boot, names in members.items()}
    running = read_boot(root)
    whole = any(w.root for w in wants.values())
    if whole:
        check_sides(wants, root)
    first = matching_config(list(wants), wants, running)
    if whole:
        check_others(wants, running, root, data)
    names = [first] + [boot for boot in members if boot != first]
    shared = members if any(len(m) > 1 for m in members.values()) else None
    return Campaign(secrets.token_hex(6), block_schedule(names, boots), by_name, shared)


def block_configs(campaign: Campaign, index: int) -> list[Config]:
    """The configurations block `index` measures, interleaved in its rounds."""
    return [campaign.configs[name] for name in campaign.members(campaign.schedule[index])]


def start(runner: Runner, request: RunRequest, campaign: Campaign, machine: dict[str, Any],
          root: Path = Path("/")) -> BlockOutcome:
    """Measure block 1 under the running kernel."""
    block = replace(request, configs=block_configs(campaign, 0))
    run_id = runner.start(block, facts=_facts(machine, read_boot(root)), across_boots=_block(campaign, 0))
    runner.store.update_run(run_id, note=f"{COMPARISON_LABEL}: block 1 of {len(campaign.schedule)}")
    return BlockOutcome(run_id, 0, campaign, next_block(campaign.schedule, blocks_of(runner.store, campaign)))


@dataclass(frozen=True)
class Resumption:
    """What `--resume` does for a run across boots, decided (and checked) before any waiting."""

    campaign: Campaign
    boot: BootIdentity
    index: int
    unfinished_run: int | None  # this same boot's block, killed mid-way: continue that run


def prepare_resume(store: Store, stored: Run, root: Path = Path("/")) -> Resumption:
    """The next block after a reboot, or the rest of a block this same boot left unfinished;
    a wrong kernel or a boot that measured a block already is refused here in one line."""
    campaign = campaign_of(stored)
    assert campaign is not None
    boot = read_boot(root)
    blocks = blocks_of(store, campaign)
    done = {b.index for b in blocks if b.complete}
    unfinished = next((b for b in blocks if not b.complete and b.boot.boot_id == boot.boot_id
                       and b.index not in done), None)
    if unfinished is not None:  # killed mid-block, same boot: its trials stay valid
        return Resumption(campaign, boot, unfinished.index, unfinished.run_id)
    index = next_block(campaign.schedule, blocks)
    if index is None:
        raise UsageError(f"all {len(campaign.schedule)} blocks of this run across boots are measured",
                         "compare them: " + compare_hint(store, campaign))
    check_boot(campaign.schedule, blocks, index, campaign.wants[campaign.schedule[index]], boot)
    return Resumption(campaign, boot, index, None)


def resume(runner: Runner, step: Resumption, workloads: Callable[[Run], Sequence[Workload]],
           machine: dict[str, Any]) -> BlockOutcome:
    store, campaign = runner.store, step.campaign
    if step.unfinished_run is not None:
        run = store.get_run(step.unfinished_run)
    else:
        first = store.get_run(next(b.run_id for b in blocks_of(store, campaign) if b.index == 0))
        run = Run(id=0, created_at=time.time(), status="running", settings=first.settings,
                  configs=block_configs(campaign, step.index), workloads=list(first.workloads),
                  params=first.params, facts=RunFacts(machine=_facts(machine, step.boot)),
                  user_workloads=first.user_workloads, across_boots=_block(campaign, step.index),
                  note=f"{COMPARISON_LABEL}: block {step.index + 1} of {len(campaign.schedule)}")
        run.id = store.create_run(run)
    run_id = runner.resume(run, workloads(run))
    return BlockOutcome(run_id, step.index, campaign, next_block(campaign.schedule, blocks_of(store, campaign)))


def groups(store: Store, campaign: Campaign) -> dict[str, list[int]]:
    """Configuration -> run ids of its complete blocks: the two sides of the between-run comparison."""
    out: dict[str, list[int]] = {name: [] for boot in dict.fromkeys(campaign.schedule) for name in campaign.members(boot)}
    for block in blocks_of(store, campaign):
        if block.complete:
            for name in campaign.members(block.config):
                out[name].append(block.run_id)
    return out


def compare_hint(store: Store, campaign: Campaign) -> str:
    if campaign.boots:  # configurations that shared boots: every block, pooled by configuration
        runs = sorted({r for ids in groups(store, campaign).values() for r in ids})
        return "shootout compare " + " ".join(map(str, runs)) + " --by-label"
    sides = [" ".join(str(r) for r in runs) for runs in groups(store, campaign).values()]
    return "shootout compare " + " vs ".join(sides)


def after_block(outcome: BlockOutcome, *, next_kernel: bool, resume_at_boot: bool, command: Sequence[str],
                environment: Mapping[str, str] | None = None, root: Path = Path("/"),
                journal: Journal | None = None) -> list[str]:
    """The opt-in steps for the next boot, each reported in one line with its undo."""
    if outcome.next_index is None:
        return []
    config = outcome.campaign.schedule[outcome.next_index]
    want = outcome.campaign.wants[config]
    if resume_at_boot and want.root is not None and not read_boot(root).is_root(want.root):
        # the unit would be on this install's /etc, which shootout never writes on the other
        raise UsageError(f"--resume-at-boot installs its unit on this install, but block {outcome.next_index + 1} "
                         f"boots the install on {want.root}", "run shootout run --resume last there by hand")
    lines = []
    if next_kernel or resume_at_boot:
        journal = journal or next_boot_journal()
    if next_kernel:
        assert journal is not None
        lines.append(switch_next_boot(want, config, journal, root))
    if resume_at_boot:
        undo = install_resume_unit(command, environment, root, journal)
        lines.append(f"installed {UNIT}: the next boot measures block {outcome.next_index + 1} by itself "
                     f"(undo: {undo}, or shootout doctor)")
    return lines
