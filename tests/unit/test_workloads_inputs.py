"""The deterministic inputs: same bytes everywhere (pinned hashes), real content, cached once."""

from __future__ import annotations

import hashlib
import wave
import zlib
from pathlib import Path

import numpy as np
import pytest

from shootout.base.model import Config
from shootout.places.host import HostTarget
from shootout.workloads import inputs
from shootout.workloads.inputs import Rng, write_corpus, write_wav
from shootout.workloads.jssource import module_source

M64 = (1 << 64) - 1


def splitmix_reference(base: int, i: int) -> int:
    """The textbook scalar splitmix64 output number i (1-based) from state `base`."""
    z = (base + i * 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_rng_matches_scalar_splitmix_and_continues_its_stream():
    rng = Rng(7, 3)
    first = rng.u64(5).tolist()
    second = rng.u64(2).tolist()
    assert first + second == [splitmix_reference(rng.base, i) for i in range(1, 8)]
    assert Rng(7, 4).u64(1)[0] != first[0]  # streams differ


def test_rng_helpers_stay_in_range():
    rng = Rng(1)
    values = rng.below(10_000, 37)
    assert values.min() >= 0 and values.max() < 37 and len(set(values.tolist())) == 37
    u16 = rng.u16(1001)
    assert len(u16) == 1001 and u16.min() >= 0 and u16.max() < 65536
    assert len(rng.bytes(13)) == 13


def test_corpus_is_byte_identical_to_the_pinned_hash(tmp_path):
    # Changing the generator changes every result compared across machines: bump "v" in corpus().
    write_corpus(tmp_path / "c", 3)
    assert sha(tmp_path / "c") == "e101322e1d0b86fd36f6479ac981ac6888a3dbeefc212a9fe73385a655031bf0"


def test_corpus_mixes_compressible_and_incompressible_parts(tmp_path):
    write_corpus(tmp_path / "c", 10)
    data = (tmp_path / "c").read_bytes()
    assert len(data) == 10 * inputs.CHUNK
    chunks = [data[i * inputs.CHUNK:(i + 1) * inputs.CHUNK] for i in range(10)]
    ratios = [len(c) / len(zlib.compress(c, 6)) for c in chunks]
    kinds = inputs.CORPUS_KINDS
    assert ratios[kinds.index("compressed")] < 1.01  # random bytes do not shrink
    assert min(r for r, k in zip(ratios, kinds) if k == "text") > 2.0
    assert min(r for r, k in zip(ratios, kinds) if k == "code") > 3.0
    assert b"static " in chunks[kinds.index("code")] and b". " in chunks[0]
    assert 2.0 < len(data) / len(zlib.compress(data, 6)) < 8.0  # neither trivial nor hopeless


def test_wav_is_pinned_and_well_formed(tmp_path):
    write_wav(tmp_path / "w.wav", 0.05)
    assert sha(tmp_path / "w.wav") == "7eca4bb48315ee4b72317196a821f5fa0828ab30f840f6a01113952405373a76"
    with wave.open(str(tmp_path / "w.wav")) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (2, 2, 44100)
        assert w.getnframes() == round(0.05 * 60 * 44100)
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").reshape(-1, 2)
    left, right = pcm[:, 0].astype(float), pcm[:, 1].astype(float)
    assert 1000 < left.std() < 20000  # loud music, not silence, not clipped noise
    assert not np.array_equal(left, right)  # real stereo
    # not trivially compressible: a general compressor saves well under half
    assert len(zlib.compress(pcm.tobytes(), 6)) > 0.6 * pcm.nbytes


def test_js_and_ts_sources_are_pinned_and_differ_only_by_types():
    js, ts = module_source(20, typed=False), module_source(20, typed=True)
    assert hashlib.sha256(js.encode()).hexdigest() == "69b622aaa7e6717329b2965ef1d693bf67a9c7437abe3b2721dd87a1d5d0d64b"
    assert hashlib.sha256(ts.encode()).hexdigest() == "23cae9288de0cbcea856958ed38e96fc885b83ec8273d33a30807c5ce3b5cd24"
    assert "interface Options" in ts and "interface" not in js and ": number" not in js
    assert js.count("export function") == ts.count("export function") > 5


def test_cached_input_is_made_once_and_placed_in_the_target(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    calls = []

    def make(path: Path) -> None:
        calls.append(path)
        path.write_bytes(b"hello world")

    first = inputs.cached("demo", "bin", {"n": 1}, make)
    again = inputs.cached("demo", "bin", {"n": 1}, make)
    other = inputs.cached("demo", "bin", {"n": 2}, make)
    assert len(calls) == 2 and first == again and other.path != first.path
    assert first.sha256 == hashlib.sha256(b"hello world").hexdigest() and first.size == 11
    target = HostTarget(Config(name="host"))
    try:
        inside = inputs.place(target, first)
        assert Path(inside).read_bytes() == b"hello world"
        assert Path(inside).parent == Path(target.workdir())
        assert inputs.place(target, first) == inside
    finally:
        target.close()


def test_failed_generation_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))

    def broken(path: Path) -> None:
        path.write_bytes(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        inputs.cached("demo", "bin", {}, broken)
    assert list((tmp_path / "home" / "cache" / "inputs").iterdir()) == []
