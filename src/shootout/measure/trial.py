"""One trial: run a workload's command on a configuration's target and read its values."""

from __future__ import annotations

import math
import time
from typing import Any

from shootout.base.errors import ShootoutError, WorkloadError
from shootout.base.model import Config, Trial, TrialSpec
from shootout.counters import pertrial
from shootout.measure.runstate import Live
from shootout.measure.smallparent import SmallParent
from shootout.places.kind import KINDS
from shootout.places.target import layout_padding
from shootout.workloads import cpuclock
from shootout.workloads.contract import DEFAULT_TIMEOUT_S, TIMEOUT_PARAM


def here(config: Config) -> bool:
    """A configuration whose trials run as processes of this machine (not a remote's, not scripted)."""
    kind = KINDS[config.target]
    return not kind.elsewhere and not kind.scripted


def failed(trial: Trial) -> WorkloadError:
    return WorkloadError(f"{trial.spec.workload} failed on {trial.spec.config}: {trial.error}")


def run_trial(live: Live, spec: TrialSpec) -> Trial:
    """One trial: the parts set up around it, the command run on its target, its output parsed."""
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
        timeout = float(params.get(TIMEOUT_PARAM, DEFAULT_TIMEOUT_S))
        parent, token = live.small_parent.wrap(timeout) if live.small_parent and here(config) else ([], "")
        pin = live.pins.get(spec.workload, []) if here(config) else []  # on the reserved CPUs
        # the energy of this machine's trials only: another machine's is not read here
        reading = live.energy.start() if live.energy is not None and target.machine_monitor() is None else None
        try:
            result = target.run(argv, env=layout_padding(), timeout=timeout, wrap=[*pin, *parent, *wrap])
        finally:  # also after a failed start: a part may have made something for this trial
            joules = reading.stop() if reading is not None else None
        if token:
            result = SmallParent.result(result, token)
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
    if error and live.parts is not None:  # what the parts saw may say why (a full zram device)
        error = "; ".join([error, *live.parts.failure_notes(observed)])
    if result.run_delay_s is not None:  # waited for a CPU: cpuclock tells computing from waiting by it
        observed = {**observed, cpuclock.SCHED: {"run_delay_s": result.run_delay_s}}
    if rusage := pertrial.rusage_of(result):
        observed = {**observed, pertrial.RUSAGE: rusage}
    if counts := pertrial.pmu_of(result):
        observed = {**observed, pertrial.PMU: counts}
    if joules is not None:
        observed = {**observed, pertrial.ENERGY: {"joules": joules}}
    return Trial(spec, values, result.wall_s, result.user_s, result.sys_s, result.max_rss_kb,
                 result.ctx_switches, result.exit_status, result.stderr_tail(), result.started_at,
                 error=error, in_force=in_force, observed=observed)
