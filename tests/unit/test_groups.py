"""Groups of machines (configs/groups.py, judge/groupscompare.py): parsing, refusals, and the interval's coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shootout.base.errors import UsageError
from shootout.base.model import (
    Config,
    Metric,
    Run,
    RunSettings,
    Trial,
    TrialSpec,
    WorkloadSpec,
)
from shootout.base.runfacts import RunFacts
from shootout.configs.groups import (
    MACHINES_NOTE,
    ONE_MACHINE,
    check_architectures,
    side_names,
)
from shootout.configs.specs import load_text, resolve
from shootout.judge.groupscompare import analyze_groups
from shootout.stats import unpaired_estimate

SPEC = WorkloadSpec("bench", "user", "a benchmark", (Metric("rate", "ops/s"),), "rate")

TOML = """
[[config]]
name = "box1"
spec = "ssh:a1-1"
options = { ssh_config = "/etc/test_ssh_config" }

[[config]]
name = "a1"
machines = ["box1", "ssh:a1-2", "ssh:root@a1-3:2222"]
env = { OPENSSL_ia32cap = "~0x200000200000000" }

[[config]]
name = "m5"
machines = ["ssh:m5-1"]
"""


def test_a_group_runs_as_one_member_per_machine() -> None:
    file = load_text(TOML, "shootout.toml")
    configs = resolve(["a1", "m5"], file.configs)
    assert [c.name for c in configs] == ["a1@box1", "a1@ssh:a1-2", "a1@ssh:root@a1-3:2222", "m5@ssh:m5-1"]
    assert all(c.target == "ssh" and c.option("group") in ("a1", "m5") for c in configs)
    first = configs[0]
    assert first.option("destination") == "a1-1" and first.option("ssh_config") == "/etc/test_ssh_config"
    assert dict(first.env)["OPENSSL_ia32cap"] == "~0x200000200000000"  # the group's own settings go along
    assert configs[2].option("port") == "2222" and configs[2].option("machines") is None
    assert side_names(configs) == ["a1", "m5"]  # what --price and the comparison name


@pytest.mark.parametrize("table, said", [
    ('name = "g"\nspec = "host"\nmachines = ["ssh:a"]', "has both spec and machines"),
    ('name = "g"\nmachines = []', "machines must be a list of machines"),
    ('name = "g"\nmachines = ["ssh:a", "ssh:a"]', "names a machine twice"),
    ('name = "g"\nmachines = ["ssh:a"]\nmixed_architectures = "yes"', "mixed_architectures must be true or false"),
])
def test_bad_groups_are_refused_in_one_line(table: str, said: str) -> None:
    with pytest.raises(UsageError) as err:
        load_text(f"[[config]]\n{table}\n", "shootout.toml")
    assert said in err.value.message and "\n" not in err.value.message


def test_a_group_of_this_machine_is_refused() -> None:
    file = load_text('[[config]]\nname = "g"\nmachines = ["host", "ssh:b"]\n', "f")
    with pytest.raises(UsageError, match="host runs on this machine, not a machine of its own"):
        resolve(["g"], file.configs)


def test_a_group_mixing_architectures_must_say_so() -> None:
    configs = resolve(["g"], load_text('[[config]]\nname = "g"\nmachines = ["ssh:a", "ssh:b"]\n', "f").configs)
    arches = {"g@ssh:a": "aarch64", "g@ssh:b": "x86_64"}
    with pytest.raises(UsageError) as err:
        check_architectures(configs, lambda c: arches[c.name])
    assert err.value.message == "group g mixes architectures (ssh:a is aarch64, ssh:b is x86_64); a group is " \
                                "machines of one kind"
    said = resolve(["g"], load_text('[[config]]\nname = "g"\nmachines = ["ssh:a", "ssh:b"]\n'
                                    'mixed_architectures = true\n', "f").configs)
    check_architectures(said, lambda c: arches[c.name.replace("g@", "g@")])  # said so: accepted
    check_architectures(configs, lambda c: "x86_64")


def _fleet(rng: np.random.Generator, machines: int, effect: float, spread: float, noise: float = 0.01,
           rounds: int = 6) -> tuple[Run, list[Trial]]:
    """Groups a and b of `machines` machines each: every machine off its kind's level by
    N(0, spread) in log terms (its host, its chip), every trial by N(0, noise) more."""
    configs, trials = [], []
    for group, level in (("a", 0.0), ("b", effect)):
        for i in range(machines):
            name = f"{group}@ssh:{group}{i}"
            configs.append(Config(name=name, target="ssh", options=(("destination", f"{group}{i}"), ("group", group))))
            own = level + rng.normal(0, spread)
            trials += [Trial(TrialSpec(r, 0, SPEC.name, name), {"rate": 1000 * math.exp(own + rng.normal(0, noise))},
                             1.0, 1.0, 0.0, 1000, 1, 0, "", 0.0) for r in range(1, rounds + 1)]
    run = Run(1, 0.0, "complete", RunSettings(seed=1), configs, [SPEC], {SPEC.name: {}}, RunFacts())
    return run, trials


def test_the_groups_interval_covers_the_kinds_difference_despite_machine_to_machine_variation() -> None:
    """Seeded simulation: 3 machines a side, machines of one kind 3% apart (sd), trials 1%.
    Machines as units: the 95% interval covers the kinds' true ratio about 95% of the time.
    Trials as units (what one pooled sample per group would give) covers it far less often:
    the test fails if the groups' interval ignored machine-to-machine variation."""
    rng = np.random.default_rng(25)
    true = math.log(1.05)
    sims, covered, naive = 300, 0, 0
    for _ in range(sims):
        run, trials = _fleet(rng, machines=3, effect=true, spread=0.03)
        (head,) = analyze_groups(run, trials).comparisons
        covered += head.estimate.low <= math.exp(true) <= head.estimate.high
        pooled = [[math.log(t.values["rate"]) for t in trials if t.spec.config.startswith(g)] for g in "ab"]
        est = unpaired_estimate(pooled[0], pooled[1], 0.95)
        naive += est.low <= math.exp(true) <= est.high
    print(f"coverage: machines as units {covered / sims:.3f}, trials as units {naive / sims:.3f}")
    assert covered / sims >= 0.92, covered / sims
    assert naive / sims <= 0.7, naive / sims


def test_groups_are_labelled_machines_as_units_and_one_machine_per_side_is_labelled_so() -> None:
    rng = np.random.default_rng(3)
    run, trials = _fleet(rng, machines=3, effect=0.05, spread=0.02)
    analysis = analyze_groups(run, trials)
    (head,) = analysis.comparisons
    assert head.estimate.method == "welch on run means" and head.estimate.n == 6 and ONE_MACHINE not in head.flags
    assert analysis.notes[0] == MACHINES_NOTE
    assert [c.display for c in analysis.configs] == ["a (3 machines)", "b (3 machines)"]
    assert any(r.startswith("Groups of machines:") for r in analysis.rules)
    run, trials = _fleet(rng, machines=1, effect=0.05, spread=0.02)
    single = analyze_groups(run, trials)
    (head,) = single.comparisons
    assert ONE_MACHINE in head.flags and single.summaries[0].note == ONE_MACHINE
    assert any(n.startswith(ONE_MACHINE) for n in single.notes) and MACHINES_NOTE not in single.notes
    assert ONE_MACHINE == "one machine per side: machine-to-machine variation not included"
    run, trials = _fleet(rng, machines=3, effect=0.0, spread=0.05)
    (head,) = analyze_groups(run, trials).comparisons
    # undecided: no "needs N rounds" hint, since more rounds do not narrow machines-as-units
    assert head.verdict.value == "inconclusive" and head.resolution is None
