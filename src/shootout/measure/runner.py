"""Execute a run: prepare, calibrate, warm up, then interleaved rounds until decided.

The runner never prints; it emits events (see events.py) that the CLI turns into a
progress display. Every trial is committed to the store the moment it ends, so a killed
run loses at most the trial in flight and `resume` continues exactly where it stopped.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from shootout.arm import board
from shootout.base.errors import ShootoutError, UsageError, WorkloadError
from shootout.base.model import Config, Run, Trial, TrialSpec, aa_original
from shootout.base.runfacts import LostWorkload, RunFacts
from shootout.conditions.monitor import Monitor, TrialWindow, others_during, wait_quiet
from shootout.conditions.repeats import LIMIT_CPUS, QUIET_WAIT_S, record
from shootout.conditions.throttling import kernel_events_since
from shootout.configs.groups import check_architectures, machine_arch
from shootout.counters.energy import EnergySource, find_source
from shootout.execution.tree import run_prefix
from shootout.measure import events as ev
from shootout.measure.binaries import provide_alike, verify_binaries
from shootout.measure.counterpass import CounterPass, cap_s
from shootout.measure.lanes import each_machine, lanes_of, run_round
from shootout.measure.plan import round_order
from shootout.measure.projected import ADVICE_ROUND, advise, projected_rounds
from shootout.measure.roundplan import plan_last_look
from shootout.measure.runstate import Live, RunRequest
from shootout.measure.stopping import check_budget, emulated, eta, undecided
from shootout.measure.smallparent import SmallParent
from shootout.measure.trial import failed, here, run_trial
from shootout.parts import RunParts, sized
from shootout.places import LOCAL, machine_key, make_target
from shootout.places.target import Target
from shootout.storage.scratch import Scratches
from shootout.store import Store
from shootout.system.cpureserve import Reservation, cpus_named, fits
from shootout.system.journal import Journal
from shootout.workloads import cpuclock
from shootout.workloads.contract import Context, Workload
from shootout.workloads.debpackages import workload_packages
from shootout.workloads.sizes import smallest_side

__all__ = ["Interrupted", "RunRequest", "Runner", "TargetFactory", "check_resumable", "provide_alike",
           "verify_binaries"]

TargetFactory = Callable[[Config, Journal], Target]


class Interrupted(KeyboardInterrupt):
    """Raised by the SIGINT/SIGTERM/SIGHUP handler: handled like Ctrl-C (run marked interrupted, journal undone)."""


def check_resumable(run: Run) -> None:
    """A finished run has nothing left to measure: said before anything waits or is prepared."""
    if run.status == "complete":
        raise UsageError(f"run {run.id} is already complete", "start a new run with: shootout run")


class Runner:
    def __init__(
        self,
        store: Store,
        journal: Journal,
        on_event: Callable[[ev.Event], None] = lambda e: None,
        target_factory: TargetFactory = make_target,
        monitor: Monitor | None = None,
        clock: Callable[[], float | None] | None = None,
        own_budget: Callable[[str], str] = lambda experiment: "",
        reservation: Reservation | None = None,
    ) -> None:
        self.store = store
        self.journal = journal
        self.emit = on_event
        self.target_factory = target_factory
        self.monitor = monitor  # tags every trial with what it saw (clock, temperature, steal)
        self.clock = clock  # measures the effective MHz at the start of every round
        self.own_budget = own_budget  # a named experiment's own budget, for the hint of a budget refusal
        self.reservation = reservation  # the CPUs this machine's trials run on (system/cpureserve.py)

    # -- entry points --------------------------------------------------------------
    def start(self, request: RunRequest, facts: dict[str, Any] | None = None,
              across_boots: dict[str, Any] | None = None) -> int:
        """facts: this machine's, as the caller read them; across_boots: the block of a run across
        boots this run is (measure/bootcampaign.py)."""
        if not request.configs:
            raise UsageError("no usable configuration left", "run `shootout info` to see why each was skipped")
        if not request.workloads:
            raise UsageError("no workload selected", "list them with: shootout workloads")
        # The overrides; the defaults come from the baseline target's facts once it is open.
        params = {w.spec.name: dict(request.params.get(w.spec.name, {})) for w in request.workloads}
        run = Run(
            id=0, created_at=time.time(), status="running", settings=request.settings,
            configs=list(request.configs), workloads=[w.spec for w in request.workloads],
            params=params, facts=RunFacts(machine=dict(facts or {})), user_workloads=request.user_workloads,
            lost=dict(request.lost),  # shown with the run: the comparison the user asked for is missing a side
            calibrated=[], across_boots=across_boots,
        )
        run.id = self.store.create_run(run)
        self.emit(ev.RunStarted(run.id, [c.name for c in run.configs], [w.spec.name for w in request.workloads]))
        live = Live(run, {w.spec.name: w for w in request.workloads}, {}, {}, set(), [], fresh=True)
        return self._execute(live, calibrated=set())

    def resume(self, run: Run, workloads: Iterable[Workload]) -> int:
        check_resumable(run)
        trials = self.store.trials(run.id, include_warmup=True)
        live = Live(run, {w.spec.name: w for w in workloads}, {}, {},
                     {(t.spec.round, t.spec.workload, t.spec.config) for t in trials}, trials,
                     elapsed_before=run.elapsed_s)
        live.errors = {t.spec.workload: failed(t) for t in trials if not t.ok}
        # and those the budget left out (stopping.py): the run keeps to what it said it measures
        live.failed = set(live.errors) | {name for name, lost in run.lost_workloads.items() if lost.left_out}
        self.store.update_run(run.id, status="running")
        self.emit(ev.RunStarted(run.id, [c.name for c in run.configs], list(live.workloads), resumed=len(trials)))
        # None: all of them (the preparation finished, or a block of a run across boots)
        stored = run.calibrated
        return self._execute(live, calibrated=set(live.workloads if stored is None else stored))

    # -- the run ---------------------------------------------------------------------
    def _execute(self, live: Live, calibrated: set[str]) -> int:
        run = live.run
        status = "failed"
        # after a kill, doctor ends what the run's commands left running (a trial's browser)
        commands = self.journal.record("the processes of this run's commands", {"end_marked": run_prefix()})
        try:
            live.energy = self._energy(live)
            if any(here(c) for c in run.configs):
                found = SmallParent.here()
                if isinstance(found, str):
                    self.emit(ev.Notice(found))
                else:
                    live.small_parent = found
            self._open_targets(live)
            live.parts = RunParts(run.configs, self.journal, live.scratches)
            self._prepare(live, calibrated)
            self._pin(live)
            # The budget is the measuring's (--help says so): building an image, booting a VM
            # or installing a browser before the first trial does not spend it.
            live.session_start = time.monotonic()
            self._rounds(live)
            self._choose_clocks(live)  # a run that ended before its first look
            self._count(live)
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
                    run.facts.side_for(name)["monitor_samples"] = samples
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
                self.store.update_run(run.id, status=status, elapsed_s=live.elapsed(), records=run)
            else:
                self.store.delete_run(run.id)
            self.emit(ev.RunFinished(run.id, status, kept=kept))
        return run.id

    def _pin(self, live: Live) -> None:
        """Each workload's trials on the reserved CPUs, or on every CPU when it needs more than are
        reserved (said once per workload, and kept in the facts)."""
        if self.reservation is None:
            return
        self.reservation.include_self()  # prepared on every CPU; measured from the rest
        if why := self.reservation.no_partition():
            self.emit(ev.Notice(why))
        where = self.reservation.split
        unreserved: dict[str, int] = {}
        for name, workload in live.workloads.items():
            need = workload.cpus(live.run.params.get(name, {}))
            live.pins[name] = self.reservation.pin(need)
            if fits(need, where):
                live.judged[name] = where.reserved
                continue
            unreserved[name] = need
            needs = "chooses its own CPUs" if need > len(where.reserved | where.rest) else f"needs {need} CPUs"
            n = len(where.reserved)
            self.emit(ev.Notice(f"{name} {needs} and {n} {'is' if n == 1 else 'are'} reserved "
                                f"({cpus_named(where.reserved)}): its trials run on every CPU, beside everything else"))
        live.run.facts.machine["reserved_cpus"] = {**self.reservation.facts(), "unreserved_workloads": unreserved}

    def _energy(self, live: Live) -> EnergySource | None:
        """This machine's energy source for its trials, kept in the facts; a --meter that does
        not give watts is the run's error, before anything is prepared."""
        meter = live.run.settings.meter or None
        found = find_source(meter=meter)
        if isinstance(found, str):
            if meter:
                raise UsageError(found, "give --meter a command that prints the watts it reads, e.g. 5.2")
            live.run.facts.machine["energy"] = {"none": found}
            return None
        live.run.facts.machine["energy"] = {"source": found.kind, "label": found.label}
        return found

    def _count(self, live: Live) -> None:
        """The counters pass (counterpass.py), after the rounds of a run that asked for it."""
        active = [w for w in self._active(live) if any(t.ok and t.spec.workload == w for t in live.trials)]
        if not live.run.settings.counters or not active or live.run.across_boots is not None:
            return
        counting = CounterPass(live, lambda line: self.emit(ev.Notice(line)))
        if not counting.sides:
            return
        cap = cap_s(live, len(active) * len(counting.sides))
        self.emit(ev.Notice(f"counters: one untimed pass per side and workload ({counting.describe()}), "
                            f"up to {cap:.0f} s each"))
        counting.run(active, cap)
        self.store.update_run(live.run.id, records=live.run)

    def _nothing_measured(self, live: Live) -> ShootoutError:
        """The run's one error when no workload produced a result: a single workload's own error
        (its exit code and hint), else every workload's reason on one line."""
        errors = {name: live.errors[name] for name in live.workloads if name in live.errors}
        if len(errors) == 1:
            return next(iter(errors.values()))
        if not errors:
            return WorkloadError("no workload produced a result", f"`shootout show {live.run.id}` lists why")
        said = [e.message if e.message.startswith(f"{name} ") else f"{name}: {e.message}" for name, e in errors.items()]
        return WorkloadError(f"no workload produced a result: {'; '.join(said)}", "fix what each names, then run again")

    def _record_conditions(self, live: Live) -> None:
        """Keep the monitor's samples (for the report's timeline) and kernel complaints."""
        machine = live.run.facts.machine
        if self.reservation is not None and "reserved_cpus" in machine:  # what the sweeps moved in all
            machine["reserved_cpus"].update(self.reservation.facts())
        if self.monitor is not None:
            machine["monitor_samples"] = machine.get("monitor_samples", []) + self.monitor.samples()
        events = kernel_events_since(live.run.created_at)
        if events:
            machine["kernel_events"] = events
        # A Raspberry Pi's firmware state again (the preflight's facts hold it before): clocks,
        # temperature and get_throttled decoded, to set beside the one from before the run
        if (after := board.firmware_state()) is not None:
            machine["firmware_state_after"] = after

    def _record_parts(self, live: Live) -> None:
        """Facts of each configuration's parts, e.g. the device under its scratch."""
        for config in live.run.configs:
            if live.parts is not None and (found := live.parts.facts(config)):
                live.run.facts.side_for(config.name).update(found)

    def _measure_clock(self, live: Live, round_index: int) -> None:
        if self.clock is None:
            return
        mhz = self.clock()
        if mhz is not None:
            # [round, MHz, when]: the time puts the measured clock on the report's timeline
            live.run.facts.machine.setdefault("clock_mhz", []).append([round_index, mhz, time.time()])

    def _open_targets(self, live: Live) -> None:
        live.scratches = scratches = Scratches(live.run.configs, self.journal)

        def open_one(config: Config) -> None:  # the remote machines at once (lanes.each_machine)
            # An A/A copy shares its original's target: same userspace, same mounts.
            original = aa_original(config.name)
            if original in live.targets:
                live.targets[config.name] = live.targets[original]
                return
            target = self.target_factory(config, self.journal)
            target.use_scratch(scratches.of(config))
            target.expect_packages([p for w in live.workloads.values() for p in w.debian_packages()])
            target.open()
            live.targets[config.name] = target

        each_machine(live.run.configs, open_one, live.run.settings.parallel)
        check_architectures(live.run.configs, lambda c: machine_arch(live.targets[c.name]))

    def _prepare(self, live: Live, calibrated: set[str]) -> None:
        run = live.run
        baseline = run.configs[0].name
        for name, workload in list(live.workloads.items()):
            where: str | None = None  # the configuration being prepared, for a failure's notice
            try:
                if name not in calibrated:  # sized once for every side: to fit the smallest (workloads/sizes.py)
                    facts = smallest_side([sized(c, live.targets[c.name].probe()) for c in run.configs])
                    run.params[name] = {**workload.default_params(facts), **run.params.get(name, {})}
                self._provide(live, workload)
                failures: dict[str, ShootoutError] = {}
                each_machine(run.configs, functools.partial(self._prepare_on, live, workload, failures=failures),
                             run.settings.parallel)
                if failures:  # the first configuration's, in the run's order
                    where = next(c.name for c in run.configs if c.name in failures)
                    raise failures[where]
                if name not in calibrated:
                    where = baseline
                    run.params[name] = workload.calibrate(live.contexts[(name, baseline)],
                                                          live.prepared[(name, baseline)])
                    calibrated.add(name)  # stored at once: a kill while the next prepares keeps it
                    self._keep_calibration(live, calibrated)
            except ShootoutError as exc:
                self._lose(live, name, where, exc)
                self._cleanup(live, name)
                continue

        def describe(config: Config) -> None:  # the remote machines at once: facts ask each machine
            facts = {"target": live.targets[config.name].facts(workload_packages(at_creation=False)),
                     "workloads": {w: {**p.facts, "versions": p.versions}
                                   for (w, c), p in live.prepared.items() if c == config.name}}
            with live.lock:
                run.facts.side_for(config.name).update(facts)

        each_machine(run.configs, describe, run.settings.parallel)
        self._record_parts(live)
        self._keep_calibration(live, calibrated)

    def _prepare_on(self, live: Live, workload: Workload, config: Config, failures: dict[str, ShootoutError]) -> None:
        """Prepare a workload on one configuration (in its machine's thread); a failure is kept
        in failures, which loses the workload once every machine has ended."""
        name = workload.spec.name
        with live.lock:
            if failures:  # lost already: nothing more to prepare
                return
            self.emit(ev.Preparing(name, config.name))
        try:
            target = live.targets[config.name]
            workload.check_tools(target)
            ctx = Context(target, name, dict(live.run.params[name]), self.journal, live.parts)
            with live.lock:  # registered first: the workload's cleanup also undoes a half-done prepare
                live.contexts[(name, config.name)] = ctx
            prepared = workload.prepare(ctx)
            verify_binaries(config, target, workload, prepared)
            with live.lock:
                live.prepared[(name, config.name)] = prepared
        except ShootoutError as exc:
            with live.lock:
                failures[config.name] = exc

    def _keep_calibration(self, live: Live, calibrated: set[str]) -> None:
        """Store the parameters with which workloads are calibrated so far (see Run.calibrated)."""
        live.run.calibrated = None if set(live.workloads) <= calibrated else sorted(calibrated)
        self.store.update_run(live.run.id, params=live.run.params, records=live.run)

    def _lose(self, live: Live, name: str, config: str | None, error: ShootoutError,
              reason: str | None = None) -> None:
        """A workload that failed is measured no more. Its error makes the run's one line when
        nothing was measured (_nothing_measured); its reason stays with the run, so that every
        report names it above its table (report/lostworkloads.py), not only in a line that scrolled away."""
        live.failed.add(name)
        live.errors[name] = error
        reason = reason or error.message
        live.run.lost_workloads[name] = LostWorkload(config, reason)
        self.emit(ev.WorkloadSkipped(name, f"{config}: {reason}" if config else reason))

    def _provide(self, live: Live, workload: Workload) -> None:
        targets = {id(t): t for t in (live.targets[c.name] for c in live.run.configs)}
        name = workload.spec.name
        for line in provide_alike(list(targets.values()), workload,
                                  lambda target, packages: self.emit(ev.Installing(name, target.config.display, packages))):
            self.emit(ev.Notice(line))

    def _cleanup(self, live: Live, name: str) -> None:
        """The workload's cleanup on every configuration it was prepared on (once)."""
        workload = live.workloads[name]
        for key in [k for k in live.contexts if k[0] == name]:
            ctx = live.contexts.pop(key)
            try:
                workload.cleanup(ctx, live.prepared.get(key))
            except ShootoutError as exc:  # kept with the run; the work directory goes with the target
                live.run.facts.side_for(key[1]).setdefault("cleanup_errors", []).append(f"{name}: {exc}")

    def _choose_clocks(self, live: Live) -> None:
        """The headline clock of every timed command that has none yet, said once (cpuclock.py)."""
        for line in cpuclock.record(live.run, (live.workloads[w].spec for w in self._active(live)), live.trials):
            self.emit(ev.Notice(line))

    def _active(self, live: Live) -> list[str]:
        return [w for w in live.workloads if w not in live.failed]

    def _rounds(self, live: Live) -> None:
        run = live.run
        configs = [c.name for c in run.configs]
        # an emulated run checks function: its warm-up and first round complete whatever the budget
        unbudgeted = 1 if emulated(live) else -1
        r = 0
        while r <= run.settings.max_rounds:  # the last look may be planned after the warm-up (roundplan.py)
            s = run.settings
            active = self._active(live)
            if not active:
                return  # every workload failed: the run's error says why
            if r > s.min_rounds:
                self._choose_clocks(live)  # before the first look: the rule judges a fixed metric
                active = undecided(live, active)
            if not active:
                self.emit(ev.Stopped("every headline metric has a verdict or reached the target precision"))
                return
            if not (active := [w for w in active if r <= s.last_look(w)]):
                break  # each undecided workload reached its own last look (roundplan.py)
            if r == 1:
                if plan_last_look(live, active, self.emit):
                    self.store.update_run(run.id, run_settings=run.settings)
                active = check_budget(live, active, self.emit, self.own_budget)
            order = round_order(s.seed, r, active, configs)
            if any((spec.round, spec.workload, spec.config) not in live.done for spec in order):
                if live.parts is not None:
                    live.parts.new_round(r)  # e.g. trim the scratches, so each round starts alike
                self._measure_clock(live, r)
            if r > ADVICE_ROUND:  # the noise so far sizes the ETA; said once when the budget falls short
                live.projected = projected_rounds(live, active)
                if r == ADVICE_ROUND + 1:
                    advise(live, active, self.emit)
            self.emit(ev.RoundStarted(r, active, eta(live, r, len(order), len(self._active(live)))))
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
            self.store.update_run(run.id, elapsed_s=live.elapsed(), records=run)
            r += 1
        self.emit(ev.Stopped("every undecided workload reached its own last look" if run.settings.own_last_looks() else
                             f"maximum of {run.settings.max_rounds} rounds reached"))

    def _take(self, live: Live, spec: TrialSpec, unbudgeted: int, beside: bool) -> bool:
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
                self._lose(live, spec.workload, spec.config, failed(trial), trial.error or "failed")
            self.emit(ev.TrialDone(trial, eta(live, spec.round, 0, len(self._active(live)))))
        return True

    def _measure(self, live: Live, spec: TrialSpec, beside: bool = False) -> Trial:
        """One trial, run again while other programs interrupt it (see conditions/repeats.py),
        judged on the trial's own machine: a remote target's monitor reads that machine (also
        while other machines measure beside it); this machine's trials, by the run's monitor.
        Each machine keeps its own count of attempts, as steady load on one says nothing of
        another. beside: other lanes run meanwhile (without a monitor of its machine, no
        window decides a repeat)."""
        config = next(c for c in live.run.configs if c.name == spec.config)
        there = live.targets[spec.config].machine_monitor()
        repeats = live.repeats_on(machine_key(config))
        attempt = 0
        judged = live.judged.get(spec.workload) if here(config) else None
        while True:
            if self.reservation is not None and here(config):
                with live.lock:  # what started since the last trial leaves the reserved CPUs (journalled)
                    self.reservation.sweep()
            window = (there.quiet() if there is not None else nullcontext(TrialWindow()) if beside
                      else self._quiet(judged))
            with window as seen:
                trial = run_trial(live, spec)
            trial = dataclasses.replace(trial, monitor=seen.summary)
            with live.lock:  # the lanes record one at a time
                again = repeats.again(trial, attempt)
            if not again or live.elapsed() > live.run.settings.budget_s:
                return trial
            with live.lock:
                live.run.set_aside.append(record(trial))
                self.store.update_run(live.run.id, records=live.run)  # kept like a trial: at once
                self.emit(ev.TrialSetAside(trial))
            if there is not None:
                repeats.waited(there.wait_quiet(LIMIT_CPUS, QUIET_WAIT_S))
            elif self.monitor is not None:
                repeats.waited(self.monitor.wait_quiet(LIMIT_CPUS, QUIET_WAIT_S, cpus=judged))
            else:
                repeats.waited(wait_quiet(LIMIT_CPUS, QUIET_WAIT_S, cpus=judged))
            attempt += 1

    def _quiet(self, cpus: frozenset[int] | None = None) -> AbstractContextManager[TrialWindow]:
        """While a trial runs, the parent does nothing that competes for the CPUs: the monitor
        pauses (it samples right before and right after instead), and nothing is written until
        the trial has ended. Yields what the monitor saw, filled in when the trial has ended;
        without the monitor, what other programs used (so --repeats works with --no-monitor).
        cpus: a trial on reserved CPUs is judged by their ticks alone."""
        return self.monitor.quiet(cpus) if self.monitor is not None else others_during(cpus=cpus)

