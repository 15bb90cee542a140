"""flac and lame encode the synthesized track on the host (short track)."""

from __future__ import annotations

import pytest

from shootout.model import Config
from shootout.targets.host import HostTarget
from shootout.workloads.media import Flac, Lame


@pytest.fixture(scope="module")
def host(request):
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOOTOUT_HOME", str(request.config.cache.mkdir("shootout-home")))
    target = HostTarget(Config(name="host"))
    yield target
    target.close()
    mp.undo()


def run(target, workload, params):
    prepared = workload.prepare(target, dict(params))
    params = workload.calibrate(target, prepared, dict(params))
    result = target.run(workload.argv(prepared, params), timeout=600)
    assert result.exit_status == 0, result.stderr[-2000:]
    values = workload.parse(result, params)
    assert values and all(v > 0 for v in values.values()), values
    return prepared, values, result


def test_flac_encode_and_lossless_round_trip(host):
    prepared, values, result = run(host, Flac(), {"minutes": 0.5, "level": 5})
    assert prepared.facts["flac"].startswith("flac ")
    assert len(prepared.facts["input_sha256"]) == 64
    assert values["encode_s"] + values["decode_reencode_s"] < result.wall_s
    assert not [p for p in host.workdir.iterdir() if p.name.startswith("flac-out")]  # outputs removed


def test_lame_encodes(host):
    prepared, values, result = run(host, Lame(), {"minutes": 0.25, "lame_args": []})
    assert "LAME" in prepared.facts["lame"]
    assert 0 < values["encode_s"] < result.wall_s
