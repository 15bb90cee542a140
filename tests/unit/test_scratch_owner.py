"""One owner per scratch area: the target and the scratch parts reach the same Scratch object,
handed to each; nothing module-global pairs them up."""

from __future__ import annotations

import weakref
from pathlib import Path

from shootout.base.model import Config, aa_copy
from shootout.parts import RunParts, throttle
from shootout.parts import scratch as scratch_part
from shootout.places import target as base
from shootout.places.host import HostTarget
from shootout.storage import scratch
from shootout.storage.scratch import Scratch, Scratches
from shootout.storage.scratchspec import DEFAULT, ScratchSpec, scratch_spec
from shootout.system.journal import Journal


def _journal(tmp_path: Path) -> Journal:
    (tmp_path / "journal").mkdir()
    return Journal(tmp_path / "journal")


def test_the_target_and_the_parts_reach_one_owner_closed_once_by_whoever_made_it(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    original = Config(name="a")
    configs = [original, aa_copy(original)]
    scratches = Scratches(configs, journal)
    owner = scratches.of(original)
    assert scratches.of(configs[1]) is owner and scratches.owners() == [owner]  # the A/A copy uses its original's
    target = HostTarget(original, journal)
    target.use_scratch(owner)
    parts = RunParts(configs, journal, scratches)
    try:
        session = parts.session("scratch")
        assert isinstance(session, scratch_part._Session) and session.scratches is scratches
        assert owner.area is None and parts.facts(original) == {}  # nothing made until a workload asks
        path = target.scratch("disk")
        assert owner.area is not None and str(owner.area.host_path) == path
        assert target._scratch_owner is owner and target._scratch_area is owner.area
        # What the part describes is the area the target made, for the copy too.
        assert parts.facts(original)["scratch"]["path"] == path == parts.facts(configs[1])["scratch"]["path"]
        assert parts.facts(original)["scratch"] == target.scratch_facts()
        target.close()
        assert Path(path).is_dir() and owner.area is not None  # the run's owner: not the target's to close
        assert parts.close() == []
        assert Path(path).is_dir()
    finally:
        target.close()
        parts.close()
        assert scratches.close() == []
    assert not Path(path).exists() and owner.area is None and journal.pending == []
    assert scratches.close() == []  # closed once: a second close has nothing to undo


def test_no_registry_pairs_areas_up_by_journal_and_configuration(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    config = Config(name="a")
    first, second = Scratch(config, journal), Scratch(config, journal)
    try:
        # The old module-level WeakKeyDictionary handed the second the first's area.
        assert first.open().host_path != second.open().host_path
        assert second.area is not first.area
    finally:
        first.close()
        second.close()
    weak = (weakref.WeakKeyDictionary, weakref.WeakValueDictionary, weakref.WeakSet)
    for module in (scratch, scratch_part, throttle, base):
        assert not [name for name, value in vars(module).items() if isinstance(value, weak)], module.__name__
    assert not hasattr(scratch, "open_scratch") and not hasattr(scratch, "opened_scratch")


def test_a_target_outside_a_run_owns_its_scratch_and_closes_it(tmp_path: Path) -> None:
    host = HostTarget(Config(name="alone"), _journal(tmp_path))
    try:
        path = host.scratch("disk")
        assert host._owns_scratch and host._scratch_owner is not None and Path(path).is_dir()
    finally:
        host.close()
    assert not Path(path).exists() and host._scratch_owner is None


def test_the_spec_is_read_through_one_typed_accessor() -> None:
    assert scratch_spec(Config(name="plain")) is None
    directory = Config(name="d", parts={"scratch": {"dir": "/mnt/usb"}})
    assert scratch_spec(directory) == ScratchSpec(dir=Path("/mnt/usb")) and not scratch_spec(directory).in_file
    data = {"fs": "btrfs", "mount": "compress=zstd:3", "size": 4 << 30, "in": "/srv"}
    spec = scratch_spec(Config(name="f", parts={"scratch": data}))
    assert spec is not None and spec.in_file and (spec.fs, spec.mount, spec.size, spec.within) == (
        "btrfs", "compress=zstd:3", 4 << 30, Path("/srv"))
    assert spec.data() == data and ScratchSpec.of(DEFAULT.data()) == DEFAULT
