"""Performance per dollar: speed-ups divided by price ratios, never raw values averaged.

A price is per configuration, per hour (cloud instances) or a purchase price, all in one
unit named by the caller ("$/h", "EUR"). The rows, their intervals and verdicts are the
judge's (judge/perprice.py); here they are rendered. Raw values of different workloads
(different units) are never combined: the suite row divides the geomean speed-up, which is
already unit-free. Prices come parsed (request/prices.py, or the run's stored settings).
"""

from __future__ import annotations

from typing import Any

from shootout.judge.analysis import Analysis
from shootout.judge.perprice import PerPrice, per_price
from shootout.report.text import fmt_ratio, fmt_ratio_interval, speed


def _row(row: PerPrice, prices: dict[str, float], price_unit: str) -> dict[str, Any]:
    est, ppp = row.speedup, row.per_price
    return {
        "workload": row.workload,
        "metric": row.metric,
        "baseline": row.baseline,
        "config": row.config,
        "price_unit": price_unit,
        "baseline_price": prices[row.baseline],
        "config_price": prices[row.config],
        "price_ratio": row.price_ratio,
        "speedup": est.ratio if est else None,
        "ci_low": est.low if est else None,
        "ci_high": est.high if est else None,
        "perf_per_price": ppp.ratio if ppp else None,
        "ppp_low": ppp.low if ppp else None,
        "ppp_high": ppp.high if ppp else None,
        # faster here means: more performance per unit of money than the baseline.
        "verdict": str(row.verdict),
    }


def per_dollar(analysis: Analysis, prices: dict[str, float], price_unit: str) -> list[dict[str, Any]]:
    """Rows per workload headline metric and per non-baseline configuration, then geomeans.

    perf_per_price > 1: the configuration gives more performance per unit of price than
    the baseline. The geomean row has workload "geomean" and metric "headline".
    """
    return [_row(row, prices, price_unit) for row in per_price(analysis, prices)]


def stored_prices(analysis: Analysis) -> tuple[dict[str, float], str] | None:
    """The prices `run --price` stored with the run, for a one-run analysis (a comparison
    across runs renames its configurations: it takes `report --price`)."""
    if len(analysis.runs) != 1 or not analysis.runs[0].settings.prices:
        return None
    settings = analysis.runs[0].settings
    return dict(settings.prices), settings.price_unit


def speed_text(row: dict[str, Any]) -> str:
    """A row's speed-up in the one framing of every output, or n/a."""
    return "n/a" if row["speedup"] is None else str(speed(row["speedup"], row["ci_low"], row["ci_high"]))


def price_lines(analysis: Analysis, prices: dict[str, float], price_unit: str) -> list[str]:
    """The geomean rows in words, for the terminal: one line per configuration."""
    listed = ", ".join(f"{c.display} {prices[c.name]:g}" for c in analysis.configs)
    lines = [f"prices ({price_unit}): {listed}"]
    for r in per_dollar(analysis, prices, price_unit):
        if r["workload"] != "geomean" or r["perf_per_price"] is None:
            continue
        lines.append(f"performance per {price_unit} of {r['config']} over {r['baseline']}: "
                     f"{fmt_ratio_interval(r['perf_per_price'], r['ppp_low'], r['ppp_high'])} ({r['verdict']}; "
                     f"the geomean's speed, {speed_text(r)}, is {fmt_ratio(r['speedup'])} \u00f7 price ratio "
                     f"{fmt_ratio(r['price_ratio'])})")
    return lines
