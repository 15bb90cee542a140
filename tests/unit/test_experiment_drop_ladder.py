"""drop-ladder's paragraph: each rung's cost per packet and rate in every layout (a 100-column
terminal's table shows only ratios against the socket), the generator's ceiling without --all,
and Cloudflare's and the XDP paper's figures called what they are: reference numbers from
elsewhere, not the write-up's."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.experiments import EXPERIMENTS
from shootout.judge.analysis import analyze
from shootout.report.terminal import show
from shootout.workloads.net import DropRate

RUNGS = {"socket": (4210.0, 125.7), "nft": (852.4, 537.2), "tc": (742.9, 519.7), "xdp-generic": (803.2, 527.6),
         "xdp-native": (865.5, 513.2)}


def _analysis():
    spec = DropRate.spec
    trials = [Trial(TrialSpec(r, 0, spec.name, name), {"rx_ns_per_packet": ns * (1 + r / 1000), "kpps": kpps + r,
                                                       "gen_ceiling_kpps": 1200.0 + r + len(name)}, 5.0, 0.5, 0.1, 1, 1, 0, "", 0.0)
              for r in range(1, 16) for name, (ns, kpps) in RUNGS.items()]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=15, experiment="drop-ladder"), [Config(n) for n in RUNGS],
              [spec], {}, RunFacts(machine={"cpu_flags": []}))
    analysis = analyze(run, trials)
    return dataclasses.replace(analysis, explanation=tuple(EXPERIMENTS["drop-ladder"].explain(analysis)))


def test_the_reference_numbers_are_not_called_the_write_ups() -> None:
    lines = _analysis().explanation
    assert not any("the write-up: Cloudflare" in line for line in lines)
    (reference,) = [line for line in lines if "~171 kpps" in line]  # Cloudflare's figure
    assert reference.startswith("reference numbers from elsewhere (measured by others")


def test_a_100_column_terminal_shows_each_rungs_cost_per_packet_and_the_generators_ceiling() -> None:
    out = io.StringIO()
    show(_analysis(), Console(file=out, width=100, force_terminal=True, color_system=None))
    text = " ".join(out.getvalue().split())
    assert "receive-side CPU time per packet here: socket 4244 ns/pkt; nft 859.2 ns/pkt (393.9% faster [" in text
    assert "rate counted at the receiver here: socket 133.7 kpps; nft 545.2 kpps" in text
    assert "the generator's own ceiling (trafgen with nothing receiving): 1,210.0 kpps to 1,219.0 kpps" in text
