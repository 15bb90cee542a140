"""Performance per price: each speed-up divided by its price ratio, with the verdict of that.

A price is per configuration, per hour (cloud instances) or a purchase price, all in one unit.
For each workload's headline metric the performance-per-price of a configuration relative to
the baseline is speed-up / (price_config / price_baseline), and its interval is the speed-up's
interval divided by the same exact factor. The suite row divides the geomean speed-up.
report/perdollar.py renders these rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from shootout.base.errors import UsageError
from shootout.judge.analysis import Analysis
from shootout.stats import Estimate, Verdict, verdict


@dataclass(frozen=True)
class PerPrice:
    """One workload's headline metric (or workload "geomean", metric "headline") of one
    configuration, per unit of price relative to the baseline."""

    workload: str
    metric: str
    baseline: str
    config: str
    price_ratio: float
    speedup: Estimate | None
    per_price: Estimate | None
    # faster here means: more performance per unit of money than the baseline
    verdict: Verdict


def check_prices(names: Sequence[str], prices: dict[str, float]) -> None:
    """A positive price for every configuration, or a refusal in one line."""
    missing = [name for name in names if name not in prices]
    if missing:
        raise UsageError(
            f"no price for configuration {', '.join(missing)}",
            "give a price for every configuration, e.g. --price NAME=0.408",
        )
    for name, price in prices.items():
        if not (isinstance(price, (int, float)) and math.isfinite(price) and price > 0):
            raise UsageError(f"price of {name} must be a positive number, got {price!r}")


def _scaled(est: Estimate | None, factor: float) -> Estimate | None:
    if est is None:
        return None
    return Estimate(est.ratio / factor, est.low / factor, est.high / factor, est.n, est.confidence, est.method)


def _priced(analysis: Analysis, workload: str, metric: str, config: str, est: Estimate | None,
            prices: dict[str, float]) -> PerPrice:
    base = analysis.configs[0].name
    ratio = prices[config] / prices[base]
    ppp = _scaled(est, ratio)
    return PerPrice(workload, metric, base, config, ratio, est, ppp, verdict(ppp, analysis.threshold))


def per_price(analysis: Analysis, prices: dict[str, float]) -> list[PerPrice]:
    """Rows per workload headline metric and per non-baseline configuration, then geomeans."""
    check_prices([c.name for c in analysis.configs], prices)
    rows = []
    for cfg in analysis.configs[1:]:
        for comp in analysis.comparisons:
            if not comp.headline or comp.config != cfg.name:
                continue
            # a guard's verdict (tabs lost) is not a speed-up: no performance per price either
            est = comp.estimate if comp.decided_by is None else None
            rows.append(_priced(analysis, comp.workload, comp.metric, cfg.name, est, prices))
    order = {c.name: i for i, c in enumerate(analysis.configs)}
    for summary in sorted(analysis.summaries, key=lambda s: order.get(s.config, len(order))):
        rows.append(_priced(analysis, "geomean", "headline", summary.config, summary.geomean, prices))
    return rows
