"""`shootout run --set WORKLOAD.PARAM=VALUE`: one parameter from the command line, and the check
every parameter passes (the command line's and a file's or an experiment's [params] tables).

Precedence, key by key: --set > the [params.WORKLOAD] table of --file or the experiment > the
workload's default. A value is read as TOML reads one (5, 2.5, true, "text", [1, 2]); a bare word
that TOML cannot read is a string (--set vpn.tunnel=openvpn). A workload's parameters are the keys
of its default_params (workloads/contract.py): every parameter a workload reads has a default
there, so a key that is not among them would be silently unused, and is refused instead.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from shootout.base.errors import UsageError
from shootout.execution.placefacts import TargetFacts
from shootout.workloads.contract import DEFAULT_TIMEOUT_S, TIMEOUT_PARAM, Workload

_SET = re.compile(r"^(?P<workload>[A-Za-z0-9][A-Za-z0-9_.-]*?)\.(?P<param>[a-z_][a-z0-9_]*)=(?P<value>.*)$", re.DOTALL)
Params = dict[str, dict[str, Any]]


def parse_value(text: str) -> Any:
    """A value as TOML types it; a bare word TOML cannot read is a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:/+-]*", text):
            return text
        raise UsageError(f"--set: {text!r} is not a value", 'write a number, true/false, a word, "a string" '
                                                            "or [a, list]") from None


def parse_sets(texts: Iterable[str]) -> Params:
    """--set options into workload -> parameter -> value (a later one for the same key wins)."""
    out: Params = {}
    for text in texts:
        match = _SET.match(text.strip())
        if match is None:
            raise UsageError(f"--set {text!r} is not WORKLOAD.PARAM=VALUE", "e.g. --set lame.minutes=23.5")
        out.setdefault(match["workload"], {})[match["param"]] = parse_value(match["value"].strip())
    return out


def merged(tables: Mapping[str, Mapping[str, Any]], sets: Mapping[str, Mapping[str, Any]]) -> Params:
    """The file's or the experiment's [params] tables with --set's keys over them, key by key."""
    out = {name: dict(table) for name, table in tables.items()}
    for name, table in sets.items():
        out[name] = {**out.get(name, {}), **table}
    return out


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a table"


def _fits(default: Any, value: Any) -> bool:
    """A value of the default's kind: a number for a number (5 for 2.5, 2.5 for 5), never a bool for one."""
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float))
    return _kind(default) == _kind(value)


def check_params(workloads: Iterable[Workload], params: Mapping[str, Mapping[str, Any]], said: str) -> None:
    """Every parameter names one of its workload's, with a value of that parameter's kind.
    said: where they were given, for the message ("--set", "experiment rpi64")."""
    by_name = {w.spec.name: w for w in workloads}
    for name, table in params.items():
        workload = by_name.get(name)
        if workload is None:
            raise UsageError(f"{said}: {name!r} is not a workload of this run",
                             f"this run's workloads: {', '.join(by_name) or 'none'}")
        # the trial's timeout is every workload's (measure/trial.py), its own default where it has one
        defaults = {TIMEOUT_PARAM: DEFAULT_TIMEOUT_S, **workload.default_params(TargetFacts())}
        for param, value in table.items():
            if param not in defaults:
                allowed = ", ".join(sorted(defaults)) or "none (it takes no parameters)"
                raise UsageError(f"{said}: {name} has no parameter {param!r}", f"{name}'s parameters: {allowed}")
            if defaults[param] is not None and not _fits(defaults[param], value):
                raise UsageError(f"{said}: {name}.{param} = {value!r} is not {_kind(defaults[param])}",
                                 f"its default: {name}.{param} = {defaults[param]!r}")
