"""The run's timeline: what the monitors sampled while it ran, one line per machine.

This machine's monitor keeps its samples in Run.facts.machine; a remote configuration's
machine (ssh, a VM's guest) is sampled there by its helper and kept in Run.facts.side(config). One
panel per quantity (clock, temperature, steal, throttle events), drawn only where some
machine has readings, on a shared axis of minutes since the first sample. A comparison
across runs has no one timeline (its runs may be days apart): none is drawn.

Two clocks, labelled apart: what the kernel reports (cpufreq, else /proc/cpuinfo, which
under a VM is the nominal clock, flat; mean of cores), sampled every second, and what the run measured
with its dependent-add loop before every round (runner: Run.facts.machine["clock_mhz"]).
The measured one is drawn at its times; a run stored before those carried a time gets a
line at its median instead.
"""

from __future__ import annotations

import statistics
from typing import Any

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from shootout.judge.analysis import Analysis
from shootout.judge.machines import machine_of
from shootout.report.charts import BELOW, CONFIG_COLORS, WIDTH_IN, literal_text, render

PANELS = (
    ("mhz_mean", "clock, MHz"),
    ("temp_c", "temperature, \u00b0C\n(hottest sensor)"),
    ("steal_pct", "steal, %"),
    ("throttle_events", "throttle events\n(since last sample)"),
)
TIMELINE_KEY = "(timeline)"  # its key beside charts.SUMMARY_KEY in the report's chart names


def samples_by_machine(analysis: Analysis) -> dict[str, list[dict[str, Any]]]:
    """Machine label -> its monitor samples, for a one-run analysis; {} when nothing was sampled."""
    if len(analysis.runs) != 1:
        return {}
    run = analysis.runs[0]
    machine = run.facts.machine
    found: dict[str, list[dict[str, Any]]] = {}
    if samples := machine.get("monitor_samples"):
        found[f"this machine ({machine.get('hostname') or 'unnamed'})"] = samples
    for config in run.configs:
        facts = run.facts.side(config.name)
        if samples := facts.get("monitor_samples"):
            _, name = machine_of(facts, machine)
            label = f"{config.display} (guest)" if "vm" in run.facts.target(config.name) else f"{config.display}: {name}"
            found.setdefault(label, []).extend(samples)
    return found


def _panels(found: dict[str, list[dict[str, Any]]], measured: list[list[float]]) -> list[tuple[str, str]]:
    return [(key, title) for key, title in PANELS
            if any(s.get(key) is not None for samples in found.values() for s in samples)
            or key == "mhz_mean" and measured]


def measured_clock(analysis: Analysis) -> list[list[float]]:
    """This machine's clock as the run measured it (dependent-add loop, [round, MHz(, time)])."""
    if len(analysis.runs) != 1:
        return []
    return [c for c in analysis.runs[0].facts.machine_value("clock_mhz", default=[]) if len(c) >= 2 and c[1]]


def _draw_measured(ax: Axes, measured: list[list[float]], t0: float, span: tuple[float, float]) -> Artist:
    label = "measured clock of this machine (dependent-add loop, each round)"
    timed = sorted((c[2], c[1]) for c in measured if len(c) >= 3)
    if timed:
        return ax.plot([(t - t0) / 60.0 for t, _ in timed], [v for _, v in timed], label=label, color="#111111",
                       linestyle="--", linewidth=1.0, marker="o", markersize=3)[0]
    # stored without times: its median over the run, not placed in time
    return ax.hlines(statistics.median(c[1] for c in measured), *span, colors="#111111", linestyles="--",
                     linewidth=1.0, label="measured clock of this machine (dependent-add loop), median over the rounds")


@literal_text
def timeline_chart(analysis: Analysis, fmt: str = "svg", text_as_paths: bool = True) -> bytes | None:
    """The timeline figure, or None when no monitor sampled anything drawable."""
    found = samples_by_machine(analysis)
    measured = measured_clock(analysis)
    panels = _panels(found, measured)
    if not panels:
        return None
    times = [s["t"] for samples in found.values() for s in samples] + [c[2] for c in measured if len(c) >= 3]
    t0 = min(times) if times else 0.0
    span = (0.0, (max(times) - t0) / 60.0 if times else 1.0)
    fig = Figure(figsize=(WIDTH_IN, 0.6 + 1.7 * len(panels)), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (key, title) in zip(axes, panels):
        for i, (label, samples) in enumerate(found.items()):
            points = sorted((s["t"], s[key]) for s in samples if s.get(key) is not None)
            if points:
                ax.plot([(t - t0) / 60.0 for t, _ in points], [v for _, v in points], label=label,
                        color=CONFIG_COLORS[i % len(CONFIG_COLORS)], linewidth=1.0, marker="." if len(points) < 30 else None)
        if key == "mhz_mean" and measured:
            # its own legend: the figure's names the machines, this one which clock is which
            kernel = Line2D([], [], color="#777777", linewidth=1.0,
                            label="as the kernel reports it (cpufreq or /proc/cpuinfo; a VM's is nominal), mean of cores")
            ax.legend(handles=[_draw_measured(ax, measured, t0, span), kernel], fontsize=8, loc="best", frameon=False)
        ax.set_ylabel(title, fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("minutes since the first sample", fontsize=8)
    handles = {label: handle for ax in axes for handle, label in zip(*ax.get_legend_handles_labels())
               if not label.startswith("measured clock")}
    fig.legend(list(handles.values()), list(handles), loc=BELOW, ncols=1 if len(handles) < 4 else 2,
               fontsize=8, frameon=False)
    fig.suptitle("During the run: what each machine's monitor sampled", fontsize=11, fontweight="bold")
    return render(fig, fmt, "timeline", text_as_paths)
