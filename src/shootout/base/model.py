"""Frozen records that flow through shootout: workloads, configurations, trials, runs. No I/O."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from shootout.base.runfacts import BudgetRefusal, LostWorkload, RunFacts


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str  # a symbol from shootout.base.units.UNITS; the direction comes from there
    description: str = ""


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    category: str  # cpu, crypto, memory, media, compress, build, js, storage, swap, net, vpn, user
    description: str
    metrics: tuple[Metric, ...]
    headline: str  # the metric that represents this workload in the suite geomean
    reproduces: str = ""  # which published experiment it reproduces (its letter in docs/writeups.md)
    # Amounts a trial counts that may be zero (tabs the OOM killer took): in Trial.values beside
    # the metrics, summarised per configuration with an interval, never compared as speed-ups.
    recorded: tuple[Metric, ...] = ()
    # One of `recorded` that decides the headline verdict before any speed-up (shootout.judge.amounts):
    # over the rounds both measured, a configuration with more of it is slower, with less faster.
    guard: str = ""
    # A timed command's headline clock as its file declares it ("cpu" or "wall"); "" leaves the
    # choice to the run, from its trials before the first look (shootout.workloads.cpuclock).
    clock: str = ""
    # How the headline is timed and why that clock answers the workload's question (one
    # sentence, shown by `show --all`; every run keeps its own, so compare can tell them apart)
    timing: str = ""

    def metric(self, name: str) -> Metric:
        for m in (*self.metrics, *self.recorded):
            if m.name == name:
                return m
        raise KeyError(name)


@dataclass(frozen=True)
class UserspaceRef:
    """The Debian release and architecture of a userspace shootout makes (debian:RELEASE:ARCH),
    said by the parser that read them, so that nothing recovers them from a name later."""

    release: str
    arch: str


@dataclass(frozen=True)
class Config:
    """Where and how workloads run: a target, build options, and the machine's state.

    `parts` holds what the configuration sets on the machine, by part name (see
    shootout.parts): e.g. {"settings": {...}, "scratch": {...}}, each value the part's
    JSON-able spec. It is left out of the hash (a dict); compare configurations with ==.
    """

    name: str  # unique within a run, e.g. "host", "host+m32", "debian:bookworm:i386"
    target: str = "host"  # the name of its target kind (shootout.places: host, chroot, ssh, vm, fake)
    label: str = ""
    abi: str | None = None  # compiler ABI for native kernels: None (native), "m32", "mx32"
    cc: str = "cc"
    cflags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    userspace: str | None = None  # chroot target: name of the userspace to run in
    options: tuple[tuple[str, str], ...] = ()  # target-specific settings
    parts: dict[str, Any] = field(default_factory=dict, hash=False)  # machine settings, scratch, ...
    # the Debian userspace it runs in, by release and arch (debian:RELEASE:ARCH, vm:debian:..., or
    # userspace:NAME whose registry records them); None for any other configuration
    userspace_ref: UserspaceRef | None = None

    @property
    def display(self) -> str:
        return self.label or self.name

    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)


@dataclass(frozen=True)
class TrialSpec:
    round: int  # 0 = warm-up round
    position: int  # index within the round's shuffled order
    workload: str
    config: str

    @property
    def warmup(self) -> bool:
        return self.round == 0


@dataclass(frozen=True)
class Trial:
    """One fresh process run of one workload under one configuration."""

    spec: TrialSpec
    values: dict[str, float]  # metric name -> value; empty when the trial failed
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    ctx_switches: int
    exit_status: int
    stderr_tail: str
    started_at: float  # Unix time
    monitor: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    in_force: dict[str, Any] = field(default_factory=dict)  # part name -> machine state read back before the trial
    observed: dict[str, Any] = field(default_factory=dict)  # part name -> what it saw during the trial (counters)

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_status == 0


@dataclass(frozen=True)
class RunSettings:
    """What the user asked for; stored with the run so --resume continues the same run."""

    threshold: float = 0.01
    precision: float = 0.005  # half the threshold, so that "same" stays reachable
    min_rounds: int = 6
    max_rounds: int = 50
    budget_s: float = 600.0
    seed: int = 0
    aa: bool = False
    confidence: float = 0.95
    # True: measured by shootout in interleaved rounds, looked at after every round from
    # min_rounds to max_rounds (paired, sequential intervals). False: values of imported runs
    # whose configurations ran one after another (unpaired, one look).
    interleaved: bool = True
    experiment: str = ""  # the named experiment this run reproduces (shootout.experiments), if any
    partial: bool = False  # measure even when the budget cannot reach the first deciding round (no verdicts then)
    counters: bool = True  # after the rounds, the counters pass that says why (measure/counterpass.py)
    cache_model: str = "host"  # the caches cachegrind models where the machine has no PMU: host, pi4, pi5
    meter: str = ""  # a command that prints watts, for the energy of each trial where nothing else reports it
    repeats: int = 3  # a trial other programs interrupted is measured again up to this often (conditions/repeats.py)
    # this machine's trials on CPUs reserved for them, everything else moved to the rest (system/cpureserve.py);
    # False: `run --no-isolate` (what was reserved is in the run's facts, reserved_cpus)
    isolate: bool = True
    # config name -> price (`run --price`): show and report give performance per price with it
    prices: dict[str, float] = field(default_factory=dict, hash=False)
    price_unit: str = "$/h"
    # configurations on different machines (ssh) measured at the same time (lanes.py); False: one after another
    parallel: bool = True
    size: str = "default"  # a named experiment's: its own ("default") or its write-up's ("writeup"), `run --size`
    # workload -> parameter -> value given with `run --set WORKLOAD.PARAM=VALUE`, over the file's or experiment's
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict, hash=False)
    # no --max-rounds and no [run] max_rounds: the last look is planned once, after the warm-up,
    # from what the budget pays for (measure/roundplan.py); max_rounds is the floor until then
    rounds_by_budget: bool = False
    planned_round_s: float = 0.0  # the warm-up's round time the last look was planned at (0: not yet)
    # workload -> its own last look, planned with the others (roundplan.py): a short workload may
    # take more rounds than a long one; max_rounds is the most of them. Absent: max_rounds.
    last_looks: dict[str, int] = field(default_factory=dict, hash=False)

    def last_look(self, workload: str) -> int:
        """The last round at which `workload` is measured and looked at."""
        return self.last_looks.get(workload, self.max_rounds)

    def own_last_looks(self) -> dict[str, int]:
        """The workloads' last looks where they differ; {} when one last look serves them all."""
        return dict(self.last_looks) if len(set(self.last_looks.values())) > 1 else {}


@dataclass
class Run:
    id: int
    created_at: float
    status: str  # "running" | "complete" | "interrupted" | "failed"
    settings: RunSettings
    configs: list[Config]
    workloads: list[WorkloadSpec]
    params: dict[str, dict[str, Any]]  # workload -> calibrated/fixed parameters (same for every config)
    facts: RunFacts  # this machine's facts and each configuration's
    elapsed_s: float = 0.0
    user_workloads: dict[str, dict[str, Any]] = field(default_factory=dict)  # TOML definitions, for resume
    note: str = ""
    # The runner's records, kept with the run so that show, report and resume know them:
    lost: dict[str, str] = field(default_factory=dict)  # configurations asked for that cannot run here -> why
    lost_workloads: dict[str, LostWorkload] = field(default_factory=dict)  # workloads it stopped measuring
    # the workloads whose calibrated parameters are stored while the run prepares, so that a run
    # killed then calibrates only the others on resume; None: all of them (preparation done)
    calibrated: list[str] | None = None
    budget_refused: BudgetRefusal | None = None  # refused after the warm-up for its budget
    # workload -> the clock its headline is measured by ({"clock": "cpu"|"wall", "cpu_per_wall": ...})
    headline_clocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    # trial attempts other programs interrupted, set aside and measured again (conditions/repeats.py)
    set_aside: list[dict[str, Any]] = field(default_factory=list)
    # the run across boots this run is a block of: {"campaign", "schedule", "block", "configs"[, "boots"]}
    across_boots: dict[str, Any] | None = None
    # workload -> config -> what its counters pass recorded, once and untimed (measure/counterpass.py)
    counters: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    @property
    def baseline(self) -> Config:
        return self.configs[0]


# An A/A run measures one configuration against itself under this suffixed name.
AA_SUFFIX = "~again"


def aa_original(name: str) -> str:
    """The configuration an A/A copy repeats (the name itself for any other configuration)."""
    return name.removesuffix(AA_SUFFIX)


def aa_copy(config: Config) -> Config:
    """The same configuration again, for an A/A run that measures the noise floor."""
    return dataclasses.replace(config, name=f"{config.name}{AA_SUFFIX}", label=f"{config.display} (again)")
