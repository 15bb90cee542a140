"""Workloads a run lost: said in the summary sentence and above every table, since a geometric
mean over fewer workloads than asked for reads like a complete answer otherwise."""

from __future__ import annotations

from shootout.judge.analysis import Analysis


def lost_workloads(analysis: Analysis) -> dict[str, tuple[str | None, str]]:
    """Workload -> (the configuration it failed on, the reason), over the analysis's runs."""
    out: dict[str, tuple[str | None, str]] = {}
    for run in analysis.runs:
        for name, lost in run.lost_workloads.items():
            out.setdefault(name, (lost.config, lost.reason))
    return out


def _where(analysis: Analysis, config: str | None) -> str:
    shown = next((c.display for c in analysis.configs if c.name == config), config)
    return f" on {shown}" if shown else ""


def _left_out(analysis: Analysis) -> set[str]:
    """The workloads the budget left out (measure/stopping.py): not failed, never measured."""
    return {name for run in analysis.runs for name, lost in run.lost_workloads.items() if lost.left_out}


def lost_phrase(analysis: Analysis) -> str | None:
    """For the summary sentence: 'without membw, which failed on i386'."""
    lost = lost_workloads(analysis)
    if not lost:
        return None
    left = _left_out(analysis)
    parts = [f"{name}, which the budget left out" if name in left else f"{name}, which failed{_where(analysis, config)}"
             for name, (config, _) in lost.items()]
    return "without " + "; ".join(parts)


def lost_notices(analysis: Analysis) -> list[str]:
    """One line per lost workload, with its reason: for the top of a report."""
    left = _left_out(analysis)
    return [f"{name} was not measured: "
            + (reason[:200] if name in left else f"it failed{_where(analysis, config)} ({reason[:200]})")
            + "; the geometric mean leaves it out"
            for name, (config, reason) in lost_workloads(analysis).items()]
