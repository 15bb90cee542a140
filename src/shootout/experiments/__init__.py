"""Named experiments: the published comparisons, each one command (`shootout run --experiment NAME`).

An experiment is one module holding an Experiment: the configurations, workloads and
parameters of a write-up in shootout.toml's own format, and what the write-up found, so the
report can put each measured result beside it. Register a new one with one line below.
"""

from __future__ import annotations

from shootout.base.errors import UsageError
from shootout.experiments import (
    browser32,
    cloud_openssl,
    drop_ladder,
    kernelmodes,
    pi3desk,
    pi3desk_swap,
    rpi64,
    rpi_iozone,
    rpi_mbw_build,
    rpi_network,
    veth_offloads,
    vpn,
)
from shootout.experiments.writeup import Experiment

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    rpi64.EXPERIMENT,
    rpi_network.EXPERIMENT,
    veth_offloads.EXPERIMENT,
    drop_ladder.EXPERIMENT,
    vpn.EXPERIMENT,
    browser32.EXPERIMENT,
    kernelmodes.EXPERIMENT,
    pi3desk.EXPERIMENT,
    rpi_iozone.EXPERIMENT,
    rpi_mbw_build.EXPERIMENT,
    pi3desk_swap.EXPERIMENT,
    cloud_openssl.EXPERIMENT,
)}


def experiment(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise UsageError(f"unknown experiment {name!r}", "list them with: shootout experiments") from None
