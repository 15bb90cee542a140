"""Machines measured in parallel: a round's trials split into one lane per machine.

A configuration's trials run on one machine: this one (host, chroots, and VMs, which are
guests on this machine's cores), or a remote one (ssh). A round's order (plan.py) is split
into lanes by machine, each keeping its configurations' trials in the round's order, so a
machine's own configurations stay interleaved as in a sequential run. Remote lanes run at
the same time, one thread each; this machine's lane runs alone after them, so that the
parent's own work (ssh clients, commits, progress) never shares the CPUs with a trial it
measures: remote trials run on their machines, local ones while nothing else runs here.

Machines are opened and prepared the same way (each_machine): one thread per remote machine,
its configurations one after another, then this machine's.

Nothing is measured twice: a lane skips the trials already stored (the runner's `done`),
the store refuses a second trial in one slot, and once a lane fails or the run is
interrupted no lane records a trial that ended after that (resume measures it again).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait

from shootout.base.model import Config, TrialSpec
from shootout.places import LOCAL, machine_key


def lanes_of(configs: Sequence[Config]) -> dict[str, list[str]]:
    """Machine -> its configurations' names, in the run's order."""
    out: dict[str, list[str]] = {}
    for config in configs:
        out.setdefault(machine_key(config), []).append(config.name)
    return out


def split(order: Sequence[TrialSpec], lanes: dict[str, list[str]]) -> dict[str, list[TrialSpec]]:
    """A round's order, one list per machine, each in the round's order."""
    lane = {name: key for key, names in lanes.items() for name in names}
    out: dict[str, list[TrialSpec]] = {key: [] for key in lanes}
    for spec in order:
        out[lane[spec.config]].append(spec)
    return {key: specs for key, specs in out.items() if specs}


Take = Callable[[TrialSpec, bool], bool]  # (spec, beside_others) -> False when the run must stop


class Stopped(Exception):
    """Raised in a lane when another lane stopped the round (the budget, a failure)."""


def run_round(order: Sequence[TrialSpec], lanes: dict[str, list[str]], take: Take,
              abort: threading.Event) -> bool:
    """Measure one round: remote lanes in parallel, then this machine's lane alone.

    take(spec, beside_others) measures and records one trial (beside_others: other lanes run
    meanwhile) and returns False when the run stops (the budget): the other lanes then end
    after their trial in flight, which they record. Returns False when a lane stopped the run.
    The first exception of a lane is raised here after `abort` is set and the other lanes have
    ended their trial in flight; take() must record nothing once `abort` is set.
    """
    per_lane = split(order, lanes)
    remote = [specs for key, specs in per_lane.items() if key != LOCAL]
    stop = threading.Event()
    going = True
    if len(remote) == 1:
        going = _lane(remote[0], take, stop, beside=False)
    elif remote:
        going = _parallel(remote, take, stop, abort)
    if going and LOCAL in per_lane:
        going = _lane(per_lane[LOCAL], take, stop, beside=False)
    return going


def _lane(specs: Sequence[TrialSpec], take: Take, stop: threading.Event, beside: bool) -> bool:
    for spec in specs:
        if stop.is_set():
            raise Stopped()
        if not take(spec, beside):
            stop.set()  # the budget: the other lanes end after their trial in flight
            return False
    return True


def _parallel(remote: list[list[TrialSpec]], take: Take, stop: threading.Event, abort: threading.Event) -> bool:
    pool = ThreadPoolExecutor(max_workers=len(remote), thread_name_prefix="shootout-lane")
    futures: list[Future[bool]] = [pool.submit(_lane, specs, take, stop, True) for specs in remote]
    try:
        while True:  # in short waits, so that Ctrl-C reaches this (the main) thread
            done, pending = wait(futures, timeout=0.5, return_when=FIRST_EXCEPTION)
            if any(f.exception() is not None for f in done) or not pending:
                break
    except BaseException:
        abort.set()
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    failed = [e for f in futures if f.done() and (e := f.exception()) is not None and not isinstance(e, Stopped)]
    if failed:
        abort.set()
        stop.set()
    wait(futures)  # the other lanes end their trial in flight (recording nothing after a failure)
    pool.shutdown()
    if failed:
        raise failed[0]
    return not stop.is_set()


def each_machine(configs: Sequence[Config], do: Callable[[Config], None], parallel: bool = True) -> None:
    """do(config) for every configuration: the remote machines' at the same time (a thread per
    machine, its configurations in the run's order), then this machine's one after another, as
    a sequential run does. Opening a remote machine is mostly waiting (ssh, its compiler, its
    answers), so four take about as long as one.

    Every thread has ended before this returns or raises, so the caller's cleanup sees all that
    was opened; after a failure or Ctrl-C no machine starts another configuration. The first
    failure, in the run's order of the machines, is raised as it was.
    """
    lanes = lanes_of(configs)
    by_name = {c.name: c for c in configs}
    remote = [[by_name[n] for n in names] for key, names in lanes.items() if key != LOCAL]
    stop = threading.Event()

    def machine(mine: list[Config]) -> None:
        for config in mine:
            if stop.is_set():
                return
            try:
                do(config)
            except BaseException:
                stop.set()
                raise

    if parallel and len(remote) > 1:
        _all_of([lambda mine=mine: machine(mine) for mine in remote], stop)
    else:
        for mine in remote:
            machine(mine)
    machine([by_name[n] for n in lanes.get(LOCAL, [])])


def _all_of(calls: Sequence[Callable[[], None]], stop: threading.Event) -> None:
    """Run the calls in threads; wait for all of them, even after Ctrl-C; raise the first
    failure in the calls' order."""
    pool = ThreadPoolExecutor(max_workers=len(calls), thread_name_prefix="shootout-machine")
    futures = [pool.submit(call) for call in calls]
    try:
        while wait(futures, timeout=0.5)[1]:  # short waits, so that Ctrl-C reaches this thread
            pass
    except BaseException:
        stop.set()  # the threads end what they are doing; the caller then closes what they opened
        wait(futures)
        raise
    finally:
        pool.shutdown()
    for future in futures:
        if (error := future.exception()) is not None:
            raise error
