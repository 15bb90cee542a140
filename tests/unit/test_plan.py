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


def test_two_configurations_take_ab_and_ba_once_in_every_block_of_two_rounds():
    orders = [tuple(config_order(5, r, "w", ["A", "B"])) for r in range(1, 41)]
    for block in range(20):
        assert Counter(orders[2 * block: 2 * block + 2]) == {("A", "B"): 1, ("B", "A"): 1}
    # drawn, not in sequence: somewhere a row repeats across a block's edge
    assert any(a == b for a, b in pairwise(orders))


@pytest.mark.parametrize("configs", [["A", "B"], ["A", "B", "C"], ["A", "B", "C", "D"]])
def test_every_block_of_rounds_holds_every_williams_row_once(configs):
    k = len(williams_rows(len(configs)))
    for seed, workload in ((1, "w"), (2, "other")):
        orders = [tuple(config_order(seed, r, workload, configs)) for r in range(1, 5 * k + 1)]
        for block in range(5):
            rows = orders[block * k: (block + 1) * k]
            assert len(set(rows)) == k  # each row once: every configuration equally often in every place
            for place in range(len(configs)):
                assert len(set(Counter(row[place] for row in rows).values())) == 1


def test_same_seed_same_row_order_and_another_seed_another():
    one = [config_order(9, r, "w", "ABC") for r in range(1, 31)]
    assert one == [config_order(9, r, "w", "ABC") for r in range(1, 31)]
    assert one != [config_order(10, r, "w", "ABC") for r in range(1, 31)]


def hits_on_a(orders: list[tuple[str, ...]], period: int) -> float:
    """A disturbance every `period` trials (a timer), on one workload's trials in sequence:
    the share of the disturbed trials that were A's."""
    sequence = [c for order in orders for c in order]
    hit = sequence[::period]
    return hit.count("A") / len(hit)


@pytest.mark.parametrize("period", [2, 3, 4, 6, 8])
def test_a_periodic_disturbance_does_not_land_on_one_side(period):
    """With the rows in sequence (AB, BA, AB, ...) a disturbance every 4 trials (two rounds)
    hit A every time; drawn per block, each side gets about half of it, at every period."""
    in_sequence = [("A", "B") if r % 2 else ("B", "A") for r in range(1, 401)]
    assert hits_on_a(in_sequence, 4) == 1.0
    drawn = [tuple(config_order(3, r, "w", ["A", "B"])) for r in range(1, 401)]
    assert abs(hits_on_a(drawn, period) - 0.5) < 0.12


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
