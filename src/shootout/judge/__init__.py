"""Judging: from stored trials to comparisons, verdicts carried from stats, and what explains them."""
