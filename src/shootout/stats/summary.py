"""Suite summary: equal-weight geometric mean of per-workload speed-ups, bootstrap interval.

Each workload contributes exactly one series of per-round log-ratios (its headline
metric), so a tool reporting eight sub-results still counts once.

Bootstrap over rounds. One replicate draws U round indices with replacement from the
union of all workloads' rounds (U = size of that union), and every workload uses the
same draws, which keeps the correlation between workloads measured in the same round
(a noisy round hurts them all at once). A workload uses only the drawn rounds it actually
has and skips the others. Why skip rather than substitute one of its own rounds: with
adaptive stopping a decided workload may have 8 rounds while the union has 30;
substituting would average 30 draws of its 8 values and shrink its spread by sqrt(30/8),
whereas skipping averages about 8 of them, like the real estimate. If none of the draws
hits the workload's rounds, that replicate resamples its own rounds independently (same
count as it has). With every workload measured in the same rounds this is the plain
paired bootstrap. The interval is the percentile interval of the replicate means.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from shootout.stats.estimate import Estimate, as_finite_array


def _checked(log_ratios: Mapping[str, Mapping[int, float]]) -> dict[str, dict[int, float]] | None:
    """Sorted copy (order fixes the random stream), or None if some workload has < 2 rounds."""
    out: dict[str, dict[int, float]] = {}
    for name in sorted(log_ratios):
        series = log_ratios[name]
        if len(series) < 2:
            return None
        as_finite_array(list(series.values()), f"log_ratios[{name!r}]")
        out[name] = {int(r): float(v) for r, v in series.items()}
    return out or None


def _replicate_means(
    series: dict[int, float],
    position: dict[int, int],
    draws: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """One workload's mean log-ratio in every bootstrap replicate (rows of `draws`)."""
    width = len(position)
    value = np.zeros(width)
    present = np.zeros(width, dtype=bool)
    for rnd, d in series.items():
        value[position[rnd]] = d
        present[position[rnd]] = True
    hits = present[draws]
    count = hits.sum(axis=1)
    total = np.where(hits, value[draws], 0.0).sum(axis=1)
    means = np.divide(total, count, out=np.zeros(len(draws)), where=count > 0)
    missed = np.flatnonzero(count == 0)
    if missed.size:
        own = np.fromiter(series.values(), dtype=float)
        means[missed] = rng.choice(own, size=(missed.size, own.size)).mean(axis=1)
    return means


def geomean(
    log_ratios: Mapping[str, Mapping[int, float]],
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Estimate | None:
    """Equal-weight geomean speed-up: exp(mean over workloads of each workload's mean d_r).

    `log_ratios` maps workload -> {round index -> d_r}. Returns None for an empty mapping
    or when any workload has fewer than 2 rounds. Deterministic for a given seed.
    Estimate.n is the number of distinct rounds across workloads.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    checked = _checked(log_ratios)
    if checked is None:
        return None
    rounds = sorted(set().union(*(s.keys() for s in checked.values())))
    position = {rnd: i for i, rnd in enumerate(rounds)}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(rounds), size=(n_boot, len(rounds)))

    point = float(np.mean([np.mean(list(s.values())) for s in checked.values()]))
    boot = np.mean([_replicate_means(s, position, draws, rng) for s in checked.values()], axis=0)
    alpha = 1.0 - confidence
    low, high = np.quantile(boot, [alpha / 2.0, 1.0 - alpha / 2.0])
    return Estimate(
        ratio=math.exp(point),
        low=math.exp(float(low)),
        high=math.exp(float(high)),
        n=len(rounds),
        confidence=confidence,
        method="bootstrap",
    )


def geomean_by_category(
    log_ratios: Mapping[str, Mapping[int, float]],
    categories: Mapping[str, str],
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Estimate | None]:
    """geomean() of each category's workloads, keyed by category (sorted).

    `categories` maps workload -> category and may name workloads absent from
    `log_ratios`; a workload in `log_ratios` without a category is an error rather
    than being silently left out of every summary.
    """
    uncategorised = sorted(set(log_ratios) - set(categories))
    if uncategorised:
        raise ValueError(f"workloads without a category: {', '.join(uncategorised)}")
    groups: dict[str, dict[str, Mapping[int, float]]] = {}
    for name, series in log_ratios.items():
        groups.setdefault(categories[name], {})[name] = series
    return {
        cat: geomean(groups[cat], confidence=confidence, n_boot=n_boot, seed=seed)
        for cat in sorted(groups)
    }


def unpaired_geomean(
    samples: Mapping[str, tuple[list[float], list[float]]],
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Estimate | None:
    """Geomean speed-up of B over A from unpaired runs: workload -> (log perf A, log perf B).

    Each workload's effect is mean(log B) - mean(log A); with no rounds to pair, the
    bootstrap resamples A's and B's values independently within each workload.
    """
    checked = {name: samples[name] for name in sorted(samples)}
    if not checked or any(len(a) < 2 or len(b) < 2 for a, b in checked.values()):
        return None
    rng = np.random.default_rng(seed)
    effects = np.zeros(n_boot)
    point = 0.0
    for a_list, b_list in checked.values():
        a = as_finite_array(a_list, "log perf A")
        b = as_finite_array(b_list, "log perf B")
        point += b.mean() - a.mean()
        effects += rng.choice(b, size=(n_boot, b.size)).mean(axis=1) - rng.choice(a, size=(n_boot, a.size)).mean(axis=1)
    k = len(checked)
    alpha = 1.0 - confidence
    low, high = np.quantile(effects / k, [alpha / 2, 1 - alpha / 2])
    return Estimate(math.exp(point / k), math.exp(low), math.exp(high),
                    sum(len(a) + len(b) for a, b in checked.values()), confidence, "bootstrap-unpaired")
