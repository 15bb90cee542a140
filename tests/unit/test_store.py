"""The results store: runs, trials committed at once, export/import, CSV, settings, errors.

Every test that takes `url` runs on SQLite in tmp_path and on a new PostgreSQL database
(the `pg_url` fixture: skipped without SHOOTOUT_TEST_PG_URL, failed in CI).
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
import json
import sqlite3

import pytest

from shootout.base.errors import StoreError
from shootout.base.runfacts import RunFacts
from shootout.base.model import (
    Config,
    Metric,
    Run,
    RunSettings,
    Trial,
    TrialSpec,
    WorkloadSpec,
)
from shootout.store import (
    RESULTS_FORMAT_VERSION,
    Store,
    run_from_dict,
    run_to_dict,
    trial_from_dict,
    trial_to_dict,
)
from shootout.store import results as results_mod


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return f"sqlite:///{tmp_path / 'results.db'}"


@pytest.fixture
def store(url: str):
    s = Store(url)
    yield s
    s.close()


def make_run(note: str = "", seed: int = 7) -> Run:
    return Run(
        id=0,
        created_at=1_700_000_000.25,
        status="running",
        settings=RunSettings(seed=seed, min_rounds=6, threshold=0.02, aa=False),
        configs=[
            Config(name="amd64", target="chroot", userspace="bookworm-amd64", cflags=("-O2",)),
            Config(
                name="i386",
                target="chroot",
                label="32-bit",
                abi="m32",
                cflags=("-O2", "-m32"),
                env=(("LC_ALL", "C"),),
                userspace="bookworm-i386",
                options=(("arch", "i386"), ("mirror", "deb.debian.org")),
            ),
        ],
        workloads=[
            WorkloadSpec(
                name="tree",
                category="memory",
                description="pointer-heavy binary tree",
                metrics=(Metric("rate", "ops/s", "inserts per second"), Metric("time", "s")),
                headline="rate",
                reproduces="A",
            ),
            WorkloadSpec(
                name="sha256",
                category="crypto",
                description="hash 1 KiB blocks",
                metrics=(Metric("bw", "MB/s"),),
                headline="bw",
            ),
        ],
        params={"tree": {"iterations": 120000, "sizes": [1, 2, 3]}, "sha256": {}},
        facts=RunFacts(machine={"cpu": "x86-64", "cores": 2}, sides={"amd64": {"libc": "2.36"}}),
        elapsed_s=12.5,
        user_workloads={"mine": {"command": "true", "unit": "s"}},
        note=note,
    )


def make_trial(rnd: int, pos: int, workload: str, config: str, value: float = 1.0, **kw) -> Trial:
    values = kw.pop(
        "values", {"rate": value * 1000.0, "time": 0.1 / value} if workload == "tree" else {"bw": value}
    )
    base = dict(
        spec=TrialSpec(rnd, pos, workload, config),
        values=values,
        wall_s=0.31 * value,
        user_s=0.3,
        sys_s=0.01,
        max_rss_kb=20480,
        ctx_switches=3,
        exit_status=0,
        stderr_tail="",
        started_at=1_700_000_100.0 + rnd,
        monitor={"mhz": [2400.0, 2395.5], "throttled": False},
        error=None,
    )
    base.update(kw)
    return Trial(**base)


def make_trials() -> list[Trial]:
    """A warm-up round and two rounds, in a shuffled insertion order, plus one failure."""
    out = []
    for rnd in (2, 0, 1):
        slots = [("tree", "amd64"), ("tree", "i386"), ("sha256", "amd64"), ("sha256", "i386")]
        for pos, (w, c) in enumerate(reversed(slots) if rnd == 1 else slots):
            out.append(make_trial(rnd, pos, w, c, value=1.0 + rnd / 10 + pos / 100))
    out[-1] = make_trial(
        1,
        3,
        "tree",
        "amd64",
        values={},
        exit_status=139,
        error="killed by SIGSEGV",
        stderr_tail="Segmentation fault\n",
    )
    return out


def ordered(trials: list[Trial]) -> list[Trial]:
    return sorted(trials, key=lambda t: (t.spec.round, t.spec.position))


def filled(url: str) -> tuple[Store, int, Run, list[Trial]]:
    s = Store(url)
    run = make_run()
    run_id = s.create_run(run)
    trials = make_trials()
    for t in trials:
        s.add_trial(run_id, t)
    return s, run_id, dataclasses.replace(run, id=run_id), trials


# -- runs ---------------------------------------------------------------------------------


def test_create_get_list_last(store: Store) -> None:
    first, second = make_run(note="first"), make_run(note="second", seed=8)
    id1 = store.create_run(first)
    id2 = store.create_run(second)
    assert id1 != id2
    assert store.get_run(id1) == dataclasses.replace(first, id=id1)
    assert store.get_run(str(id2)) == dataclasses.replace(second, id=id2)
    assert store.get_run("last").note == "second"
    assert [r.id for r in store.list_runs()] == [id2, id1]
    got = store.get_run(id1)
    assert isinstance(got.configs[1].env, tuple) and got.configs[1].env[0] == ("LC_ALL", "C")
    assert got.workloads[0].metric("time").unit == "s"


def test_unknown_run_and_bad_reference(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.get_run("last")
    assert "no runs" in err.value.message
    run_id = store.create_run(make_run())
    with pytest.raises(StoreError) as err:
        store.get_run(run_id + 7)
    assert err.value.message.startswith(f"no run {run_id + 7} in ")
    assert err.value.hint == "list runs with: shootout runs"
    with pytest.raises(StoreError):
        store.get_run("yesterday")
    for call in (lambda: store.update_run(999, status="complete"), lambda: store.delete_run(999)):
        with pytest.raises(StoreError, match="no run 999"):
            call()


def test_update_run_changes_only_what_is_given(store: Store) -> None:
    run = make_run()
    run_id = store.create_run(run)
    store.update_run(run_id, status="complete", elapsed_s=99.0)
    got = store.get_run(run_id)
    assert (got.status, got.elapsed_s, got.params, got.note) == ("complete", 99.0, run.params, "")
    store.update_run(run_id, params={"tree": {"iterations": 5}}, facts=RunFacts(machine={}), note="tuned")
    got = store.get_run(run_id)
    assert got.params == {"tree": {"iterations": 5}} and got.facts == RunFacts(machine={})
    assert (got.status, got.note, got.configs) == ("complete", "tuned", run.configs)


def test_delete_run_removes_its_trials_only(url: str) -> None:
    s, run_id, _, trials = filled(url)
    other = s.create_run(make_run(note="other"))
    s.add_trial(other, trials[0])
    s.delete_run(run_id)
    assert [r.id for r in s.list_runs()] == [other]
    assert s.trial_count(run_id, include_warmup=True) == 0
    assert s.trials(other, include_warmup=True) == [trials[0]]
    s.close()


# -- trials -------------------------------------------------------------------------------


def test_trials_round_trip_in_round_order(url: str) -> None:
    s, run_id, _, trials = filled(url)
    measured = ordered([t for t in trials if not t.spec.warmup])
    assert s.trials(run_id) == measured
    assert s.trials(run_id, include_warmup=True) == ordered(trials)
    assert s.trial_count(run_id) == len(measured) == 8
    assert s.trial_count(run_id, include_warmup=True) == 12
    failed = [t for t in s.trials(run_id) if not t.ok]
    assert len(failed) == 1 and failed[0].values == {} and failed[0].error == "killed by SIGSEGV"
    s.close()


def test_add_trial_is_committed_before_it_returns(url: str) -> None:
    writer = Store(url)
    run_id = writer.create_run(make_run())
    reader = Store(url)  # opened first, so it cannot just be reading a fresh snapshot
    assert reader.trial_count(run_id) == 0
    trial = make_trial(1, 0, "tree", "i386", value=2.0)
    writer.add_trial(run_id, trial)
    assert reader.trials(run_id) == [trial]  # writer still open: no close() flushed it
    writer.close()
    reader.close()


def test_duplicate_trial_is_refused(store: Store) -> None:
    run_id = store.create_run(make_run())
    store.add_trial(run_id, make_trial(1, 0, "tree", "i386", value=2.0))
    with pytest.raises(StoreError) as err:
        store.add_trial(run_id, make_trial(1, 5, "tree", "i386", value=3.0))
    assert "already holds the round 1 trial of tree on i386" in err.value.message
    assert [t.values["rate"] for t in store.trials(run_id)] == [2000.0]
    # Another round, workload or config is a different slot.
    store.add_trial(run_id, make_trial(2, 0, "tree", "i386"))
    store.add_trial(run_id, make_trial(1, 1, "tree", "amd64"))
    assert store.trial_count(run_id) == 3
    with pytest.raises(StoreError, match=f"no run {run_id + 1} "):
        store.add_trial(run_id + 1, make_trial(1, 0, "tree", "i386"))


# -- results files ------------------------------------------------------------------------


def test_export_import_round_trip(url: str, tmp_path) -> None:
    s, run_id, _, trials = filled(url)
    exported = s.export_run(run_id)
    assert exported["format"] == "shootout-results" and exported["version"] == RESULTS_FORMAT_VERSION
    assert len(exported["trials"]) == len(trials)  # warm-ups included
    as_json = json.loads(json.dumps(exported))
    assert as_json == exported  # only JSON types inside

    new_id = s.import_run(as_json)
    assert new_id != run_id
    again = s.export_run(new_id)
    assert again["run"].pop("id") == new_id
    assert again == {**exported, "run": {k: v for k, v in exported["run"].items() if k != "id"}}
    assert s.trials(new_id) == s.trials(run_id)

    # ... and into another database: what merging results from two machines does.
    elsewhere = Store(f"sqlite:///{tmp_path / 'other' / 'b.db'}")
    other_id = elsewhere.import_run(as_json)
    assert elsewhere.get_run(other_id) == dataclasses.replace(s.get_run(run_id), id=other_id)
    elsewhere.close()
    s.close()


def _malformed(good: dict) -> list[tuple[str, dict]]:
    cases = []

    def case(name: str, edit) -> None:
        data = copy.deepcopy(good)
        edit(data)
        cases.append((name, data))

    case("wrong format", lambda d: d.update(format="something-else"))
    case("no format", lambda d: d.pop("format"))
    case("newer version", lambda d: d.update(version=RESULTS_FORMAT_VERSION + 1))
    case("version as text", lambda d: d.update(version="1"))
    case("no run", lambda d: d.pop("run"))
    case("no trials", lambda d: d.pop("trials"))
    case("run without configs", lambda d: d["run"].pop("configs"))
    case("settings not an object", lambda d: d["run"].update(settings=[1, 2]))
    case("metric without unit", lambda d: d["run"]["workloads"][0]["metrics"][0].pop("unit"))
    case("bad env pair", lambda d: d["run"]["configs"][1].update(env=[["LC_ALL"]]))
    case("trial without wall_s", lambda d: d["trials"][-1].pop("wall_s"))
    case("text value", lambda d: d["trials"][-1]["values"].update(rate="fast"))
    case("text round", lambda d: d["trials"][-1]["spec"].update(round="3"))
    case("unknown config", lambda d: d["trials"][-1]["spec"].update(config="arm64"))
    case("doubled trial", lambda d: d["trials"].append(copy.deepcopy(d["trials"][-1])))
    return cases


def test_malformed_import_raises_and_writes_nothing(url: str) -> None:
    s, run_id, _, _ = filled(url)
    good = s.export_run(run_id)
    for name, data in [*_malformed(good), ("not an object", [good])]:
        with pytest.raises(StoreError) as err:
            s.import_run(data)
        assert "\n" not in str(err.value), name
        assert [r.id for r in s.list_runs()] == [run_id], name
    assert s.trial_count(run_id, include_warmup=True) == 12
    s.close()


def test_import_failing_inside_the_database_leaves_nothing(url: str, monkeypatch) -> None:
    """Atomicity itself: skip the up-front check so the unique constraint fails mid-write."""
    s, run_id, _, _ = filled(url)
    data = s.export_run(run_id)
    data["trials"].append(copy.deepcopy(data["trials"][5]))
    monkeypatch.setattr(results_mod, "_check_consistent", lambda run, trials: None)
    with pytest.raises(StoreError):
        s.import_run(data)
    assert [r.id for r in s.list_runs()] == [run_id]
    s.close()
    with Store(url) as fresh:  # a new connection sees the same: the insert of the run was undone
        assert len(fresh.list_runs()) == 1


def test_serialize_round_trips_records() -> None:
    run = make_run()
    assert run_from_dict(json.loads(json.dumps(run_to_dict(run)))) == run
    for t in make_trials():
        assert trial_from_dict(json.loads(json.dumps(trial_to_dict(t)))) == t
    with pytest.raises(StoreError, match="missing key 'status'"):
        run_from_dict({k: v for k, v in run_to_dict(run).items() if k != "status"})


def test_a_run_stored_before_repeats_existed_kept_every_trial() -> None:
    data = run_to_dict(make_run())
    assert run_from_dict(data).settings.repeats == 3
    del data["settings"]["repeats"]
    assert run_from_dict(data).settings.repeats == 0


# -- CSV ----------------------------------------------------------------------------------


def test_export_csv_has_a_row_per_trial_and_metric(url: str) -> None:
    s, run_id, _, trials = filled(url)
    rows = list(csv.DictReader(io.StringIO(s.export_csv(run_id))))
    assert list(rows[0]) == list(results_mod.CSV_COLUMNS)
    assert len(rows) == sum(max(1, len(t.values)) for t in trials) == 17
    tree = [r for r in rows if r["round"] == "2" and r["workload"] == "tree" and r["config"] == "i386"]
    assert {r["metric"]: (r["unit"], float(r["value"])) for r in tree} == {
        "rate": ("ops/s", pytest.approx(1210.0)),
        "time": ("s", pytest.approx(0.1 / 1.21)),
    }
    assert all(r["run_id"] == str(run_id) for r in rows)
    assert {r["warmup"] for r in rows if r["round"] == "0"} == {"1"}
    failed = [r for r in rows if r["error"]]
    assert len(failed) == 1
    assert (failed[0]["metric"], failed[0]["value"], failed[0]["exit_status"]) == ("", "", "139")
    s.close()


# -- settings -----------------------------------------------------------------------------


def test_settings_put_get_overwrite(store: Store, url: str) -> None:
    assert store.get_setting("noise-floor") is None
    store.put_setting("noise-floor", {"tree": 0.004, "sizes": (1, 2)})
    store.put_setting("other", {"x": 1})
    store.put_setting("noise-floor", {"tree": 0.003})
    with Store(url) as again:
        assert again.get_setting("noise-floor") == {"tree": 0.003}
        assert again.get_setting("other") == {"x": 1}


# -- opening ------------------------------------------------------------------------------


def test_unwritable_path_is_one_line_error(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError) as err:
        Store(f"sqlite:///{blocker}/sub/results.db")
    assert (
        err.value.message == f"cannot create database {blocker}/sub/results.db: {blocker} is not a directory"
    )
    assert err.value.hint == "pass --db with a writable path"
    with pytest.raises(StoreError) as err:  # the database path is a directory
        Store(str(tmp_path))
    assert err.value.message.startswith(f"cannot create database {tmp_path}: ")
    assert "\n" not in str(err.value)


def test_garbage_file_and_bad_urls(tmp_path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not an SQLite database, just some bytes " * 100)
    with pytest.raises(StoreError) as err:
        Store(f"sqlite:///{junk}")
    assert err.value.message == f"cannot open database {junk}: file is not a database"
    assert junk.read_bytes().startswith(b"this is not")  # left as it was
    with pytest.raises(StoreError, match="unknown database kind 'nosuchdb'"):
        Store("nosuchdb://host/x")
    # Nothing listens on port 1; without a PostgreSQL driver installed the error names it.
    with pytest.raises(StoreError) as err:
        Store("postgresql://nobody:s3cret@127.0.0.1:1/none")
    text_ = str(err.value)
    assert "s3cret" not in text_ and "\n" not in text_
    assert err.value.message.startswith(
        ("cannot connect to database postgresql://nobody:***@127.0.0.1:1/none: ", "the postgresql database driver ")
    ), text_
    assert "Debian package" in err.value.hint or "server" in err.value.hint


def test_plain_path_and_default_url(tmp_path, monkeypatch) -> None:
    with Store(str(tmp_path / "deep" / "dir" / "r.db")) as s:
        assert s.url == f"sqlite:///{tmp_path}/deep/dir/r.db"
        s.create_run(make_run())
    assert (tmp_path / "deep" / "dir" / "r.db").is_file()
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    with Store() as s:
        assert s.url == f"sqlite:///{tmp_path}/home/results.db"
    assert (tmp_path / "home" / "results.db").is_file()


def test_sqlite_runs_in_wal_mode(tmp_path) -> None:
    path = tmp_path / "r.db"
    with Store(f"sqlite:///{path}") as s:
        s.create_run(make_run())
        with s._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        raw = sqlite3.connect(path)
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent in the file
        raw.close()
