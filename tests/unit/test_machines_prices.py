"""Sides on different machines are said to be in every output; prices given to `run` are kept."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from shootout.base.errors import UsageError
from shootout.base.runfacts import RunFacts
from shootout.base.model import (
    Config,
    Metric,
    Run,
    RunSettings,
    Trial,
    TrialSpec,
    WorkloadSpec,
)
from shootout.judge.analysis import analyze
from shootout.judge.crossrun import compare_members, members_by_run
from shootout.judge.machines import MACHINES_NOTE, machines_note
from shootout.report.html import render_html
from shootout.report.markdown import render_markdown
from shootout.report.perdollar import per_dollar
from shootout.report.terminal import show
from shootout.request.request import Wish, priced
from shootout.store.serialize import run_from_dict, run_to_dict

SPEC = WorkloadSpec("bench", "user", "a benchmark", (Metric("rate", "ops/s"),), "rate")
HERE = {"hostname": "lab", "machine_id": "m-lab"}


def remote(host: str, machine_id: str) -> dict:
    """A configuration's facts as the runner keeps them, the ssh target's under "target"."""
    return {"target": {"remote": f"user@{host}", "channel": "ssh",
                       "machine": {"hostname": host, "machine_id": machine_id}}}


def make_run(facts: dict, level: dict[str, float], run_id: int = 1, settings: RunSettings | None = None,
             target: str = "ssh") -> tuple[Run, list[Trial]]:
    rng = np.random.default_rng(run_id)
    configs = [Config(name=name, target=target, label=name) for name in level]
    trials = [Trial(TrialSpec(r, 0, "bench", c), {"rate": level[c] * float(np.exp(rng.normal(0, 0.01)))},
                    1.0, 1.0, 0.0, 1000, 1, 0, "", 0.0) for r in range(1, 13) for c in level]
    run = Run(run_id, 0.0, "complete", settings or RunSettings(seed=run_id), configs, [SPEC], {"bench": {}},
              RunFacts(machine=HERE, sides=facts))
    return run, trials


def outputs(analysis) -> dict[str, str]:
    """show (plain, as piped), the Markdown and the HTML report."""
    out = io.StringIO()
    show(analysis, Console(file=out, width=120, color_system=None))
    return {"show": out.getvalue(), "md": render_markdown(analysis, {}), "html": render_html(analysis)}


def test_two_ssh_hosts_are_said_to_differ_in_the_machines_everywhere() -> None:
    run, trials = make_run({"ssh:user@a": remote("host-a", "m-a"), "ssh:user@b": remote("host-b", "m-b")},
                           {"ssh:user@a": 100.0, "ssh:user@b": 120.0})
    analysis = analyze(run, trials)
    note = next(n for n in analysis.notes if n.startswith(MACHINES_NOTE))
    assert "ssh:user@a ran on host-a (ssh user@host-a)" in note and "ssh:user@b ran on host-b" in note
    for name, text in outputs(analysis).items():
        assert MACHINES_NOTE in text, name


def test_the_same_machine_claims_nothing() -> None:
    # ssh to this machine itself (its own machine id), the host, a VM on this machine's hardware.
    run, trials = make_run({"ssh:user@a": remote("lab", "m-lab"),
                            "vm": {"target": {"remote": "VM vm", "vm": {}, "machine": {"machine_id": "m-guest"}}}},
                           {"ssh:user@a": 100.0, "host": 100.0, "vm": 90.0})
    analysis = analyze(run, trials)
    assert not any(MACHINES_NOTE in n for n in analysis.notes)
    assert all(MACHINES_NOTE not in text for text in outputs(analysis).values())
    # Unknown identities (imported runs) claim nothing either.
    assert machines_note([("a", {}, {}), ("b", {"target": {"remote": "x", "machine": {}}}, {})]) is None


def test_compare_of_runs_made_on_two_machines_says_so() -> None:
    a, ta = make_run({}, {"host": 100.0}, 3, target="host")
    b, tb = make_run({}, {"host": 110.0}, 7, target="host")
    b.facts.machine = {"hostname": "other", "machine_id": "m-other"}
    analysis = compare_members(members_by_run([a, b], [ta, tb]))
    assert any(n.startswith(MACHINES_NOTE) and "ran on other" in n for n in analysis.notes)
    out = io.StringIO()
    show(analysis, Console(file=out, width=120, color_system=None))
    assert MACHINES_NOTE in out.getvalue()
    same = compare_members(members_by_run([a, make_run({}, {"host": 110.0}, 8, target="host")[0]],
                                          [ta, tb]))
    assert not any(MACHINES_NOTE in n for n in same.notes)


def test_prices_given_to_run_are_stored_and_shown() -> None:
    names = ["ssh:user@a", "ssh:user@b"]
    settings = priced(Wish(prices=["ssh:user@a=0.4", "ssh:user@b=0.2"], price_unit="$/h"), names)
    assert settings.prices == {"ssh:user@a": 0.4, "ssh:user@b": 0.2} and settings.price_unit == "$/h"
    run, trials = make_run({n: remote(n[-1], n) for n in names}, {"ssh:user@a": 100.0, "ssh:user@b": 100.0},
                           settings=settings)
    again = run_from_dict(run_to_dict(run))  # as the store keeps it
    assert again.settings.prices == settings.prices and again.settings.price_unit == "$/h"
    analysis = analyze(again, trials)
    geo = next(r for r in per_dollar(analysis, settings.prices, "$/h") if r["workload"] == "geomean")
    assert geo["perf_per_price"] == pytest.approx(geo["speedup"] * 2)  # half the price, same speed
    text = outputs(analysis)["show"]
    assert "prices ($/h): ssh:user@a 0.4, ssh:user@b 0.2" in text
    assert f"performance per $/h of ssh:user@b over ssh:user@a: {geo['perf_per_price']:.3f}" in text


@pytest.mark.parametrize("items, message", [
    (["ssh:user@a=0.4"], "no price for configuration ssh:user@b"),
    (["ssh:user@a=0.4", "ssh:user@b=0.2", "c=1"], "unknown configuration"),
    (["ssh:user@a=cheap"], "is not CONFIG=PRICE"),
    (["ssh:user@a=0.4", "ssh:user@b=-1"], "must be a positive number"),
])
def test_bad_prices_are_refused_before_the_run(items: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        priced(Wish(prices=items), ["ssh:user@a", "ssh:user@b"])


def test_prices_and_aa_do_not_combine() -> None:
    with pytest.raises(UsageError, match="--price and --aa"):
        priced(Wish(prices=["host=1"], settings=RunSettings(aa=True)), ["host"])


def sampled(t0: float, mhz: float, temp: float | None, steal: float) -> list[dict]:
    return [{"t": t0 + 5 * i, "mhz_mean": mhz + i, "temp_c": temp, "steal_pct": steal, "throttle_events": None}
            for i in range(8)]


def test_the_timeline_draws_each_machines_monitor(tmp_path) -> None:
    from shootout.report.files import write_report
    from shootout.report.timeline import samples_by_machine, timeline_chart

    run, trials = make_run({"ssh:user@a": {**remote("host-a", "m-a"), "monitor_samples": sampled(100, 1500, 61.0, 0.0)},
                            "ssh:user@b": {**remote("host-b", "m-b"), "monitor_samples": sampled(102, 2400, None, 3.5)}},
                           {"ssh:user@a": 100.0, "ssh:user@b": 120.0})
    run.facts.machine = {**HERE, "monitor_samples": sampled(101, 3000, 45.0, 0.1)}
    analysis = analyze(run, trials)
    found = samples_by_machine(analysis)
    assert list(found) == ["this machine (lab)", "ssh:user@a: host-a (ssh user@host-a)",
                           "ssh:user@b: host-b (ssh user@host-b)"]
    svg = timeline_chart(analysis, "svg", text_as_paths=False).decode()
    # Clock, temperature and steal have readings; throttle events none: three panels, a line per machine.
    assert "clock, MHz" in svg and "temperature" in svg and "steal, %" in svg and "throttle events" not in svg
    assert all(label in svg for label in found)
    md = write_report(analysis, tmp_path / "md", "md")
    assert tmp_path / "md" / "timeline.png" in md
    assert "(timeline.png)" in (tmp_path / "md" / "report.md").read_text()
    html = render_html(analysis)
    assert 'id="chart-timeline"' in html and "monitor_samples" not in html  # drawn, not listed
    # Nothing sampled (or a comparison across runs): no timeline.
    run.facts = RunFacts(machine=HERE)
    assert timeline_chart(analyze(run, trials)) is None
    assert 'id="chart-timeline"' not in render_html(analyze(run, trials))


def test_the_timeline_draws_the_clock_the_run_measured_beside_the_one_the_kernel_reports() -> None:
    """Under a VM /proc/cpuinfo says 2600 MHz all run long; the dependent-add loop measured
    3744 MHz. The timeline drew only the flat 2600; it draws both now, each labelled."""
    import re

    from shootout.report.timeline import timeline_chart

    run, trials = make_run({}, {"ssh:user@a": 100.0, "ssh:user@b": 120.0})
    flat = [{"t": 100 + 5 * i, "mhz_mean": 2600.0, "temp_c": None, "steal_pct": None, "throttle_events": None}
            for i in range(8)]
    run.facts.machine = {**HERE, "monitor_samples": flat,
                            "clock_mhz": [[r, 3744.0 - r, 100 + 10 * r] for r in range(4)]}
    svg = timeline_chart(analyze(run, trials), "svg", text_as_paths=False).decode()
    ticks = [float(t.replace(",", "").replace("\u2212", "-"))
             for t in re.findall(r"<text[^>]*>\s*([\d,.\u2212]+)\s*</text>", svg)]
    assert "measured clock of this machine (dependent-add loop, each round)" in svg and "kernel" in svg
    assert max(ticks) > 3000  # the axis reaches the measured clock (flat at 2600 it would not)
    # a run stored before the readings had times: their median, not placed in time
    run.facts.machine["clock_mhz"] = [[r, 3744.0] for r in range(4)]
    svg = timeline_chart(analyze(run, trials), "svg", text_as_paths=False).decode()
    assert "median over the rounds" in svg
