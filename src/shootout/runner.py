"""Execute a run: prepare, calibrate, warm up, then interleaved rounds until decided.

The runner never prints; it emits events (see events.py) that the CLI turns into a
progress display. Every trial is committed to the store the moment it ends, so a killed
run loses at most the trial in flight and `resume` continues exactly where it stopped.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from shootout import cpuclock
from shootout import events as ev
from shootout.analysis import BUDGET_REFUSED, is_emulated, metric_log_ratios, run_design
from shootout.arm import board
from shootout.conditions.monitor import Monitor, TrialWindow, others_during, wait_quiet
from shootout.conditions.repeats import LIMIT_CPUS, QUIET_WAIT_S, Repeats, record
from shootout.conditions.throttling import kernel_events_since
from shootout.errors import ShootoutError, UsageError, WorkloadError
from shootout.groups import check_architectures, grouped, machine_arch
from shootout.lanes import LOCAL, lanes_of, run_round
from shootout.lost import LOST
from shootout.model import Config, Run, RunSettings, Trial, TrialSpec, aa_original
from shootout.parts import RunParts, sized
from shootout.plan import round_order
from shootout.stats import decided
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.system.scratch import Scratches
from shootout.system.tree import run_prefix
from shootout.targets.base import Target, layout_padding
from shootout.targets.factory import make_target
from shootout.userspace.abi import tool_elf, verify_abi
from shootout.userspace.apt import common_versions
from shootout.workloads.base import Context, Prepared, Workload
from shootout.workloads.packages import workload_packages
from shootout.workloads.sizes import smallest_side

TargetFactory = Callable[[Config, Journal], Target]
_ROUND_OVERHEAD = 1.1  # a round's time beyond its trials' wall time (clock check, commits)
_PAUSED = 2.0  # a warm-up spanning more than twice its trials' time was interrupted and resumed
# Machine fact kept while a run prepares: the workloads whose calibrated parameters are stored,
# so that a run killed while preparing resumes by calibrating the others. Absent: all of them
# (the preparation finished, a run stored before this fact, or a block of a run across boots).
CALIBRATED = "calibrated_workloads"


@dataclass
class RunRequest:
    configs: list[Config]
    workloads: list[Workload]
    settings: RunSettings
    user_workloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # overrides of default params
    lost: dict[str, str] = field(default_factory=dict)  # configurations asked for that cannot run here: why


class Interrupted(KeyboardInterrupt):
    """Raised by a SIGTERM/SIGHUP handler: handled like Ctrl-C (run marked interrupted, journal undone)."""


@dataclass
class _Live:
    run: Run
    workloads: dict[str, Workload]
    targets: dict[str, Target]
    prepared: dict[tuple[str, str], Prepared]
    done: set[tuple[int, str, str]]
    trials: list[Trial]
    failed: set[str] = field(default_factory=set)
    errors: dict[str, ShootoutError] = field(default_factory=dict)  # why each failed workload failed
    fresh: bool = False  # started by this session (not resumed): dropped if it fails before measuring
    contexts: dict[tuple[str, str], Context] = field(default_factory=dict)  # (workload, config)
    parts: RunParts | None = None  # settings, scratch, ...: applied before every trial
    scratches: Scratches | None = None  # the scratch areas' owners, handed to targets and parts
    session_start: float = field(default_factory=time.monotonic)
    elapsed_before: float = 0.0
    trial_seconds: list[float] = field(default_factory=list)
    repeats: Repeats = field(init=False)  # the run's count of interrupted attempts
    # machines measured in parallel (lanes.py): one lane records at a time; after a lane's
    # failure or an interrupt nothing more is recorded
    lock: threading.RLock = field(default_factory=threading.RLock)
    abort: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.repeats = Repeats(self.run.settings.repeats)

    def elapsed(self) -> float:
        return self.elapsed_before + time.monotonic() - self.session_start


def provide_alike(targets: Sequence[Target], workload: Workload) -> list[str]:
    """What the workload needs, installed where missing (a userspace) at the newest version
    every side is offered, so that the sides run the same program; returns apt's warnings.
    A version that still differs shows in Prepared.versions: a confounder."""
    wanted = [workload.required_packages(t) for t in targets]
    # every side's versions of all the workload's packages: a side that has them counts too
    offered = [t.offers(workload.debian_packages(), workload.components) for t in targets]
    versions = common_versions([o for o, _ in offered])
    for target, packages in zip(targets, wanted):
        target.provide(packages, workload.components, versions)
    return [line for _, warnings in offered for line in warnings]


def verify_binaries(config: Config, target: Target, workload: Workload, prepared: Prepared) -> None:
    """Record the ELF identity of every binary a workload runs and check it against the label:
    a '32-bit' configuration that ran a 64-bit binary is an error, not a result."""
    elves = {tool.command: tool_elf(target, tool.command) for tool in workload.tools}
    # External tools are the userspace's own: a compiler ABI option (host+m32) applies
    # only to the native kernels built for it.
    userspace_abi = dataclasses.replace(config, abi=None)
    for elf in elves.values():
        verify_abi(userspace_abi, elf)
    if "binary" in prepared.facts:
        elves["native kernel"] = prepared.facts["binary"]
        verify_abi(config, prepared.facts["binary"])
    prepared.facts["elf"] = {tool: {k: v for k, v in elf.items() if k != "path"} for tool, elf in elves.items() if elf}


def _failed(trial: Trial) -> WorkloadError:
    return WorkloadError(f"{trial.spec.workload} failed on {trial.spec.config}: {trial.error}")


def _round_seconds(trials: list[Trial]) -> float:
    """How long a round of these trials takes: the span they ran in (trials plus what the
    runner does between them), or their summed wall time when the span holds a pause."""
    work = sum(t.wall_s for t in trials)
    span = max(t.started_at + t.wall_s for t in trials) - min(t.started_at for t in trials)
    return span if work <= span <= _PAUSED * work else work * _ROUND_OVERHEAD


def _own_budget(name: str) -> str:
    """A named experiment's own budget, for the refusal's hint ('' for any other run)."""
    if not name:
        return ""
    from shootout.experiments.limits import own_budget  # the experiments import the workloads, not the runner

    return own_budget(name)


class Runner:
    def __init__(
        self,
        store: Store,
        journal: Journal,
        on_event: Callable[[ev.Event], None] = lambda e: None,
        target_factory: TargetFactory = make_target,
        monitor: Monitor | None = None,
        clock: Callable[[], float | None] | None = None,
    ) -> None:
        self.store = store
        self.journal = journal
        self.emit = on_event
        self.target_factory = target_factory
        self.monitor = monitor  # tags every trial with what it saw (clock, temperature, steal)
        self.clock = clock  # measures the effective MHz at the start of every round

    # -- entry points --------------------------------------------------------------
    def start(self, request: RunRequest, facts: dict[str, Any] | None = None) -> int:
        if not request.configs:
            raise UsageError("no usable configuration left", "run `shootout info` to see why each was skipped")
        if not request.workloads:
            raise UsageError("no workload selected", "list them with: shootout workloads")
        # The overrides; the defaults come from the baseline target's facts once it is open.
        params = {w.spec.name: dict(request.params.get(w.spec.name, {})) for w in request.workloads}
        run = Run(
            id=0, created_at=time.time(), status="running", settings=request.settings,
            configs=list(request.configs), workloads=[w.spec for w in request.workloads],
            params=params, facts={"machine": facts or {}}, user_workloads=request.user_workloads,
        )
        if request.lost:  # shown with the run: the comparison the user asked for is missing a side
            run.facts["machine"] = {**run.facts["machine"], LOST: dict(request.lost)}
        run.facts["machine"] = {**run.facts["machine"], CALIBRATED: []}
        run.id = self.store.create_run(run)
        self.emit(ev.RunStarted(run.id, [c.name for c in run.configs], [w.spec.name for w in request.workloads]))
        live = _Live(run, {w.spec.name: w for w in request.workloads}, {}, {}, set(), [], fresh=True)
        return self._execute(live, calibrated=set())

    def resume(self, run: Run, workloads: Iterable[Workload]) -> int:
        if run.status == "complete":
            raise UsageError(f"run {run.id} is already complete", "start a new run with: shootout run")
        trials = self.store.trials(run.id, include_warmup=True)
        live = _Live(run, {w.spec.name: w for w in workloads}, {}, {},
                     {(t.spec.round, t.spec.workload, t.spec.config) for t in trials}, trials,
                     elapsed_before=run.elapsed_s)
        live.errors = {t.spec.workload: _failed(t) for t in trials if not t.ok}
        live.failed = set(live.errors)
        self.store.update_run(run.id, status="running")
        self.emit(ev.RunStarted(run.id, [c.name for c in run.configs], list(live.workloads), resumed=len(trials)))
        stored = run.facts.get("machine", {}).get(CALIBRATED)
        return self._execute(live, calibrated=set(live.workloads if stored is None else stored))

    # -- the run ---------------------------------------------------------------------
    def _execute(self, live: _Live, calibrated: set[str]) -> int:
        run = live.run
        status = "failed"
        # after a kill, doctor ends what the run's commands left running (a trial's browser)
        commands = self.journal.record("the processes of this run's commands", {"end_marked": run_prefix()})
        try:
            self._open_targets(live)
            live.parts = RunParts(run.configs, self.journal, live.scratches)
            self._prepare(live, calibrated)
            # The budget is the measuring's (--help says so): building an image, booting a VM
            # or installing a browser before the first trial does not spend it.
            live.session_start = time.monotonic()
            self._rounds(live)
            if not self._active(live):
                raise self._nothing_measured(live)
            if not any(t.ok and t.spec.round > 0 for t in live.trials):
                raise UsageError(f"no round was measured: the budget of {run.settings.budget_s:.0f} s was spent "
                                 "by the warm-up round", "run again with a larger --budget")
            status = "complete"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            for name in list(live.workloads):
                self._cleanup(live, name)
            self._record_parts(live)
            for name, target in live.targets.items():  # a remote machine's own conditions
                if samples := target.monitor_samples():
                    run.facts.setdefault(name, {})["monitor_samples"] = samples
            for target in {id(t): t for t in live.targets.values()}.values():
                target.close()
            if live.parts is not None:
                live.parts.close()
            if live.scratches is not None:  # after the targets and parts that used the areas
                live.scratches.close()
            self._record_conditions(live)
            # A run that failed as a whole before measuring anything holds nothing to show or
            # resume: it is not kept (the error says why). A resumed one keeps what it had.
            self.journal.undo_entry(commands)
            kept = status != "failed" or not live.fresh or any(t.ok for t in live.trials)
            if kept:
                self.store.update_run(run.id, status=status, elapsed_s=live.elapsed(), facts=run.facts)
            else:
                self.store.delete_run(run.id)
            self.emit(ev.RunFinished(run.id, status, kept=kept))
        return run.id

    def _nothing_measured(self, live: _Live) -> ShootoutError:
        """The run's one error when no workload produced a result: a single workload's own error
        (its exit code and hint), else every workload's reason on one line."""
        errors = {name: live.errors[name] for name in live.workloads if name in live.errors}
        if len(errors) == 1:
            return next(iter(errors.values()))
        if not errors:
            return WorkloadError("no workload produced a result", f"`shootout show {live.run.id}` lists why")
        said = [e.message if e.message.startswith(f"{name} ") else f"{name}: {e.message}" for name, e in errors.items()]
        return WorkloadError(f"no workload produced a result: {'; '.join(said)}", "fix what each names, then run again")

    def _record_conditions(self, live: _Live) -> None:
        """Keep the monitor's samples (for the report's timeline) and kernel complaints."""
        machine = live.run.facts.setdefault("machine", {})
        if self.monitor is not None:
            machine["monitor_samples"] = machine.get("monitor_samples", []) + self.monitor.samples()
        events = kernel_events_since(live.run.created_at)
        if events:
            machine["kernel_events"] = events
        # A Raspberry Pi's firmware state again (the preflight's facts hold it before): clocks,
        # temperature and get_throttled decoded, to set beside the one from before the run
        if (after := board.firmware_state()) is not None:
            machine["firmware_state_after"] = after

    def _record_parts(self, live: _Live) -> None:
        """Facts of each configuration's parts, e.g. the device under its scratch."""
        for config in live.run.configs:
            if live.parts is not None and (found := live.parts.facts(config)):
                live.run.facts.setdefault(config.name, {}).update(found)

    def _measure_clock(self, live: _Live, round_index: int) -> None:
        if self.clock is None:
            return
        mhz = self.clock()
        if mhz is not None:
            # [round, MHz, when]: the time puts the measured clock on the report's timeline
            live.run.facts.setdefault("machine", {}).setdefault("clock_mhz", []).append([round_index, mhz, time.time()])

    def _open_targets(self, live: _Live) -> None:
        live.scratches = scratches = Scratches(live.run.configs, self.journal)
        for config in live.run.configs:
            # An A/A copy shares its original's target: same userspace, same mounts.
            original = aa_original(config.name)
            if original in live.targets:
                live.targets[config.name] = live.targets[original]
                continue
            target = self.target_factory(config, self.journal)
            target.use_scratch(scratches.of(config))
            target.expect_packages([p for w in live.workloads.values() for p in w.debian_packages()])
            target.open()
            live.targets[config.name] = target
        check_architectures(live.run.configs, lambda c: machine_arch(live.targets[c.name]))

    def _prepare(self, live: _Live, calibrated: set[str]) -> None:
        run = live.run
        baseline = run.configs[0].name
        for name, workload in list(live.workloads.items()):
            where: str | None = None  # the configuration being prepared, for a failure's notice
            try:
                if name not in calibrated:  # sized once for every side: to fit the smallest (workloads/sizes.py)
                    facts = smallest_side([sized(c, live.targets[c.name].probe()) for c in run.configs])
                    run.params[name] = {**workload.default_params(facts), **run.params.get(name, {})}
                self._provide(live, workload)
                for config in run.configs:
                    where = config.name
                    self.emit(ev.Preparing(name, config.name))
                    target = live.targets[config.name]
                    workload.check_tools(target)
                    ctx = live.contexts[(name, config.name)] = Context(target, name, dict(run.params[name]),
                                                                       self.journal, live.parts)
                    prepared = workload.prepare(ctx)
                    verify_binaries(config, target, workload, prepared)
                    live.prepared[(name, config.name)] = prepared
                if name not in calibrated:
                    run.params[name] = workload.calibrate(live.contexts[(name, baseline)],
                                                          live.prepared[(name, baseline)])
                    calibrated.add(name)  # stored at once: a kill while the next prepares keeps it
                    self._keep_calibration(live, calibrated)
            except ShootoutError as exc:
                self._lose(live, name, where, exc)
                self._cleanup(live, name)
                continue
        for config in run.configs:
            facts = run.facts.setdefault(config.name, {})
            facts["target"] = live.targets[config.name].facts(workload_packages(at_creation=False))
            facts["workloads"] = {w: {**p.facts, "versions": p.versions}
                                  for (w, c), p in live.prepared.items() if c == config.name}
        self._record_parts(live)
        self._keep_calibration(live, calibrated)

    def _keep_calibration(self, live: _Live, calibrated: set[str]) -> None:
        """Store the parameters with which workloads are calibrated so far (see CALIBRATED)."""
        machine = live.run.facts.setdefault("machine", {})
        machine.pop(CALIBRATED, None)
        if not set(live.workloads) <= calibrated:
            machine[CALIBRATED] = sorted(calibrated)
        self.store.update_run(live.run.id, params=live.run.params, facts=live.run.facts)

    def _lose(self, live: _Live, name: str, config: str | None, error: ShootoutError,
              reason: str | None = None) -> None:
        """A workload that failed is measured no more. Its error makes the run's one line when
        nothing was measured (_nothing_measured); its reason stays with the run, so that every
        report names it above its table (report/lost.py), not only in a line that scrolled away."""
        live.failed.add(name)
        live.errors[name] = error
        reason = reason or error.message
        live.run.facts.setdefault("lost", {})[name] = {"config": config, "reason": reason}
        self.emit(ev.WorkloadSkipped(name, f"{config}: {reason}" if config else reason))

    def _provide(self, live: _Live, workload: Workload) -> None:
        targets = {id(t): t for t in (live.targets[c.name] for c in live.run.configs)}
        for line in provide_alike(list(targets.values()), workload):
            self.emit(ev.Notice(line))

    def _cleanup(self, live: _Live, name: str) -> None:
        """The workload's cleanup on every configuration it was prepared on (once)."""
        workload = live.workloads[name]
        for key in [k for k in live.contexts if k[0] == name]:
            ctx = live.contexts.pop(key)
            try:
                workload.cleanup(ctx, live.prepared.get(key))
            except ShootoutError as exc:  # kept with the run; the work directory goes with the target
                live.run.facts.setdefault(key[1], {}).setdefault("cleanup_errors", []).append(f"{name}: {exc}")

    def _active(self, live: _Live) -> list[str]:
        return [w for w in live.workloads if w not in live.failed]

    def _undecided(self, live: _Live, names: list[str]) -> list[str]:
        """Workloads whose headline metric is not decided yet against some configuration.

        Decided: a verdict under the run's sequential rule, or an interval already narrower
        than the precision (see stats.design for why stopping on either keeps its promise).
        Sub-metrics do not keep a workload running: they get no verdict.
        """
        s = live.run.settings
        if len(live.run.configs) < 2 or grouped(live.run):
            return []  # nothing to compare, or machines as the units: the minimum rounds (groups.py)
        design = run_design(live.run, headline=True)
        base = live.run.configs[0].name
        out = []
        for name in names:
            spec = live.workloads[name].spec
            for config in live.run.configs[1:]:
                metric = cpuclock.headline(live.run, spec)
                ratios = metric_log_ratios(live.trials, spec, metric, base, config.name)
                if not ratios and not any(metric in t.values for t in live.trials if t.spec.workload == name):
                    continue  # a headline these parameters do not produce
                if not decided(design.estimate(list(ratios.values())), s.threshold, s.precision):
                    out.append(name)
                    break
        return out

    def _emulated(self, live: _Live) -> list[str]:
        """The run's configurations that ran emulated (TCG VMs): function only, no verdicts."""
        return [c.name for c in live.run.configs if is_emulated(live.run.facts.get(c.name, {}))]

    def _rounds(self, live: _Live) -> None:
        run, s = live.run, live.run.settings
        configs = [c.name for c in run.configs]
        # an emulated run checks function: its warm-up and first round complete whatever the budget
        unbudgeted = 1 if self._emulated(live) else -1
        for r in range(0, s.max_rounds + 1):
            active = self._active(live)
            if not active:
                return  # every workload failed: the run's error says why
            if r > s.min_rounds:
                active = self._undecided(live, active)
            if not active:
                self.emit(ev.Stopped("every headline metric has a verdict or reached the target precision"))
                return
            if r == 1:
                for line in cpuclock.record(run, (live.workloads[w].spec for w in active), live.trials):
                    self.emit(ev.Notice(line))
                self._check_budget(live, active)
            order = round_order(s.seed, r, active, configs)
            if any((spec.round, spec.workload, spec.config) not in live.done for spec in order):
                if live.parts is not None:
                    live.parts.new_round(r)  # e.g. trim the scratches, so each round starts alike
                self._measure_clock(live, r)
            self.emit(ev.RoundStarted(r, active, self._eta(live, r, len(order))))
            lanes = lanes_of(run.configs) if s.parallel else {LOCAL: configs}
            try:
                going = run_round(order, lanes, lambda spec, beside: self._take(live, spec, unbudgeted, beside),
                                  live.abort)
            except BaseException:
                live.abort.set()  # a lane still in flight records nothing more
                raise
            if not going:
                self.emit(ev.Stopped(f"time budget of {s.budget_s:.0f} s spent"))
                return
            self.store.update_run(run.id, elapsed_s=live.elapsed(), facts=run.facts)
        self.emit(ev.Stopped(f"maximum of {s.max_rounds} rounds reached"))

    def _take(self, live: _Live, spec: TrialSpec, unbudgeted: int, beside: bool) -> bool:
        """Measure and record one trial of a round's order (lanes.py calls it, in a lane's
        thread when machines run in parallel); False when the budget is spent."""
        s = live.run.settings
        if (spec.round, spec.workload, spec.config) in live.done or spec.workload in live.failed:
            return True
        if live.elapsed() > s.budget_s and spec.round > unbudgeted:
            return False
        trial = self._measure(live, spec, beside)
        with live.lock:
            if live.abort.is_set():
                return True  # another lane failed, or the run was interrupted: resume measures it again
            self.store.add_trial(live.run.id, trial)
            live.done.add((spec.round, spec.workload, spec.config))
            live.trials.append(trial)
            live.trial_seconds.append(trial.wall_s)
            if not trial.ok:
                self._lose(live, spec.workload, spec.config, _failed(trial), trial.error or "failed")
            self.emit(ev.TrialDone(trial, self._eta(live, spec.round, 0)))
        return True

    def _measure(self, live: _Live, spec: TrialSpec, beside: bool = False) -> Trial:
        """One trial, run again while other programs interrupt it (see conditions/repeats.py).
        beside: other machines' trials run meanwhile; this machine's CPU use says nothing of
        the remote machine measured, so no window decides a repeat."""
        attempt = 0
        while True:
            with nullcontext(TrialWindow()) if beside else self._quiet() as seen:
                trial = self._trial(live, spec)
            trial = dataclasses.replace(trial, monitor=seen.summary)
            with live.lock:  # the run's count of attempts, shared by the lanes
                again = live.repeats.again(trial, attempt)
            if not again or live.elapsed() > live.run.settings.budget_s:
                return trial
            with live.lock:
                live.run.facts.setdefault("machine", {}).setdefault("set_aside", []).append(record(trial))
                self.store.update_run(live.run.id, facts=live.run.facts)  # kept like a trial: at once
                self.emit(ev.TrialSetAside(trial))
            live.repeats.waited(self.monitor.wait_quiet(LIMIT_CPUS, QUIET_WAIT_S) if self.monitor is not None
                                else wait_quiet(LIMIT_CPUS, QUIET_WAIT_S))
            attempt += 1

    def _quiet(self) -> AbstractContextManager[TrialWindow]:
        """While a trial runs, the parent does nothing that competes for the CPUs: the monitor
        pauses (it samples right before and right after instead), and nothing is written until
        the trial has ended. Yields what the monitor saw, filled in when the trial has ended;
        without the monitor, what other programs used (so --repeats works with --no-monitor)."""
        return self.monitor.quiet() if self.monitor is not None else others_during()

    def _check_budget(self, live: _Live, active: list[str]) -> None:
        """After the warm-up: can the budget pay for the rounds up to the first that can give a
        verdict? Say what they need, and stop before measuring when it cannot (unless the user
        asked for a partial run)."""
        s = live.run.settings
        warmup = [t for t in live.trials if t.spec.round == 0 and t.spec.workload in active]
        measured = {t.spec.round for t in live.trials if t.spec.round > 0}
        first = self._first_deciding_round(live)
        rounds = max(0, first - len(measured))
        if not warmup or not rounds or len(live.run.configs) < 2:
            return  # one configuration has no verdicts to lose
        if emulated := self._emulated(live):
            # function only, no verdicts by design: nothing to pay for, the run measures its budget
            self.emit(ev.Notice(f"{', '.join(emulated)} emulated: no verdicts; one round whatever the budget, "
                                f"more while the budget of {s.budget_s / 60:g} min lasts"))
            return
        round_s = _round_seconds(warmup)
        estimate = ev.BudgetEstimate(rounds, round_s, rounds * round_s, max(0.0, s.budget_s - live.elapsed()))
        self.emit(estimate)
        if not estimate.enough and not s.partial:
            wanted = math.ceil((live.elapsed() + estimate.needed_s * 1.2) / 60)
            # kept with the run (saved as it ends), so show and report say why it has no verdicts
            live.run.facts.setdefault("machine", {})[BUDGET_REFUSED] = {
                "budget_s": s.budget_s, "rounds": first, "wanted_min": wanted}
            raise UsageError(
                f"the budget of {s.budget_s / 60:g} min cannot pay for the {first} rounds a first verdict needs "
                "under the sequential rule, so no workload would get a verdict; nothing was measured beyond the warm-up",
                f"run again with --budget {wanted}m, or fewer workloads (-w), or --partial to measure anyway"
                + _own_budget(s.experiment))

    def _first_deciding_round(self, live: _Live) -> int:
        """The first round at which the run's sequential rule can give a verdict (stats/design.py)."""
        s = live.run.settings
        return max(s.min_rounds, run_design(live.run, headline=True).first_look() or s.max_rounds)

    def _eta(self, live: _Live, round_index: int, in_round: int) -> float | None:
        """Seconds left until the first round that can decide (more rounds may follow if undecided)."""
        if not live.trial_seconds:
            return None
        per_trial = sum(live.trial_seconds[-50:]) / len(live.trial_seconds[-50:])
        pairs = len(self._active(live)) * len(live.run.configs)
        rounds_left = max(0, self._first_deciding_round(live) - round_index)
        left = (rounds_left * pairs + in_round) * per_trial
        return min(left, max(0.0, live.run.settings.budget_s - live.elapsed()))

    def _trial(self, live: _Live, spec: TrialSpec) -> Trial:
        workload = live.workloads[spec.workload]
        prepared = live.prepared[(spec.workload, spec.config)]
        params = live.run.params[spec.workload]
        target = live.targets[spec.config]
        argv = workload.argv(prepared, params)
        recorded = {m.name for m in workload.spec.recorded}
        t0 = time.time()
        config = next(c for c in live.run.configs if c.name == spec.config)
        in_force: dict[str, Any] = {}
        observed: dict[str, Any] = {}
        try:
            wrap: list[str] = []
            if live.parts is not None:
                with live.lock:  # the parts write the journal: one lane at a time
                    in_force = live.parts.before_trial(config)
                    wrap = live.parts.wrap(config)
            try:
                result = target.run(argv, env=layout_padding(), timeout=float(params.get("timeout_s", 1800)), wrap=wrap)
            finally:  # also after a failed start: a part may have made something for this trial
                if live.parts is not None:
                    with live.lock:
                        observed = live.parts.after_trial(config)
        except ShootoutError as exc:
            return Trial(spec, {}, 0, 0, 0, 0, 0, -1, "", t0, error=str(exc), in_force=in_force, observed=observed)
        error = None
        values: dict[str, float] = {}
        if result.timed_out:
            error = f"timed out after {result.wall_s:.0f} s"
        elif result.exit_status != 0:
            error = f"exit status {result.exit_status}: {result.stderr_tail(1) or 'no message'}"
        else:
            try:
                values = workload.parse(result, params)
                # metrics are compared as ratios; recorded amounts (tabs lost) may be zero
                bad = [k for k, v in values.items() if not (math.isfinite(v) and (v > 0 or (k in recorded and v >= 0)))]
                if bad:
                    error, values = f"non-positive or non-finite value for {', '.join(bad)}", {}
            except ShootoutError as exc:
                error = str(exc)
        if result.run_delay_s is not None:  # waited for a CPU: cpuclock tells computing from waiting by it
            observed = {**observed, cpuclock.SCHED: {"run_delay_s": result.run_delay_s}}
        return Trial(spec, values, result.wall_s, result.user_s, result.sys_s, result.max_rss_kb,
                     result.ctx_switches, result.exit_status, result.stderr_tail(), result.started_at,
                     error=error, in_force=in_force, observed=observed)

