"""openssl speed output of several versions and architectures; hardware paths; sha1-sparse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shootout.base.errors import WorkloadError
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.workloads.contract import Prepared
from shootout.workloads.crypto import OpensslSpeed, Sha1Sparse, zeros_sha1
from shootout.workloads.openssl_output import decode_caps, hw_paths, parse_speed

FACTS = TargetFacts(cores=4)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "outputs"


def text(name: str) -> str:
    return (FIXTURES / name).read_text()


def result(stdout: str, status: int = 0) -> ProcResult:
    return ProcResult(("sh",), status, stdout, "", 1.0, 1.0, 0.0, 1000, 1, 0.0)


def test_table_from_openssl_3_amd64():
    got = parse_speed(text("openssl-3.0-amd64-table.txt"))
    assert got == {("1", "sha256"): {16: 68843.94, 64: 215524.80, 256: 401009.66, 1024: 635611.14,
                                     8192: 749715.46, 16384: 774307.84}}


def test_machine_readable_is_bytes_per_second_converted_to_kB():
    got = parse_speed(text("openssl-3.0-amd64-mr.txt"))
    assert got[("1", "sha256")][16384] == pytest.approx(777568.256)
    assert got[("1", "sha256")][16] == pytest.approx(50119.3505)


def test_multi_table_without_header_uses_the_standard_sizes():
    got = parse_speed(text("openssl-3.0-amd64-multi-table.txt"))
    assert got[("1", "aes-128-gcm")][16384] == pytest.approx(1304029.95)
    assert sorted(got[("1", "aes-128-gcm")]) == [16, 64, 256, 1024, 8192, 16384]


def test_openssl_1_1_armhf_table():
    got = parse_speed(text("openssl-1.1.1-armhf-table.CRAFTED.txt"))
    assert got[("1", "aes-128-cbc")][16384] == pytest.approx(101823.83)


def test_openssl_1_values_without_k_are_bytes_per_second():
    row = parse_speed(text("openssl-1.1.1-i386-small-values.CRAFTED.txt"))[("1", "bf-cbc")]
    assert row[16] == pytest.approx(9.87654)
    assert row[64] == pytest.approx(45678.91)


def test_multi_mr_takes_the_parents_sum_not_a_child():
    row = parse_speed(text("openssl-1.1.1-arm64-mr-multi.CRAFTED.txt"))[("1", "sha256")]
    assert row[16384] == pytest.approx(6004744.53334)


def test_openssl_1_0_multi_evp_row_and_five_sizes():
    row = parse_speed(text("openssl-1.0.2-multi-evp.CRAFTED.txt"))[("1", "evp")]
    assert row == {16: 2084.34, 64: 4364.84, 256: 5956.25, 1024: 6483.06, 8192: 6653.66}


def test_recorded_trial_parses_to_the_recorded_values():
    recorded = json.loads(text("openssl-speed-amd64-host.json"))
    values = OpensslSpeed().parse(result(text("openssl-speed-amd64-host.txt")), recorded["params"])
    assert values == pytest.approx(recorded["values"])
    assert values["bf_cbc_16384_mt"] > 0 and values["aes_128_gcm_16_mt"] > 0
    heads = [values[f"{a}_16384"] for a in ("md5", "aes_128_gcm", "bf_cbc")]
    assert min(heads) < values["geomean_16384"] < max(heads)
    multi = [values[f"{a}_16384_mt"] for a in ("md5", "aes_128_gcm", "bf_cbc")]
    assert min(multi) < values["geomean_16384_mt"] < max(multi)  # the cloud write-up's -multi, one figure


def test_sections_are_keyed_by_our_markers_and_merged_per_size():
    out = "\n".join([
        "run 1 sha1", "+DT:sha1:1:16", "+R:1:sha1:1.0", "+H:16", "+F:25:sha1:1000000.00",
        "run 1 sha1", "+H:16384", "+F:25:sha1:2000000000.00",
        "run mt sha1", "Got: +H:16384 from 0", "Got: +F:25:sha1:1.00 from 0", "+F:25:sha1:3000000000.00",
    ])
    assert parse_speed(out) == {("1", "sha1"): {16: 1000.0, 16384: 2000000.0}, ("mt", "sha1"): {16384: 3000000.0}}


def test_no_numbers_is_a_workload_error():
    params = {**OpensslSpeed().default_params(FACTS), **OpensslSpeed.quick}
    with pytest.raises(WorkloadError, match="no results"):
        OpensslSpeed().parse(result("run 1 sha1\nspeed: Unknown algorithm sha1\n"), params)


def test_argv_legacy_provider_only_for_openssl_3_and_bytes_for_size_subsets():
    w = OpensslSpeed()
    params = {**w.default_params(FACTS), "sizes": [16384], "multi": True}
    script = w.argv(Prepared(facts={"algorithms": ["sha1", "bf-cbc"]},
                             versions={"openssl": "OpenSSL 3.0.19 27 Jan 2026"}), params)[2]
    lines = script.splitlines()
    bf = [ln for ln in lines if "-evp bf-cbc" in ln]
    assert len(bf) == 2 and all("-provider legacy -provider default" in ln for ln in bf)
    assert all("-provider" not in ln for ln in lines if "-evp sha1" in ln)
    assert all("-bytes 16384" in ln for ln in lines if "-evp" in ln)
    assert sum("-multi 4" in ln for ln in lines) == 2
    old = Prepared(facts={"algorithms": ["bf-cbc"]}, versions={"openssl": "OpenSSL 1.1.1w  11 Sep 2023"})
    full = w.argv(old, {**params, "sizes": list(w.default_params(FACTS)["sizes"])})[2]
    assert "-provider" not in full and "-bytes" not in full


def test_without_evp_the_write_ups_names_run_beside_evp_and_parse_to_their_own_metrics():
    w = OpensslSpeed()
    params = {**w.default_params(FACTS), "sizes": [16384], "multi": False, "forms": ["evp", "noevp"]}
    script = w.argv(Prepared(facts={"algorithms": ["sha256", "aes-128-gcm"]},
                             versions={"openssl": "OpenSSL 3.0.19 27 Jan 2026"}), params)[2]
    lines = script.splitlines()
    assert sum(ln.endswith("-evp sha256 2>&1") for ln in lines) == 1
    assert sum(ln.endswith("-bytes 16384 sha256 2>&1") for ln in lines) == 1  # `openssl speed sha256`
    assert not any(ln.endswith(" aes-128-gcm 2>&1") and "-evp" not in ln for ln in lines)  # no such test
    out = ("run 1 sha256\n+H:16:64:256:1024:8192:16384\n+F:6:sha256:1:2:3:4:5:1000000\n"
           "run 1-noevp sha256\n+H:16:64:256:1024:8192:16384\n+F:6:sha256:1:2:3:4:5:2000000\n")
    values = w.parse(result(out), {**params, "algorithms": ["sha256"]})
    assert values["sha256_16384"] == 1000.0 and values["sha256_16384_noevp"] == 2000.0
    assert "without -evp" in next(m.description for m in w.spec.metrics if m.name == "sha256_16384_noevp")


def test_hw_paths_from_openssl_and_cpu_flags():
    x86 = hw_paths(text("openssl-3.0-amd64-version-a.txt"), "flags\t: fpu sse aes avx2 sha_ni pclmulqdq\n",
                   {"OPENSSL_ia32cap": "~0x200000000000000", "PATH": "/bin"})
    assert {"aesni", "sha_ni", "pclmulqdq", "avx2"} <= set(x86["openssl_caps"])
    assert x86["cpu_flags"] == ["aes", "avx2", "pclmulqdq", "sha_ni"]
    assert x86["env"] == {"OPENSSL_ia32cap": "~0x200000000000000"}
    arm = hw_paths(text("openssl-3.0-arm64-version-a.CRAFTED.txt"), "Features\t: fp asimd aes pmull sha1 sha2\n", {})
    assert arm["openssl_caps"] == ["aes", "neon", "pmull", "sha1", "sha256"]
    assert arm["cpu_flags"] == ["aes", "asimd", "pmull", "sha1", "sha2"]
    pi4 = hw_paths(text("openssl-3.0-pi4-armhf-version-a.CRAFTED.txt"), "Features\t: half thumb neon vfpv4\n", {})
    assert pi4["openssl_caps"] == ["neon"]  # generic AES: the confounder of the Pi 4 case
    old = hw_paths("OpenSSL 1.1.1w  11 Sep 2023\n", "", {})
    assert old["openssl_caps"] is None and old["openssl_cpuinfo"] is None


def test_decode_caps_without_aes():
    assert "aesni" not in decode_caps("CPUINFO: OPENSSL_ia32cap=0x0000000000000000:0x0")


def test_sha1_sparse_parses_both_tools_and_checks_digests():
    recorded = json.loads(text("sha1-sparse-amd64-host.json"))
    values = Sha1Sparse().parse(result(text("sha1-sparse-amd64-host.txt")), recorded["params"])
    assert values == pytest.approx(recorded["values"])
    wrong = text("sha1-sparse-amd64-host.txt").replace(zeros_sha1(recorded["params"]["size"]), "0" * 40, 1)
    with pytest.raises(WorkloadError, match="wrong digests"):
        Sha1Sparse().parse(result(wrong), recorded["params"])


def test_sha1_sparse_rates_come_from_each_tool_s_cpu_time():
    """user + sys of each tool, as bash's time prints them: other processes' time slices do not count."""
    recorded = json.loads(text("sha1-sparse-amd64-host.json"))
    digest = zeros_sha1(recorded["params"]["size"])
    out = f"{digest}  f\ncpu sha1sum 0.400 0.100\n{digest} *f\ncpu openssl 0.200 0.050\n"
    assert Sha1Sparse().parse(result(out), recorded["params"]) == {"sha1sum_mbps": 1000.0, "openssl_mbps": 2000.0}
    with pytest.raises(WorkloadError, match="no CPU time for openssl"):
        Sha1Sparse().parse(result(out.replace("cpu openssl 0.200 0.050\n", "")), recorded["params"])


def test_zeros_sha1_known_value():
    assert zeros_sha1(0) == "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert zeros_sha1(3 << 20 | 5) != zeros_sha1(3 << 20)


def test_geomean_only_over_every_requested_algorithm():
    out = "run 1 sha1\n+H:16384\n+F:25:sha1:2000000000.00\n"
    params = {**OpensslSpeed().default_params(FACTS), "algorithms": ["sha1", "bf-cbc"], "sizes": [16384], "multi": False}
    values = OpensslSpeed().parse(result(out), params)
    assert values == {"sha1_16384": 2000000.0}  # bf-cbc missing on this side: no headline mixing sets
    assert OpensslSpeed().parse(result(out), {**params, "algorithms": ["sha1"]})["geomean_16384"] == pytest.approx(2e6)
