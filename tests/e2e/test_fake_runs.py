"""End to end through the fake target: plan, runner, store and statistics together."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest

from shootout.base.model import Config, RunSettings
from shootout.judge.analysis import analyze, run_design
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.stats import Verdict
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload


def scripted(factor_b: float, drift: float = 0.0, noise: float = 0.01):
    """Throughput 1000 ops/s for A, factor_b times that for B, with noise and a common drift."""
    calls: dict[str, int] = {}
    total = [0]

    def script(argv: Sequence[str], config: str, n: int) -> str:
        total[0] += 1
        calls[config] = n
        rng = random.Random(f"{config}:{n}")
        base = 1000.0 * (factor_b if config == "B" else 1.0)
        slowing = 1.0 - drift * total[0]  # both configurations slow down as the run goes on
        return f"throughput: {base * slowing * math.exp(rng.gauss(0, noise)):.6f}\n"

    return script


def run_fake(tmp_path, script, **settings) -> tuple:
    SCRIPTS["e2e"] = script
    configs = [Config(name=n, target="fake", options=(("script", "e2e"),)) for n in ("A", "B")]
    work = CommandWorkload({"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    s = RunSettings(seed=7, budget_s=600, **settings)
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest(configs, [work], s))
    run = store.get_run(run_id)
    return run, store.trials(run_id), store


def test_three_percent_faster_is_found_with_ci_covering_it(tmp_path):
    run, trials, _ = run_fake(tmp_path, scripted(1.03))
    (comp,) = analyze(run, trials).comparisons
    assert comp.verdict is Verdict.FASTER
    assert comp.estimate.low <= 1.03 <= comp.estimate.high
    assert run.status == "complete"


@pytest.mark.parametrize("seed_shift", range(5))
def test_identical_configurations_are_never_faster_or_slower(tmp_path, seed_shift):
    def script(argv, config, n):
        # identical distributions: the name of the config does not enter the value
        rng = random.Random(f"{seed_shift}:{config}:{n}")
        return f"throughput: {1000 * math.exp(rng.gauss(0, 0.01)):.6f}\n"

    run, trials, _ = run_fake(tmp_path, script)
    (comp,) = analyze(run, trials).comparisons
    assert comp.verdict in (Verdict.SAME, Verdict.INCONCLUSIVE)


def test_drift_over_rounds_does_not_fool_the_paired_estimate(tmp_path):
    # both configurations slow by 0.3% per trial: 30%+ over the run, ten times the real effect
    run, trials, _ = run_fake(tmp_path, scripted(0.97, drift=0.003, noise=0.003), max_rounds=12)
    (comp,) = analyze(run, trials).comparisons
    assert comp.verdict is Verdict.SLOWER
    assert comp.estimate.low <= 0.97 <= comp.estimate.high


def test_rounds_stop_once_decided_and_warmup_is_not_measured(tmp_path):
    run, trials, store = run_fake(tmp_path, scripted(1.10))
    rounds = {t.spec.round for t in trials}
    first = run_design(run, headline=True).first_look()  # 8: the first round a 95% sequential verdict can have
    assert rounds == set(range(1, first + 1))  # decided at the first possible look: no extra rounds
    everything = store.trials(run.id, include_warmup=True)
    assert sum(1 for t in everything if t.spec.round == 0) == 2  # one warm-up per (workload, config)


def test_undecided_workloads_continue_until_budget_or_max_rounds(tmp_path):
    # a 1% difference under 1% noise needs more than 6 rounds: the runner keeps going
    run, trials, _ = run_fake(tmp_path, scripted(1.01, noise=0.02), max_rounds=9, precision=0.001)
    assert max(t.spec.round for t in trials) == 9


def test_each_round_interleaves_configurations_in_seeded_order(tmp_path):
    run, trials, _ = run_fake(tmp_path, scripted(1.10))
    orders = [[t.spec.config for t in trials if t.spec.round == r] for r in range(1, 7)]
    assert all(sorted(o) == ["A", "B"] for o in orders)
    assert len({tuple(o) for o in orders}) == 2  # shuffled: not always the same order


def test_a_single_configuration_stops_after_the_minimum_rounds(tmp_path):
    SCRIPTS["single"] = lambda argv, config, n: f"throughput: {1000 + n % 7}\n"
    work = CommandWorkload({"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"})
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    config = Config(name="A", target="fake", options=(("script", "single"),))
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest([config], [work], RunSettings(seed=1, max_rounds=20)))
    assert max(t.spec.round for t in store.trials(run_id)) == 6


def test_the_headline_clock_is_chosen_before_the_first_look_from_every_round_up_to_it(tmp_path):
    """Not from the warm-up alone: from rounds 0 to --min-rounds, said before round 7 starts."""
    from shootout.measure import events as ev

    SCRIPTS["clock"] = lambda argv, config, n: ""
    configs = [Config(name=n, target="fake", options=(("script", "clock"),)) for n in ("A", "B")]
    seen: list[ev.Event] = []
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = Runner(store, Journal(tmp_path), on_event=seen.append).start(
        RunRequest(configs, [CommandWorkload({"name": "t", "command": "t"})], RunSettings(seed=3, max_rounds=12)))
    assert store.get_run(run_id).headline_clocks["t"]["trials"] == 7
    said = [i for i, e in enumerate(seen) if isinstance(e, ev.Notice) and e.text.startswith("t: the headline is")]
    starts = {e.round: i for i, e in enumerate(seen) if isinstance(e, ev.RoundStarted)}
    assert len(said) == 1 and starts[6] < said[0] < starts.get(7, len(seen)), (said, starts)
