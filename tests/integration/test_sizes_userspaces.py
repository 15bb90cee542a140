"""membw in the real i386 userspace beside the amd64 one, sized as the run sizes it: on a machine
whose L3 reads 480 MiB (the machine where it failed; this one's sysfs is read for everything
else), 4 x L3 would be 1920 MiB and two such buffers do not fit a 32-bit process. Sized once
over both sides, the far buffers fit, and membw runs on both."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_spaces import AMD64, I386, Spaces

from shootout.base.model import RunSettings
from shootout.execution import placefacts as probe
from shootout.measure.runner import Runner, RunRequest
from shootout.places.chroot import named_userspace_config
from shootout.store import Store
from shootout.system.journal import journal
from shootout.workloads.memory import MemBandwidth
from shootout.workloads.sizes import ADDRESS_SPACE_32_MIB

ISSUE_L3_KIB = 480 << 10


def test_membw_far_buffers_fit_the_i386_side_of_a_480_mib_l3_machine(
        spaces: Spaces, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spaces.need(AMD64)
    spaces.need(I386)
    real = probe.parse_caches
    monkeypatch.setattr(probe, "parse_caches", lambda text: {**real(text), "l3": ISSUE_L3_KIB})
    configs = [named_userspace_config(AMD64), named_userspace_config(I386)]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    settings = RunSettings(seed=5, min_rounds=1, max_rounds=1, partial=True, repeats=0, counters=False)
    with journal() as j:
        run_id = Runner(store, j).start(RunRequest(configs, [MemBandwidth()], settings, params={"membw": {"reps": 1}}))
    run = store.get_run(run_id)
    size = int(run.params["membw"]["size_mib"])
    assert run.params["membw"]["caches_kib"]["l3"] == ISSUE_L3_KIB and 2 * size <= ADDRESS_SPACE_32_MIB, size
    assert not run.lost_workloads, run.lost_workloads
    trials = store.trials(run_id)
    for config in configs:
        measured = [t for t in trials if t.spec.config == config.name and t.spec.round > 0]
        assert measured and all(t.ok and t.values["writeread_mbps"] > 0 for t in measured), config.name
    assert "below 4 x the largest cache (1920 MiB)" in run.facts.workload(configs[1].name, "membw")["far_buffer"]
