from collections import Counter
from itertools import groupby, pairwise

import pytest

from shootout.measure.plan import config_order, round_order, warmup_order, williams_rows


def test_same_seed_same_order_and_every_pair_once():
    a = round_order(42, 3, ["w1", "w2", "w3"], ["A", "B"])
    assert a == round_order(42, 3, ["w1", "w2", "w3"], ["A", "B"])
    assert sorted((s.workload, s.config) for s in a) == sorted((w, c) for w in ["w1", "w2", "w3"] for c in "AB")
    assert [s.position for s in a] == list(range(6))
    assert all(s.round == 3 for s in a)


def test_a_workloads_configurations_run_back_to_back():
    for r in range(1, 10):
        order = [s.workload for s in round_order(7, r, ["w1", "w2", "w3", "w4"], ["A", "B", "C"])]
        assert [len(list(group)) for _, group in groupby(order)] == [3, 3, 3, 3]


def test_two_configurations_alternate_ab_ba():
    orders = [tuple(config_order(5, r, "w", ["A", "B"])) for r in range(1, 11)]
    assert all(a != b for a, b in pairwise(orders))
    assert Counter(orders) == {("A", "B"): 5, ("B", "A"): 5}


def test_workload_order_is_shuffled_per_round_and_seed():
    orders = {tuple(dict.fromkeys(s.workload for s in round_order(1, r, ["w1", "w2", "w3"], "AB")))
              for r in range(1, 20)}
    assert len(orders) > 3
    seed1 = [round_order(1, r, ["w1", "w2", "w3"], "AB") for r in range(1, 6)]
    assert seed1 != [round_order(2, r, ["w1", "w2", "w3"], "AB") for r in range(1, 6)]


def test_a_workloads_order_does_not_depend_on_the_others():
    # Decided workloads drop out of later rounds; the survivors' counterbalancing must go on.
    for r in range(1, 8):
        alone = [s.config for s in round_order(3, r, ["w2"], "ABC")]
        among = [s.config for s in round_order(3, r, ["w1", "w2", "w3"], "ABC") if s.workload == "w2"]
        assert alone == among


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_williams_rows_are_balanced(k):
    rows = williams_rows(k)
    assert len(rows) == (k if k % 2 == 0 else 2 * k)
    for position in range(k):  # every configuration equally often in every position
        assert len(set(Counter(row[position] for row in rows).values())) == 1
    follows = Counter((a, b) for row in rows for a, b in pairwise(row))
    if k > 1:  # and right after every other one equally often (first-order carry-over)
        assert len(follows) == k * (k - 1) and len(set(follows.values())) == 1


def test_counterbalanced_over_a_full_cycle_of_rounds():
    configs = ["A", "B", "C", "D"]
    firsts = Counter(config_order(11, r, "w", configs)[0] for r in range(1, 9))
    assert firsts == {c: 2 for c in configs}


def test_warmup_is_round_zero():
    specs = warmup_order(5, ["w"], ["A", "B"])
    assert all(s.warmup and s.round == 0 for s in specs)
