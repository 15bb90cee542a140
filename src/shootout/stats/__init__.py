"""Pure statistics: paired and unpaired estimates, the rule behind verdicts, geomeans and flags."""

from shootout.stats.design import Design
from shootout.stats.estimate import MIN_PAIRED_ROUNDS, Estimate
from shootout.stats.flags import cv, has_trend, outlier_fraction, trial_flags
from shootout.stats.paired import paired_estimate
from shootout.stats.resolution import Resolution, resolution, smallest_resolvable
from shootout.stats.runs import across_runs, between_runs
from shootout.stats.summary import (
    geomean,
    geomean_by_category,
    too_few_rounds,
    unpaired_geomean,
)
from shootout.stats.unpaired import unpaired_estimate
from shootout.stats.verdict import Verdict, decided, verdict

__all__ = [
    "MIN_PAIRED_ROUNDS",
    "Design",
    "Estimate",
    "Resolution",
    "Verdict",
    "across_runs",
    "between_runs",
    "cv",
    "decided",
    "geomean",
    "geomean_by_category",
    "has_trend",
    "outlier_fraction",
    "paired_estimate",
    "resolution",
    "smallest_resolvable",
    "too_few_rounds",
    "trial_flags",
    "unpaired_estimate",
    "unpaired_geomean",
    "verdict",
]
