"""Performance per dollar: speed-ups divided by price ratios, never raw values averaged.

A price is per configuration, per hour (cloud instances) or a purchase price, all in one
unit named by the caller ("$/h", "EUR"). For each workload's headline metric the
performance-per-price of a configuration relative to the baseline is

    speed-up / (price_config / price_baseline)

and its interval is the speed-up's interval divided by the same exact factor. Raw values
of different workloads (different units) are never combined: the suite row divides the
geomean speed-up, which is already unit-free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from shootout.base.errors import UsageError
from shootout.judge.analysis import Analysis
from shootout.report.text import baseline, headline_comparisons, iter_summaries, others
from shootout.stats import Estimate, verdict


def parse_prices(items: Sequence[str], names: Sequence[str]) -> dict[str, float]:
    """`--price CONFIG=PRICE` (repeatable) -> {config: price}; a bad item or an unknown name is
    refused in one line (`run` and `report` take the same option)."""
    prices = {}
    for item in items:
        name, _, value = item.rpartition("=")
        try:
            prices[name] = float(value)
        except ValueError:
            raise UsageError(f"--price {item!r} is not CONFIG=PRICE", "e.g. --price ssh:host-a=0.408") from None
    unknown = set(prices) - set(names)
    if unknown:
        raise UsageError(f"--price names unknown configuration(s) {', '.join(sorted(unknown))}",
                         "use: " + ", ".join(names))
    return prices


def check_prices(names: Sequence[str], prices: dict[str, float]) -> None:
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


def _row(analysis: Analysis, workload: str, metric: str, config: str, est: Estimate | None,
         prices: dict[str, float], price_unit: str) -> dict[str, Any]:
    base = baseline(analysis).name
    ratio = prices[config] / prices[base]
    ppp = _scaled(est, ratio)
    return {
        "workload": workload,
        "metric": metric,
        "baseline": base,
        "config": config,
        "price_unit": price_unit,
        "baseline_price": prices[base],
        "config_price": prices[config],
        "price_ratio": ratio,
        "speedup": est.ratio if est else None,
        "ci_low": est.low if est else None,
        "ci_high": est.high if est else None,
        "perf_per_price": ppp.ratio if ppp else None,
        "ppp_low": ppp.low if ppp else None,
        "ppp_high": ppp.high if ppp else None,
        # faster here means: more performance per unit of money than the baseline.
        "verdict": str(verdict(ppp, analysis.threshold)),
    }


def per_dollar(analysis: Analysis, prices: dict[str, float], price_unit: str) -> list[dict[str, Any]]:
    """Rows per workload headline metric and per non-baseline configuration, then geomeans.

    perf_per_price > 1: the configuration gives more performance per unit of price than
    the baseline. The geomean row has workload "geomean" and metric "headline".
    """
    check_prices([c.name for c in analysis.configs], prices)
    rows = []
    for cfg in others(analysis):
        for comp in headline_comparisons(analysis, cfg.name):
            # a guard's verdict (tabs lost) is not a speed-up: no performance per price either
            est = comp.estimate if comp.decided_by is None else None
            rows.append(_row(analysis, comp.workload, comp.metric, cfg.name, est, prices, price_unit))
    for summary in iter_summaries(analysis):
        rows.append(_row(analysis, "geomean", "headline", summary.config, summary.geomean, prices, price_unit))
    return rows


def stored_prices(analysis: Analysis) -> tuple[dict[str, float], str] | None:
    """The prices `run --price` stored with the run, for a one-run analysis (a comparison
    across runs renames its configurations: it takes `report --price`)."""
    if len(analysis.runs) != 1 or not analysis.runs[0].settings.prices:
        return None
    settings = analysis.runs[0].settings
    return dict(settings.prices), settings.price_unit


def price_lines(analysis: Analysis, prices: dict[str, float], price_unit: str) -> list[str]:
    """The geomean rows in words, for the terminal: one line per configuration."""
    listed = ", ".join(f"{c.display} {prices[c.name]:g}" for c in analysis.configs)
    lines = [f"prices ({price_unit}): {listed}"]
    for r in per_dollar(analysis, prices, price_unit):
        if r["workload"] != "geomean" or r["perf_per_price"] is None:
            continue
        lines.append(f"performance per {price_unit} of {r['config']} over {r['baseline']}: "
                     f"{r['perf_per_price']:.3f}\u00d7 [{r['ppp_low']:.3f}, {r['ppp_high']:.3f}] ({r['verdict']}; "
                     f"geomean speed-up {r['speedup']:.3f}\u00d7 \u00f7 price ratio {r['price_ratio']:.3f})")
    return lines
