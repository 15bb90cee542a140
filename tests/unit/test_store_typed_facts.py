"""Runs stored before typed run facts load as the typed Run: from a database of schema version 3
and from a results file of version 1 (tests/fixtures/store/README.md says how they were made)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from shootout.base.model import Run, UserspaceRef
from shootout.base.runfacts import LostWorkload, RunFacts
from shootout.judge.analysis import analyze
from shootout.measure.lostconfigs import lost_lines
from shootout.store import Store, migrations
from shootout.store.results import RESULTS_FORMAT_VERSION, from_results

STORED = Path(__file__).parent.parent / "fixtures" / "store"
WHY = "no sysctl vm.no_such_setting on this kernel"
I386 = "debian:bookworm:i386"


def assert_typed(run: Run) -> None:
    assert run.lost == {"nosuch": WHY}
    assert list(run.lost_workloads) == ["broken"]
    assert isinstance(run.lost_workloads["broken"], LostWorkload)
    assert run.lost_workloads["broken"].config == I386
    assert run.lost_workloads["broken"].reason.startswith("broken printed no number matching")
    assert run.calibrated is None and run.budget_refused is None and run.headline_clocks == {}
    assert run.set_aside == [] and run.across_boots is None
    assert isinstance(run.facts, RunFacts)
    # the machine's facts are the probe's alone: the runner's records left them
    assert run.facts.machine == {"hostname": "fixture", "cores": 2, "kernel": "6.1.0-fixture"}
    assert set(run.facts.sides) == {"host", I386}
    assert run.facts.target(I386) == {"fake": True}
    assert run.facts.workload(I386, "bench") == {"elf": {}, "versions": {}}
    host, i386 = run.configs
    assert host.userspace_ref is None
    assert (i386.name, i386.userspace, i386.userspace_ref) == (I386, "debian-bookworm-i386",
                                                               UserspaceRef("bookworm", "i386"))


def test_a_database_of_schema_version_3_is_migrated_to_the_typed_run(tmp_path: Path) -> None:
    db = tmp_path / "v1-run.db"
    shutil.copy(STORED / "v1-run.db", db)
    with Store(f"sqlite:///{db}") as store:
        assert store.schema_version == len(migrations.MIGRATIONS)
        run = store.get_run("last")
        assert_typed(run)
        trials = store.trials(run.id)
        assert len(trials) == 4 and {t.spec.config for t in trials} == {"host", I386}
        analysis = analyze(run, trials)
        assert analysis.lost == {"nosuch": WHY}
        assert lost_lines(analysis.lost) == [f"not compared: nosuch, which cannot run here: {WHY}"]


def test_attempts_set_aside_and_a_block_across_boots_leave_the_machines_facts(tmp_path: Path) -> None:
    """Version 3 kept both in the machine's facts too (the fixture's run has neither: added here
    as the runner and a run across boots of that version wrote them)."""
    db = tmp_path / "v1-run.db"
    shutil.copy(STORED / "v1-run.db", db)
    aside = [{"round": 2, "workload": "bench", "config": "host", "wall_s": 1.5}]
    block = {"campaign": "a1b2c3", "schedule": ["k1", "k2", "k2", "k1"], "block": 1, "configs": []}
    with sqlite3.connect(db) as conn:
        facts = json.loads(conn.execute("SELECT facts FROM runs").fetchone()[0])
        facts["machine"] |= {"set_aside": aside, "across_boots": block}
        conn.execute("UPDATE runs SET facts = ?", (json.dumps(facts),))
    conn.close()
    with Store(f"sqlite:///{db}") as store:
        run = store.get_run("last")
    assert (run.set_aside, run.across_boots) == (aside, block)
    assert run.facts.machine == {"hostname": "fixture", "cores": 2, "kernel": "6.1.0-fixture"}


def test_a_results_file_of_version_1_is_read_as_the_typed_run(tmp_path: Path) -> None:
    data = json.loads((STORED / "v1-run.json").read_text())
    assert data["version"] == 1 < RESULTS_FORMAT_VERSION
    run, trials = from_results(data)
    assert_typed(run)
    assert len(trials) == 8  # the warm-up's too
    with Store(f"sqlite:///{tmp_path / 'r.db'}") as store:
        again = store.get_run(store.import_run(data))
        assert_typed(again)
        # exported as the newest version, and read back the same
        exported = store.export_run(again.id)
        assert exported["version"] == RESULTS_FORMAT_VERSION
        assert set(exported["run"]["facts"]) == {"machine", "sides"}
        assert_typed(from_results(json.loads(json.dumps(exported)))[0])
