"""openssl-speed and sha1-sparse really run on the host at a reduced size."""

from __future__ import annotations

from shootout.workloads.crypto import OpensslSpeed, Sha1Sparse


def test_openssl_speed_one_core_and_multi(host, run_workload):
    w = OpensslSpeed()
    params = {"algorithms": ["sha1", "bf-cbc"], "sizes": [16, 16384], "multi": True, "threads": 2, "seconds": 1}
    prepared, _, values, result = run_workload(host, w, params)
    assert prepared.versions["openssl"].startswith("OpenSSL")
    assert prepared.facts["algorithms"] == ["sha1", "bf-cbc"]  # legacy provider found on OpenSSL 3
    assert prepared.facts["hw_paths"]["cpu_flags"] is not None
    for name in ("sha1_16", "sha1_16384", "bf_cbc_16384", "sha1_16384_mt", "bf_cbc_16_mt", "geomean_16384"):
        assert name in values
    assert values["sha1_16384"] > values["sha1_16"]  # per-call overhead dominates small blocks
    assert 8 < result.wall_s < 60


def test_sha1_sparse_hashes_with_both_tools(host, run_workload):
    w = Sha1Sparse()
    prepared, _, values, result = run_workload(host, w, {"size": 200_000_000})
    assert prepared.versions["sha1sum"].startswith("sha1sum (GNU coreutils)")
    assert set(values) == {"sha1sum_mbps", "openssl_mbps"}
    # 200 MB in the wall time of the trial: neither rate can be slower than that
    assert min(values.values()) > 200 / result.wall_s
