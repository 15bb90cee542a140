"""shootout.toml's tables written back as TOML text (`shootout experiments NAME --toml`).

Only what a run file holds: [run], [[config]], [[workload]] and [params.WORKLOAD] tables whose
values are strings, numbers, booleans, lists and inline tables. tomllib reads; nothing in the
standard library writes, and these few value kinds do not need a library.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
SECTIONS = ("run", "config", "workload", "params")
COMMENT_WIDTH = 100


def key(name: str) -> str:
    """A key as TOML takes it: bare where it can be ("sha1-sparse"), quoted where not ("vm.dirty_ratio")."""
    return name if _BARE.match(name) else json.dumps(name)


def value(item: Any) -> str:
    """One value: a basic string (JSON's escapes are TOML's), a number, a list or an inline table."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, float):
        if not math.isfinite(item):
            raise ValueError(f"TOML has no place in a run file for {item!r}")
        return repr(item)
    if isinstance(item, str):
        return json.dumps(item, ensure_ascii=False)
    if isinstance(item, Mapping):
        return "{ " + ", ".join(f"{key(str(k))} = {value(v)}" for k, v in item.items()) + " }" if item else "{}"
    if isinstance(item, Sequence):
        return "[" + ", ".join(value(v) for v in item) + "]"
    raise ValueError(f"TOML has no value for {type(item).__name__}")


def _table(header: str, table: Mapping[str, Any]) -> list[str]:
    return [header, *(f"{key(k)} = {value(v)}" for k, v in table.items()), ""]


def dumps(data: Mapping[str, Any], comments: Sequence[str] = ()) -> str:
    """A run file's text: the comments first (each a '# ' line), then [run], the [[config]] and
    [[workload]] tables, then a [params.WORKLOAD] table for each workload."""
    if unknown := set(data) - set(SECTIONS):
        raise ValueError(f"not a run file's section: {', '.join(sorted(unknown))}")
    lines = [wrapped for line in comments
             for wrapped in textwrap.wrap(line, COMMENT_WIDTH, initial_indent="# ", subsequent_indent="#   ",
                                          break_long_words=False, break_on_hyphens=False) or ["#"]]
    lines += [""] if lines else []
    if data.get("run"):
        lines += _table("[run]", data["run"])
    for section in ("config", "workload"):
        for table in data.get(section, []):
            lines += _table(f"[[{section}]]", table)
    for name, table in data.get("params", {}).items():
        lines += _table(f"[params.{key(name)}]", table)
    return "\n".join(lines).rstrip("\n") + "\n"
