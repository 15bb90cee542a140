"""CPU frequency governor and boost/turbo: report the state, and on --tune change it.

Every write goes through the change journal with the old content recorded first, so a
normal exit, Ctrl-C or a later `shootout doctor` (journal.recover) puts the old values back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from shootout.base.errors import ShootoutError
from shootout.conditions.sensors import cpu_dirs
from shootout.execution.fsread import read_text, under
from shootout.system.journal import Journal

PERFORMANCE = "performance"
NO_CPUFREQ = "no cpufreq on this machine; nothing to tune"


def governor_files(root: Path = Path("/")) -> dict[str, Path]:
    """CPU name -> its scaling_governor file, one per cpufreq policy (CPUs sharing a
    policy share the file through a symlink, so it is written once)."""
    files: dict[str, Path] = {}
    seen: set[Path] = set()
    for d in cpu_dirs(root):
        path = d / "cpufreq" / "scaling_governor"
        if path.exists() and (real := path.resolve()) not in seen:
            seen.add(real)
            files[d.name] = path
    return files


def governors(root: Path = Path("/")) -> dict[str, str]:
    """CPU name -> current governor, for every CPU with cpufreq."""
    return {cpu: g for cpu, path in governor_files(root).items() if (g := read_text(root, path))}


def governor_summary(root: Path = Path("/")) -> str | None:
    """"performance", or "schedutil (cpu0,cpu1), performance (cpu2)" when they differ; None without cpufreq."""
    by_gov: dict[str, list[str]] = {}
    for cpu, gov in governors(root).items():
        by_gov.setdefault(gov, []).append(cpu)
    if len(by_gov) <= 1:
        return next(iter(by_gov), None)
    return ", ".join(f"{g} ({','.join(cpus)})" for g, cpus in sorted(by_gov.items()))


def _boost_controls(root: Path) -> list[tuple[str, Path, str, str]]:
    """(kind, file, content meaning 'boost on', content meaning 'boost off') that exist here."""
    candidates = [
        ("intel_pstate", under(root, "/sys/devices/system/cpu/intel_pstate/no_turbo"), "0", "1"),
        ("cpufreq", under(root, "/sys/devices/system/cpu/cpufreq/boost"), "1", "0"),
    ]
    return [c for c in candidates if c[1].exists()]


def boost_state(root: Path = Path("/")) -> dict[str, Any] | None:
    """{"control": "intel_pstate"|"cpufreq", "enabled": bool}; None where no control exists."""
    for kind, path, on, _off in _boost_controls(root):
        if (value := read_text(root, path)) is not None:
            return {"control": kind, "enabled": value == on}
    return None


def _write(journal: Journal, description: str, path: Path, content: str) -> None:
    old = path.read_text().strip()

    def do() -> None:
        path.write_text(content)

    try:
        journal.change(description, {"write": str(path), "content": old}, do)
    except OSError as exc:
        raise ShootoutError(
            f"cannot write {path}: {exc.strerror or exc}",
            "--tune needs root; run as root or leave --tune out",
        ) from None


def tune_problem(root: Path = Path("/")) -> tuple[str, str] | None:
    """(why, fix) when --tune cannot set the performance governor here, checked before anything changes."""
    files = governor_files(root)
    if not files:
        return ("--tune: this machine has no cpufreq governor to set (no cpu*/cpufreq/scaling_governor; "
                "a VM's or a container's CPUs often have none)", "leave --tune out")
    for cpu, path in files.items():
        available = read_text(root, path.with_name("scaling_available_governors"))
        if available is not None and PERFORMANCE not in available.split():
            return (f"--tune: {cpu} offers no {PERFORMANCE} governor (only {available})",
                    "load a kernel with CONFIG_CPU_FREQ_GOV_PERFORMANCE, or leave --tune out")
        if read_text(root, path) != PERFORMANCE and not os.access(path, os.W_OK):
            return f"--tune: cannot write {path} (needs root)", "run as root, or leave --tune out"
    return None


def tune(journal: Journal, *, disable_boost: bool = False, root: Path = Path("/")) -> list[str]:
    """Set the performance governor on every CPU with cpufreq (and optionally turn boost off).

    Returns one line per thing changed or found already right. Old values are journalled
    before each write.
    """
    files = governor_files(root)
    if not files:
        return [NO_CPUFREQ]
    lines: list[str] = []
    for cpu, path in files.items():
        current = read_text(root, path)
        if current == PERFORMANCE:
            lines.append(f"{cpu}: governor already {PERFORMANCE}")
            continue
        available = read_text(root, path.with_name("scaling_available_governors"))
        if available is not None and PERFORMANCE not in available.split():
            lines.append(f"{cpu}: governor {current}; {PERFORMANCE} not offered ({available})")
            continue
        _write(journal, f"{cpu} governor {current} -> {PERFORMANCE}", path, PERFORMANCE)
        lines.append(f"{cpu}: governor {current} -> {PERFORMANCE}")
    if disable_boost:
        controls = _boost_controls(root)
        if not controls:
            lines.append("no boost/turbo control on this machine")
        for kind, path, _on, off in controls[:1]:
            if read_text(root, path) == off:
                lines.append(f"boost already off ({kind})")
            else:
                _write(journal, f"boost off ({kind})", path, off)
                lines.append(f"boost on -> off ({kind})")
    return lines
