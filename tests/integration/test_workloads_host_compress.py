"""compress (zstd, xz, gzip on the corpus) and the 7-Zip benchmark on the host."""

from __future__ import annotations

from shootout.workloads.compress import Compress
from shootout.workloads.sevenzip import SevenZip


def test_compress_all_codecs(host, run_workload):
    params = {"corpus_mib": 1, "codecs": ["zstd3", "xz6", "gzip6"], "repeat": {}}
    prepared, params, values, _ = run_workload(host, Compress(), params)
    assert prepared.facts["input_bytes"] == 1 << 20
    assert set(prepared.versions) == {"zstd", "xz", "gzip"}  # every tool's version, compared across sides
    assert params["repeat"]["zstd3_decompress"] > 1  # fast steps are repeated to last MIN_TRIAL_S
    assert values["xz6_ratio"] > values["gzip6_ratio"] > 1.5
    assert values["zstd3_decompress_mbps"] > values["xz6_compress_mbps"]
    rates = [values[k] for k in values if k.endswith("_mbps") and k != "geomean_mbps"]
    assert min(rates) < values["geomean_mbps"] < max(rates)


def test_7zip_both_thread_modes(host, run_workload):
    w = SevenZip()
    prepared, _, values, _ = run_workload(host, w, {"passes": 1})
    assert "7-Zip" in prepared.versions["7z"]
    assert set(values) == {f"{p}_{m}" for p in ("compress", "decompress", "total") for m in ("1t", "mt")}
