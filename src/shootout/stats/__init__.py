"""Pure statistics: paired and unpaired estimates, verdicts, suite geomeans and flags."""

from shootout.stats.estimate import MIN_PAIRED_ROUNDS, Estimate
from shootout.stats.flags import cv, has_trend, outlier_fraction, trial_flags
from shootout.stats.paired import paired_estimate
from shootout.stats.summary import geomean, geomean_by_category, unpaired_geomean
from shootout.stats.unpaired import unpaired_estimate
from shootout.stats.verdict import Verdict, decided, verdict

__all__ = [
    "MIN_PAIRED_ROUNDS",
    "Estimate",
    "Verdict",
    "cv",
    "decided",
    "geomean",
    "geomean_by_category",
    "has_trend",
    "outlier_fraction",
    "paired_estimate",
    "trial_flags",
    "unpaired_estimate",
    "unpaired_geomean",
    "verdict",
]
