"""compress (zstd, xz, gzip on the corpus) and the 7-Zip benchmark on the host."""

from __future__ import annotations

import pytest

from shootout.model import Config
from shootout.targets.host import HostTarget
from shootout.workloads.compress import Compress
from shootout.workloads.sevenzip import SevenZip


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
    return prepared, params, values


def test_compress_all_codecs(host):
    prepared, params, values = run(host, Compress(), {"corpus_mib": 1, "codecs": ["zstd3", "xz6", "gzip6"],
                                                      "repeat": {}})
    assert prepared.facts["input_bytes"] == 1 << 20
    assert params["repeat"]["zstd3_decompress"] > 1  # fast steps are repeated to last MIN_TRIAL_S
    assert values["xz6_ratio"] > values["gzip6_ratio"] > 1.5
    assert values["zstd3_decompress_mbps"] > values["xz6_compress_mbps"]
    rates = [values[k] for k in values if k.endswith("_mbps") and k != "geomean_mbps"]
    assert min(rates) < values["geomean_mbps"] < max(rates)


def test_7zip_both_thread_modes(host):
    w = SevenZip()
    prepared, _, values = run(host, w, {**w.default_params(), "passes": 1})
    assert "7-Zip" in prepared.facts["version"]
    assert set(values) == {f"{p}_{m}" for p in ("compress", "decompress", "total") for m in ("1t", "mt")}
