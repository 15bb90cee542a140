"""Confounders: facts of two configurations that differ and could explain a difference
between them (versions of what ran, the compiler, the libc, the input, hardware code paths)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from shootout.base.runfacts import dig


def _flatten(facts: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(facts, dict):
        return {prefix: facts}
    flat: dict[str, Any] = {}
    for key, value in facts.items():
        flat.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


# Facts that are confounders when they differ: versions of what ran (every tool a workload
# declares in Prepared.versions), the compiler, the libc, the input, hardware code paths.
# The ABI itself (ELF class, machine) is the point of a 32/64-bit comparison, so it is not.
_CONFOUNDER_FACTS = {"compiler", "cc", "libc", "openssl", "hw_paths", "input_sha256", "code_path"}


def _is_confounder(key: str) -> bool:
    last = key.rsplit(".", 1)[-1]
    return (last in _CONFOUNDER_FACTS or "version" in last or key.startswith("target.packages.")
            or key.startswith("workload.versions."))


# Words a tool's version string uses to name the architecture or word size it was built for
# ("LAME 64bits version 3.100" vs "LAME 32bits version 3.100"): in a 64/32-bit comparison they
# differ by design, so two versions that differ only there are the same version.
_ABI_WORDS = re.compile(r"\b(?:(?:32|64)[- ]?bits?|x86[-_]64|amd64|i[3-6]86|aarch64|arm64|armhf|armel|"
                        r"armv[5-8][a-z0-9]*|x86|x64|ia32|ilp32|lp64)\b", re.IGNORECASE)


def _without_abi(value: Any) -> Any:
    return " ".join(_ABI_WORDS.sub(" ", value).split()) if isinstance(value, str) else value


def confounders(facts_a: Mapping[str, Any], facts_b: Mapping[str, Any], workload: str,
                metric: str | None = None) -> list[str]:
    """Facts of the two configurations that differ and could explain a difference.

    A workload's `code_paths` ({metric: path}) concern one metric each: only that metric's
    path is compared. Values that differ only by a word naming the architecture or word size
    (the difference a 64/32-bit comparison is about) are the same.
    """

    def relevant(facts: Mapping[str, Any]) -> dict[str, Any]:
        mine = dict(dig(facts, "workloads", workload, default={}))
        paths = mine.pop("code_paths", None) or {}
        if metric in paths:
            mine["code_path"] = paths[metric]
        scoped = {"target": dict(dig(facts, "target", default={})), "workload": mine}
        return {k: v for k, v in _flatten(scoped).items() if _is_confounder(k)}

    a, b = relevant(facts_a), relevant(facts_b)
    return [f"{key.split('.', 1)[1]}: {a.get(key)} vs {b.get(key)}"
            for key in sorted(a.keys() | b.keys())
            if key in a and key in b and _without_abi(a[key]) != _without_abi(b[key])]


def is_emulated(facts: Mapping[str, Any]) -> bool:
    """Whether a configuration's facts (RunFacts.side) say it ran under an emulator."""
    return bool(dig(facts, "target", "emulated"))
