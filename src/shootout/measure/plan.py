"""The plan: which trial runs when. Pure: the same seed gives the same order.

Round 0 is the warm-up round (one discarded trial per workload and configuration);
rounds 1.. are measured. A round runs every (workload, configuration) pair once:

- the workloads in an order shuffled from the run's seed and the round number;
- each workload's configurations back to back, so the trials that are paired into one
  d_r are adjacent and a slow drift of the machine hits them alike (when all pairs of a
  round were shuffled together, A and B of one workload were on average 9 trials apart
  with 13 workloads, which cost about 40% more rounds under drift);
- in an order that is balanced over blocks of rounds: the rows of a Williams design (AB and
  BA for two configurations; for more a balanced Latin square, each configuration equally
  often in each position and right after each other one), each row once per block of
  len(rows) rounds, in an order drawn per block. So neither going first nor following a
  given configuration favours anyone over a block, and a periodic disturbance (a timer
  every few seconds) does not land on one side: with the rows in sequence (AB, BA, AB, ...)
  a disturbance every two rounds hit A in every round it came. Which configuration plays
  which part of the square is drawn from the seed per workload; each block's order from the
  seed, the workload and the block's index.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from shootout.base.model import TrialSpec


def williams_rows(k: int) -> list[list[int]]:
    """The rows of a Williams design for k treatments: k rows if k is even, 2k if odd.

    The first row is 0, 1, k-1, 2, k-2, ...; row i adds i to it (mod k). For odd k the
    mirrored rows are added, which balances first-order carry-over.
    """
    if k < 1:
        raise ValueError(f"need at least one configuration, got {k}")
    first, low, high = [0], 1, k - 1
    while len(first) < k:
        first.append(low)
        low += 1
        if len(first) < k:
            first.append(high)
            high -= 1
    rows = [[(x + i) % k for x in first] for i in range(k)]
    return rows if k % 2 == 0 else rows + [row[::-1] for row in rows]


def row_index(seed: int, round_index: int, workload: str, rows: int) -> int:
    """Which Williams row a workload's round uses: each row once in every block of `rows`
    measured rounds (1..rows, rows+1..2*rows, ...; the warm-up ends block -1), in an order
    drawn from the seed, the workload and the block."""
    block, place = divmod(round_index - 1, rows)
    order = list(range(rows))
    random.Random(f"shootout:{seed}:{workload}:block:{block}").shuffle(order)
    return order[place]


def config_order(seed: int, round_index: int, workload: str, configs: Sequence[str]) -> list[str]:
    """The configurations of one workload in round `round_index`: a Williams row, seeded per workload."""
    rng = random.Random(f"shootout:{seed}:{workload}")
    roles = list(range(len(configs)))
    rng.shuffle(roles)  # which configuration is treatment 0, 1, ...
    rows = williams_rows(len(configs))
    row = rows[row_index(seed, round_index, workload, len(rows))]
    return [configs[roles[t]] for t in row]


def round_order(seed: int, round_index: int, workloads: Sequence[str], configs: Sequence[str]) -> list[TrialSpec]:
    order = list(workloads)
    # A string seed is hashed deterministically by random.Random (unlike hash(), which is salted).
    random.Random(f"shootout:{seed}:{round_index}").shuffle(order)
    pairs = [(w, c) for w in order for c in config_order(seed, round_index, w, configs)]
    return [TrialSpec(round_index, i, w, c) for i, (w, c) in enumerate(pairs)]


def warmup_order(seed: int, workloads: Sequence[str], configs: Sequence[str]) -> list[TrialSpec]:
    return round_order(seed, 0, workloads, configs)
