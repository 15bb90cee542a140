from shootout.plan import round_order, warmup_order


def test_same_seed_same_order_and_every_pair_once():
    a = round_order(42, 3, ["w1", "w2", "w3"], ["A", "B"])
    assert a == round_order(42, 3, ["w1", "w2", "w3"], ["A", "B"])
    assert sorted((s.workload, s.config) for s in a) == sorted((w, c) for w in ["w1", "w2", "w3"] for c in "AB")
    assert [s.position for s in a] == list(range(6))
    assert all(s.round == 3 for s in a)


def test_rounds_and_seeds_shuffle_differently():
    orders = {tuple((s.workload, s.config) for s in round_order(1, r, ["w1", "w2", "w3"], ["A", "B"])) for r in range(1, 20)}
    assert len(orders) > 5
    assert round_order(1, 1, ["w1", "w2", "w3"], "AB") != round_order(2, 1, ["w1", "w2", "w3"], "AB")


def test_warmup_is_round_zero():
    specs = warmup_order(5, ["w"], ["A", "B"])
    assert all(s.warmup and s.round == 0 for s in specs)
