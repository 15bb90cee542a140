"""flac and lame encode the synthesized track on the host (short track)."""

from __future__ import annotations

from pathlib import Path

from shootout.workloads.media import Flac, Lame


def test_flac_encode_and_lossless_round_trip(host, run_workload):
    prepared, _, values, result = run_workload(host, Flac(), {"minutes": 0.5, "level": 5})
    assert prepared.versions["flac"].startswith("flac ")
    assert len(prepared.facts["input_sha256"]) == 64
    assert values["encode_s"] + values["decode_reencode_s"] < result.wall_s
    work = Path(prepared.files["out"]).parent
    assert not [p for p in work.iterdir() if p.name.startswith("flac-out")]  # outputs removed


def test_lame_encodes(host, run_workload):
    prepared, _, values, result = run_workload(host, Lame(), {"minutes": 0.25, "lame_args": []})
    assert "LAME" in prepared.versions["lame"]
    assert 0 < values["encode_s"] < result.wall_s
