"""The plan: which trial runs when. Pure: the same seed gives the same order.

Round 0 is the warm-up round (one discarded trial per workload and configuration);
rounds 1.. are measured. Each round runs every (workload, configuration) pair once,
in an order shuffled from the run's seed and the round number, so configurations
interleave and slow drifts of the machine hit all of them alike.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from shootout.model import TrialSpec


def round_order(seed: int, round_index: int, workloads: Sequence[str], configs: Sequence[str]) -> list[TrialSpec]:
    pairs = [(w, c) for w in workloads for c in configs]
    # A string seed is hashed deterministically by random.Random (unlike hash(), which is salted).
    random.Random(f"shootout:{seed}:{round_index}").shuffle(pairs)
    return [TrialSpec(round_index, i, w, c) for i, (w, c) in enumerate(pairs)]


def warmup_order(seed: int, workloads: Sequence[str], configs: Sequence[str]) -> list[TrialSpec]:
    return round_order(seed, 0, workloads, configs)
