"""flac and lame encode the synthesized track on the host (short track)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from shootout.base.errors import WorkloadError
from shootout.base.model import Config
from shootout.places.host import HostTarget
from shootout.workloads import media
from shootout.workloads.contract import Context
from shootout.workloads.media import Flac, Lame


def test_flac_encode_and_lossless_round_trip(host, run_workload):
    prepared, _, values, result = run_workload(host, Flac(), {"minutes": 0.5, "level": 5})
    assert prepared.versions["flac"].startswith("flac ")
    assert len(prepared.facts["input_sha256"]) == 64
    assert values["encode_s"] + values["decode_reencode_s"] < result.wall_s
    # CPU time of the steps alone: no more than their wall time and the trial's rusage
    assert 0 < values["encode_cpu_s"] <= values["encode_s"] * 1.02
    assert values["encode_cpu_s"] + values["decode_reencode_cpu_s"] <= result.user_s + result.sys_s + 0.01
    work = Path(prepared.files["out"]).parent
    assert not [p for p in work.iterdir() if p.name.startswith("flac-out")]  # outputs removed


def test_lame_encodes(host, run_workload):
    prepared, _, values, result = run_workload(host, Lame(), {"minutes": 0.25, "lame_args": []})
    assert "LAME" in prepared.versions["lame"]
    assert 0 < values["encode_s"] < result.wall_s
    assert 0 < values["encode_cpu_s"] <= min(values["encode_s"] * 1.02, result.user_s + result.sys_s + 0.01)


class SmallShm(HostTarget):
    """The host, with its work directory on a tmpfs as small as a VM's /dev/shm is for the track."""

    def __init__(self, where: Path) -> None:
        super().__init__(Config(name="small-shm"))
        self.where = where

    def workdir(self) -> str:
        return str(self.where)


@pytest.fixture
def small_shm(tmp_path, cached_home, require_root):
    where = tmp_path / "shm"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12M", "shootout-test", str(where)], check=True)
    try:
        yield SmallShm(where)
    finally:
        subprocess.run(["umount", str(where)], check=True)


def test_flac_without_room_for_its_outputs_is_refused_before_measuring(small_shm):
    """0.5 min: a 5.3 MB WAV in 12 MB; a trial writes up to three more of its size."""
    params = {"minutes": 0.5, "level": 5}
    with pytest.raises(WorkloadError, match=r"flac: the work directory in small-shm has \d+ MB free, "
                                            r"a trial writes up to 16 MB there") as err:
        Flac().prepare(Context(small_shm, "flac", params))
    assert "more memory" in err.value.hint


def test_a_decode_that_fails_ends_the_trial_with_flacs_error(small_shm, monkeypatch):
    """Not 'the decoded WAV differs': the WAV and its FLAC fit, the decoded WAV does not."""
    monkeypatch.setattr(media, "_check_room", lambda *args: None)
    params = {"minutes": 0.5, "level": 5}
    w = Flac()
    prepared = w.prepare(Context(small_shm, "flac", params))
    result = small_shm.run(w.argv(prepared, params), timeout=300)
    assert result.exit_status != 0 and "lossless" not in result.stdout
    assert "flac-out-dec.wav" in result.stderr or "ERROR" in result.stderr, result.stderr
