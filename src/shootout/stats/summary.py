"""Suite summary: equal-weight geometric mean of per-workload speed-ups, with a t-interval.

G = mean over workloads of each workload's mean d_r. Each workload contributes exactly one
series (its headline metric), so a tool reporting eight sub-results still counts once.

Interval. Rounds are the independent units (a noisy round hurts every workload measured in
it), so the variance of G is estimated with the delete-one-round jackknife: leave round r
out of every workload that has it, recompute G, and V = (R-1)/R * sum_r (G_-r - mean)^2.
When every workload has every round this is exactly var(per-round suite means) / R, and
exp(G +- t_{R-1} sqrt(V)) is the ordinary t-interval on per-round suite means (n-1 degrees of
freedom). When workloads stopped after different numbers of rounds (the runner stops each
one once it is decided), the jackknife errs on the wide side (a workload's own term is
scaled by (R-1) n_w / (R (n_w-1)) >= 1) and the degrees of freedom are taken from the
workload with fewest rounds (n_min - 1), also on the safe side. The percentile bootstrap
used before covered only 85% at 6 rounds and 90% at 10 for a nominal 95%.

A workload with fewer than MIN_PAIRED_ROUNDS rounds is left out by the caller, which says so
(see analysis.summarize); it does not take the whole geomean with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.special import stdtrit

from shootout.stats.estimate import MIN_PAIRED_ROUNDS, Estimate, as_finite_array

GEOMEAN_MIN_ROUNDS = MIN_PAIRED_ROUNDS


def t_estimate(centre: float, variance: float, df: float, confidence: float, n: int, method: str,
               rule: str = "") -> Estimate:
    """exp(centre +- t_df * sqrt(variance)) as an Estimate."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    half = float(stdtrit(df, 0.5 + confidence / 2.0)) * math.sqrt(max(variance, 0.0))
    return Estimate(math.exp(centre), math.exp(centre - half), math.exp(centre + half), n, confidence, method, rule)


def too_few_rounds(log_ratios: Mapping[str, Mapping[int, float]]) -> dict[str, int]:
    """Workloads that cannot enter a geomean, with their round counts."""
    return {name: len(series) for name, series in log_ratios.items() if len(series) < GEOMEAN_MIN_ROUNDS}


def geomean(log_ratios: Mapping[str, Mapping[int, float]], confidence: float = 0.95) -> Estimate | None:
    """Equal-weight geomean speed-up exp(mean over workloads of mean d_r), jackknife t-interval.

    `log_ratios` maps workload -> {round index -> d_r}; every workload needs at least
    GEOMEAN_MIN_ROUNDS rounds (callers drop the others, see too_few_rounds). Returns None for
    an empty mapping. Estimate.n is the number of distinct rounds.
    """
    short = too_few_rounds(log_ratios)
    if short:
        raise ValueError(f"workloads with fewer than {GEOMEAN_MIN_ROUNDS} rounds: {', '.join(sorted(short))}")
    if not log_ratios:
        return None
    rounds = sorted(set().union(*(s.keys() for s in log_ratios.values())))
    where = {r: i for i, r in enumerate(rounds)}
    n_work = len(log_ratios)
    shift = np.zeros(len(rounds))  # G_-r - G for every round r
    point = 0.0
    for name, series in log_ratios.items():
        d = as_finite_array(list(series.values()), f"log_ratios[{name!r}]")
        mean = float(d.mean())
        point += mean / n_work
        idx = [where[r] for r in series]
        shift[idx] -= (d - mean) / ((len(d) - 1) * n_work)
    big_r = len(rounds)
    variance = (big_r - 1) / big_r * float(np.sum((shift - shift.mean()) ** 2))
    df = min(len(s) for s in log_ratios.values()) - 1
    return t_estimate(point, variance, df, confidence, big_r, "t (jackknife over rounds)")


def geomean_by_category(
    log_ratios: Mapping[str, Mapping[int, float]],
    categories: Mapping[str, str],
    confidence: float = 0.95,
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
    return {cat: geomean(groups[cat], confidence=confidence) for cat in sorted(groups)}


def welch_df(variances: Sequence[float], counts: Sequence[int]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of independent s_i^2/n_i terms."""
    total = sum(variances)
    denom = sum(v * v / (n - 1) for v, n in zip(variances, counts) if v > 0)
    return total * total / denom if denom > 0 else float(min(counts) - 1)


def unpaired_geomean(samples: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                     confidence: float = 0.95) -> Estimate | None:
    """Geomean speed-up of B over A from unpaired samples: workload -> (log perf A, log perf B).

    Each workload's effect is mean(log B) - mean(log A); the interval is Welch's, with the
    sampling variances of all the means summed and Welch–Satterthwaite degrees of freedom.
    It holds for the values it is given: between-run variation enters only if the values
    are run means (crossrun does that when each side has several runs).
    """
    if not samples or any(len(a) < 2 or len(b) < 2 for a, b in samples.values()):
        return None
    k = len(samples)
    point, parts, counts = 0.0, [], []
    for name in sorted(samples):
        a = as_finite_array(samples[name][0], "log perf A")
        b = as_finite_array(samples[name][1], "log perf B")
        point += (b.mean() - a.mean()) / k
        for side in (a, b):
            parts.append(float(side.var(ddof=1)) / side.size / k**2)
            counts.append(side.size)
    return t_estimate(point, sum(parts), welch_df(parts, counts), confidence, sum(counts), "welch")
