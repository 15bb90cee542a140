"""Verdicts: compare an interval with a practical threshold delta (beyond it: faster/slower; inside: same)."""

from __future__ import annotations

from enum import StrEnum

from shootout.stats.estimate import Estimate


class Verdict(StrEnum):
    FASTER = "faster"
    SLOWER = "slower"
    SAME = "same"
    INCONCLUSIVE = "inconclusive"
    # A sub-metric: shown as an estimate with its interval, deliberately not judged (only
    # headline metrics get verdicts, with their error controlled across the run).
    ESTIMATE = "estimate"
    # Decided by a workload's guard (tabs lost), not by the speed-up: a setup that lost more
    # than the baseline is worse, one that lost less is better, whatever its latency says.
    # Never "faster" or "slower", so the word cannot contradict the speed-up beside it.
    BETTER = "better"
    WORSE = "worse"
    # A headline or a geomean that gets no verdict for a reason other than its interval (emulated
    # results; a round before the rule's first look; a suite whose speed-ups a guard set aside).
    # The judge carries the reason beside it; an estimate, where there is one, is still shown.
    NOT_JUDGED = "not judged"


def verdict(est: Estimate | None, threshold: float) -> Verdict:
    """Classify an estimate against delta = `threshold` (0.01 = 1%).

    faster: the whole interval is above 1+delta (strictly); slower: wholly below
    1/(1+delta) (strictly); same: wholly inside [1/(1+delta), 1+delta] (bounds included);
    otherwise, or with no estimate, inconclusive. The band is symmetric on the log scale,
    so swapping A and B swaps faster and slower and leaves same alone.
    """
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold!r}")
    if est is None:
        return Verdict.INCONCLUSIVE
    upper = 1.0 + threshold
    lower = 1.0 / upper
    if est.low > upper:
        return Verdict.FASTER
    if est.high < lower:
        return Verdict.SLOWER
    if est.low >= lower and est.high <= upper:
        return Verdict.SAME
    return Verdict.INCONCLUSIVE


def decided(est: Estimate | None, threshold: float, precision: float) -> bool:
    """Whether the stopping rule may stop measuring this metric.

    Either it has a verdict, or its interval is already narrower than the target precision
    (more rounds would not make an honest difference to the report).
    """
    if est is None:
        return False
    return verdict(est, threshold) is not Verdict.INCONCLUSIVE or est.half_width() < precision
