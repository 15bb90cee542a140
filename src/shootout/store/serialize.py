"""Model records <-> JSON-able dicts, for the database's JSON columns and results files.

To-dict output holds only JSON types (dicts, lists, str, numbers, bool, None), so
`json.loads(json.dumps(d)) == d`. From-dict rebuilds the frozen dataclasses explicitly,
turning lists back into tuples, so a record compares equal after a round trip. Malformed
input raises StoreError with a one-line message saying where.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from shootout.base.errors import StoreError
from shootout.base.model import (
    Config,
    Metric,
    Run,
    RunSettings,
    Trial,
    TrialSpec,
    UserspaceRef,
    WorkloadSpec,
)
from shootout.base.runfacts import BudgetRefusal, LostWorkload, RunFacts

_HINT = "the data is not a shootout results record, or it is damaged"

# Scalar annotations (model.py uses postponed annotations, so these are strings).
_SCALARS: dict[str, tuple[type, ...]] = {
    "float": (float, int),
    "int": (int,),
    "bool": (bool,),
    "str": (str,),
    "str | None": (str, type(None)),
}


def jsonable(value: Any) -> Any:
    """Tuples become lists, recursively, so the value survives JSON unchanged."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _bad(where: str, problem: str) -> StoreError:
    return StoreError(f"malformed {where}: {problem}", _HINT)


def _mapping(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _bad(where, f"expected an object, got {type(data).__name__}")
    return data


def _fields(cls: type, data: Any, where: str) -> dict[str, Any]:
    """The dataclass's fields found in data, with required ones checked and scalars typed."""
    data = _mapping(data, where)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise _bad(where, f"missing key {f.name!r}")
            continue
        value: Any = data[f.name]
        kinds = _SCALARS.get(str(f.type))
        if kinds is not None:
            # bool is an int to Python, but never a valid count or measurement here.
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                raise _bad(where, f"{f.name!r} should be {f.type}, got {value!r}")
            if kinds[0] is float:
                value = float(cast(float, value))  # ints in JSON stand for floats too
        out[f.name] = value
    return out


def _str_tuple(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise _bad(where, f"expected a list of strings, got {value!r}")
    return tuple(value)


def _pairs(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, (list, tuple)):
        raise _bad(where, f"expected a list of [key, value] pairs, got {value!r}")
    pairs = []
    for pair in value:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise _bad(where, f"expected a [key, value] pair, got {pair!r}")
        pairs.append((str(pair[0]), str(pair[1])))
    return tuple(pairs)


def _dict(value: Any, where: str) -> dict[str, Any]:
    return dict(_mapping(value, where))


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise _bad(where, f"expected a list, got {type(value).__name__}")
    return list(value)


def config_to_dict(config: Config) -> dict[str, Any]:
    return jsonable(dataclasses.asdict(config))


def config_from_dict(data: Any) -> Config:
    where = f"configuration {data.get('name', '?') if isinstance(data, dict) else '?'}"
    kw = _fields(Config, data, where)
    for key in ("cflags",):
        if key in kw:
            kw[key] = _str_tuple(kw[key], f"{where} {key}")
    for key in ("env", "options"):
        if key in kw:
            kw[key] = _pairs(kw[key], f"{where} {key}")
    if "parts" in kw:
        kw["parts"] = _dict(kw["parts"], f"{where} parts")
    if kw.get("userspace_ref") is not None:
        kw["userspace_ref"] = UserspaceRef(**_fields(UserspaceRef, kw["userspace_ref"], f"{where} userspace_ref"))
    return Config(**kw)


def workload_to_dict(spec: WorkloadSpec) -> dict[str, Any]:
    return jsonable(dataclasses.asdict(spec))


def workload_from_dict(data: Any) -> WorkloadSpec:
    where = f"workload {data.get('name', '?') if isinstance(data, dict) else '?'}"
    kw = _fields(WorkloadSpec, data, where)
    for key in ("metrics", "recorded"):
        if key not in kw:
            continue
        if not isinstance(kw[key], (list, tuple)):
            raise _bad(where, f"{key!r} should be a list, got {kw[key]!r}")
        kw[key] = tuple(Metric(**_fields(Metric, m, f"{where} metric")) for m in kw[key])
    return WorkloadSpec(**kw)


def run_to_dict(run: Run) -> dict[str, Any]:
    return jsonable(dataclasses.asdict(run))


def run_from_dict(data: Any) -> Run:
    kw = _fields(Run, data, "run")
    settings = dict(_mapping(kw["settings"], "run settings"))
    settings.setdefault("repeats", 0)  # stored before --repeats existed: every trial was kept as it came
    kw["settings"] = RunSettings(**_fields(RunSettings, settings, "run settings"))
    for key, build in (("configs", config_from_dict), ("workloads", workload_from_dict)):
        if not isinstance(kw[key], (list, tuple)):
            raise _bad("run", f"{key!r} should be a list, got {kw[key]!r}")
        kw[key] = [build(item) for item in kw[key]]
    for key in ("params", "user_workloads", "lost", "headline_clocks", "counters"):
        if key in kw:
            kw[key] = _dict(kw[key], f"run {key}")
    kw["facts"] = _run_facts(kw["facts"])
    if "lost_workloads" in kw:
        kw["lost_workloads"] = {str(name): LostWorkload(**_fields(LostWorkload, lost, f"lost workload {name}"))
                                for name, lost in _mapping(kw["lost_workloads"], "run lost_workloads").items()}
    if kw.get("calibrated") is not None:
        kw["calibrated"] = list(_str_tuple(kw["calibrated"], "run calibrated"))
    if kw.get("budget_refused") is not None:
        kw["budget_refused"] = BudgetRefusal(**_fields(BudgetRefusal, kw["budget_refused"], "run budget_refused"))
    if "set_aside" in kw:
        kw["set_aside"] = [_dict(a, "a set-aside attempt") for a in _list(kw["set_aside"], "run set_aside")]
    if kw.get("across_boots") is not None:
        kw["across_boots"] = _dict(kw["across_boots"], "run across_boots")
    return Run(**kw)


def _run_facts(data: Any) -> RunFacts:
    kw = _fields(RunFacts, data, "run facts")
    sides = _dict(kw.get("sides", {}), "run facts sides")
    return RunFacts(machine=_dict(kw.get("machine", {}), "run facts machine"),
                    sides={str(name): _dict(side, f"facts of {name}") for name, side in sides.items()})


def trial_to_dict(trial: Trial) -> dict[str, Any]:
    return jsonable(dataclasses.asdict(trial))


def trial_from_dict(data: Any) -> Trial:
    kw = _fields(Trial, data, "trial")
    spec = TrialSpec(**_fields(TrialSpec, kw["spec"], "trial spec"))
    where = f"trial round {spec.round} {spec.workload} on {spec.config}"
    values = _mapping(kw["values"], f"{where} values")
    for name, value in values.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _bad(where, f"value of {name!r} should be a number, got {value!r}")
    kw["spec"] = spec
    kw["values"] = {str(name): float(value) for name, value in values.items()}
    for key in ("monitor", "in_force", "observed"):
        if key in kw:
            kw[key] = _dict(kw[key], f"{where} {key}")
    return Trial(**kw)
