"""Parsers of every non-openssl workload on recorded outputs, and what they refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shootout.base.errors import WorkloadError
from shootout.execution.process import ProcResult
from shootout.workloads import compile, compress, js, media, memory, sevenzip
from shootout.workloads.shell import Step, parse_steps, script

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "outputs"
RECORDED = {
    "membw": memory.MemBandwidth, "memlat": memory.MemLatency, "maxalloc": memory.MaxAlloc,
    "flac": media.Flac, "lame": media.Lame, "compress": compress.Compress, "build": compile.Build,
    "js": js.JavaScript, "7zip": sevenzip.SevenZip,
}


def text(name: str) -> str:
    return (FIXTURES / name).read_text()


def result(stdout: str) -> ProcResult:
    return ProcResult(("sh",), 0, stdout, "", 1.0, 1.0, 0.0, 1000, 1, 0.0)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_trial_parses_to_the_recorded_values(name):
    recorded = json.loads(text(f"{name}-amd64-host.json"))
    values = RECORDED[name]().parse(result(text(f"{name}-amd64-host.txt")), recorded["params"])
    spec = RECORDED[name].spec
    metrics = {k: v for k, v in values.items() if k in {m.name for m in spec.metrics}}
    assert metrics == pytest.approx(recorded["values"])
    assert all(v > 0 for v in metrics.values())
    assert set(values) <= {m.name for m in (*spec.metrics, *spec.recorded)}  # recorded amounts may be zero


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_truncated_output_is_a_workload_error(name):
    recorded = json.loads(text(f"{name}-amd64-host.json"))
    lines = text(f"{name}-amd64-host.txt").splitlines()
    kept = [ln for ln in lines if not ln.startswith("max_mib")] if name == "maxalloc" else lines[: len(lines) // 3]
    with pytest.raises(WorkloadError):
        RECORDED[name]().parse(result("\n".join(kept)), recorded["params"])


def test_7zip_26_real_outputs():
    single = sevenzip.parse_bench(text("7zip-26.02-amd64-mt1.txt"))
    assert single == {"compress": 3506.0, "decompress": 3437.0, "total": 3472.0}
    multi = sevenzip.parse_bench(text("7zip-26.02-amd64-mt2.txt"))
    assert multi == {"compress": 6352.0, "decompress": 3803.0, "total": 5078.0}


def test_p7zip_16_layout_without_speed_column():
    assert sevenzip.parse_bench(text("7zip-p7zip-16.02-armhf.CRAFTED.txt")) == {
        "compress": 4364.0, "decompress": 8855.0, "total": 6609.0}


def test_membw_sections_map_levels_to_metric_names():
    recorded = json.loads(text("membw-amd64-host.json"))
    values = memory.MemBandwidth().parse(result(text("membw-amd64-host.txt")), recorded["params"])
    runs = memory.sections(result(text("membw-amd64-host.txt")))
    assert values["copy_mbps"] == runs["mem"]["copy_mbps"]
    assert values["read_l1_mbps"] == runs["l1"]["read_mbps"]
    assert runs["l1"]["size_kib"] == recorded["params"]["levels_kib"]["l1"]


def test_memlat_headline_is_the_largest_size_without_thp():
    recorded = json.loads(text("memlat-amd64-host.json"))
    values = memory.MemLatency().parse(result(text("memlat-amd64-host.txt")), recorded["params"])
    assert values["largest_nothp"] == values["nothp_64m"]
    assert values["nothp_64m"] > values["nothp_16k"]


def test_membw_argv_runs_every_level_in_kib_and_the_far_size_in_mib():
    from shootout.workloads.contract import Prepared

    params = {"levels_kib": {"l1": 8, "l2": 128}, "size_mib": 256, "reps": 3, "mlock": False}
    lines = memory.MemBandwidth().argv(Prepared(files={"binary": "/x/membw"}), params)[2].splitlines()
    assert "echo 'section l1'; /x/membw 8 3 --kib --no-mlock" in lines
    assert "echo 'section mem'; /x/membw 256 3 --no-mlock" in lines


def test_memlat_labels():
    assert [memory.size_label(k) for k in (1, 16, 1024, 65536, 262144)] == ["1k", "16k", "1m", "64m", "256m"]


def test_flac_refuses_a_lossy_round_trip():
    recorded = json.loads(text("flac-amd64-host.json"))
    broken = text("flac-amd64-host.txt").replace("lossless 1", "lossless 0")
    with pytest.raises(WorkloadError, match="differs"):
        media.Flac().parse(result(broken), recorded["params"])


def test_compress_refuses_a_broken_round_trip_and_scales_by_repeats():
    recorded = json.loads(text("compress-amd64-host.json"))
    out = text("compress-amd64-host.txt")
    with pytest.raises(WorkloadError, match="xz6"):
        compress.Compress().parse(result(out.replace("roundtrip xz6 1", "roundtrip xz6 0")), recorded["params"])
    params = dict(recorded["params"], repeat={**recorded["params"]["repeat"], "gzip6_compress": 100})
    values = compress.Compress().parse(result(out), params)
    factor = 100 / recorded["params"]["repeat"].get("gzip6_compress", 1)
    assert values["gzip6_compress_mbps"] == pytest.approx(recorded["values"]["gzip6_compress_mbps"] * factor)


def test_js_refuses_output_that_differs_from_the_first_configuration():
    recorded = json.loads(text("js-amd64-host.json"))
    params = dict(recorded["params"], expect={**recorded["params"]["expect"], "terser_minify": 1.0})
    with pytest.raises(WorkloadError, match="terser_minify"):
        js.JavaScript().parse(result(text("js-amd64-host.txt")), params)


def test_build_needs_the_built_interpreter_for_the_pinned_tree():
    recorded = json.loads(text("build-amd64-host.json"))
    out = text("build-amd64-host.txt").replace("built Lua", "nothing")
    with pytest.raises(WorkloadError, match="not built"):
        compile.Build().parse(result(out), recorded["params"])


def test_shell_steps_time_and_parse():
    sh = script([Step("one", "true"), Step("two", "x=1", repeat=3)], setup="echo hi", after="echo bye")
    assert "while [ $i -lt 3 ]" in sh and sh.startswith("set -e")
    out = "hi\nstep one 1700000000.000000001 1700000000.500000001\nstep two 1700000001.0 1700000003.25\nbye\n"
    assert parse_steps(out) == {"one": 0.5, "two": 2.25}


def probe(copy: int, fill: int, valid: int = 7) -> dict[str, float]:
    return {"probe_reps": 7, "probe_valid_reps": valid, "copy_bypass_reps": copy, "fill_bypass_reps": fill,
            "warm_ns": 4.0, "cold_ns": 140.0, "copy_dst_ns": 130.0, "fill_dst_ns": 4.5}


def test_membw_code_paths_claim_only_what_nearly_every_call_showed():
    # as measured in the bookworm userspaces: i386's memcpy of 256 MiB streams, amd64's does not
    assert memory.code_paths(probe(copy=7, fill=0), 256) == {
        "copy_mbps": "memcpy of 256 MiB bypasses the cache (non-temporal stores)",
        "fill_mbps": "memset of 256 MiB through the cache"}
    assert memory.code_paths(probe(copy=1, fill=3), 256) == {"copy_mbps": "memcpy of 256 MiB through the cache"}
    assert memory.code_paths(probe(copy=7, fill=0, valid=4), 256) == {}  # too few separable calls


def test_membw_headline_is_the_articles_write_then_read_back():
    spec = memory.MemBandwidth.spec
    assert spec.headline == "writeread_mbps"
    recorded = json.loads(text("membw-amd64-host.json"))
    values = memory.MemBandwidth().parse(result(text("membw-amd64-host.txt")), recorded["params"])
    assert values["writeread_mbps"] == memory.sections(result(text("membw-amd64-host.txt")))["mem"]["writeread_mbps"]
    assert "writeread_l1_mbps" not in values  # the RAM test is of the far buffer only
