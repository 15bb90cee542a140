"""`--price CONFIG=PRICE`: read as typed (`run` and `show` take the same option), and checked
against the configurations they price."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shootout.base.errors import UsageError
from shootout.judge.perprice import check_prices

__all__ = ["check_prices", "parse_prices", "read_prices"]


def read_prices(items: Sequence[str]) -> dict[str, float]:
    """`--price CONFIG=PRICE` (repeatable) -> {config: price}; a bad item is refused in one line."""
    prices = {}
    for item in items:
        name, _, value = item.rpartition("=")
        try:
            prices[name] = float(value)
        except ValueError:
            raise UsageError(f"--price {item!r} is not CONFIG=PRICE", "e.g. --price ssh:host-a=0.408") from None
    return prices


def parse_prices(items: Sequence[str] | Mapping[str, float], names: Sequence[str]) -> dict[str, float]:
    """`--price CONFIG=PRICE` items (or prices already read) -> {config: price}; a bad item or an
    unknown name is refused in one line."""
    prices = dict(items) if isinstance(items, Mapping) else read_prices(items)
    unknown = set(prices) - set(names)
    if unknown:
        raise UsageError(f"--price names unknown configuration(s) {', '.join(sorted(unknown))}",
                         "use: " + ", ".join(names))
    return prices
