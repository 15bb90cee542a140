"""The real command: native kernels at two ABIs, kill and resume, and bad input."""

from __future__ import annotations

import signal
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest


def test_ptrtree_is_faster_at_m32_with_a_ci_that_excludes_one_and_says_why(shootout):
    # The budget is checked after the warm-up against the rounds a first verdict needs: generous,
    # so that a machine busy with other work still gets there (the run stops once both are decided).
    done = shootout("run", "-c", "host", "-c", "host+m32", "-w", "ptrtree", "-w", "intmix", "--counters",
                    "--seed", "3", "--budget", "10m", "--max-rounds", "20", "--db", shootout.db, timeout=900)
    assert done.returncode == 0, done.stderr
    rows = {(r["workload"], r["config"]): r for r in shootout.rows()}
    tree = rows[("ptrtree", "host+m32")]
    assert tree["verdict"] == "faster", tree
    assert tree["ci_low"] > 1.0
    assert rows[("intmix", "host+m32")]["verdict"] in ("faster", "slower", "same", "inconclusive")
    assert "ptrtree" in done.stdout  # the table was printed
    # why: 12-byte nodes instead of 24: less memory, fewer misses in the cache model (a model on
    # this PMU-less VM, said so), the same lookups
    counters = {c["name"]: c for c in tree["counters"]}
    assert counters["max_rss"]["ratio"] < 0.8 and counters["max_rss"]["ci_high"] < 1, counters
    assert counters["d1_misses"]["ratio"] < 1 and counters["d1_misses"]["source"] == "cachegrind host model"
    assert counters["text_bytes"]["source"] == "ELF"
    assert "Why: the counters" in done.stdout and "ptrtree, host -m32" in done.stdout
    assert "cachegrind's host cache model" in done.stdout


def _trials(db_path) -> list[tuple]:
    try:
        with sqlite3.connect(db_path) as conn:
            return conn.execute("select round, workload, config from trials").fetchall()
    except sqlite3.OperationalError:  # the schema is not created yet
        return []


def test_sigkill_then_resume_completes_with_every_trial_once(shootout, tmp_path):
    toml = tmp_path / "shootout.toml"
    toml.write_text('[[workload]]\nname = "nap"\ncommand = "sleep 0.05"\n'
                    '[[workload]]\nname = "count"\ncommand = "seq 1 20000 | wc -l"\n')
    args = ("run", "-c", "host", "-c", "host+m32", "--file", str(toml), "-w", "nap", "-w", "count",
            "--seed", "9", "--min-rounds", "7", "--max-rounds", "7", "--precision", "1%", "--db", shootout.db)
    child = shootout.popen(*args)
    db_path = tmp_path / "results.db"
    deadline = time.time() + 120
    while time.time() < deadline:
        if db_path.exists() and len(_trials(db_path)) >= 10:
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    before = _trials(db_path)
    assert 10 <= len(before) < 32, "the kill should land mid-run"
    done = shootout("run", "--resume", "last", "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    after = _trials(db_path)
    counts = Counter(after)
    assert max(counts.values()) == 1  # nothing doubled
    expected = {(r, w, c) for r in range(0, 8) for w in ("nap", "count") for c in ("host", "host+m32")}
    assert set(after) == expected  # nothing lost: warm-up plus seven rounds, all pairs
    assert set(before) <= set(after)


@pytest.mark.parametrize("args, message", [
    (("-c", "host", "-w", "nosuch"), "unknown workload"),
    (("-c", "nosuch"), "unknown configuration"),
    (("-c", "host+mx32"), "error: no configuration can run here: host+mx32 cannot: "),
    (("-c", "host", "-c", "host+mx32"),
     "error: nothing to compare: of the 2 configurations only host can run here; host+mx32 cannot: "),
    (("-c", "host", "--budget", "soon"), "not a duration"),
    (("-c", "host", "--budget", "0"), "error: --budget 0 leaves no time to measure"),
    (("-c", "host", "--min-rounds", "3"), "at least 6 rounds"),
    (("-c", "host", "--max-rounds", "3"), "error: --max-rounds 3 is below the minimum of 6 rounds"),
    (("-c", "host", "--min-rounds", "8", "--max-rounds", "7"), "error: --max-rounds 7 is below the minimum of 8 rounds"),
    (("-c", "host", "--threshold", "0"), "--threshold 0: a verdict needs a threshold from 0.1%"),
    (("-c", "host", "--threshold", "-1%"), "--threshold -1%: a verdict needs a threshold from 0.1%"),
    (("-c", "host", "--precision", "2%"), "--precision 2% must be above 0 and at most the threshold"),
    (("-c", "host", "--confidence", "40%"), "--confidence 40% must be above 50%"),
    (("-c", "host", "--confidence", "1"), "--confidence 1 must be above 50% and below 100%"),
    (("-c", "host", "--aa", "-w", "intmix", "-w", "ptrtree", "--max-rounds", "6"),
     "--max-rounds 6 is too few"),
    (("-c", "host", "--cache-model", "pi9"), "error: unknown --cache-model 'pi9' (use one of: host, pi4, pi5)"),
    (("-c", "host", "-c", "image:/nonexistent/raspios.img.xz"),
     "error: image:/nonexistent/raspios.img.xz: No such file or directory (use image:PATH for a disk image"),
    (("-c", "host", "-c", "image:/tmp"), "error: image:/tmp: not a file (image: takes a disk image file"),
    (("-c", "host", "-c", "rootfs:/etc/hostname"), "error: rootfs:/etc/hostname: neither a directory nor a block device"),
    (("-c", "host", "-c", "image:"), "error: 'image:' names no path"),
])
def test_bad_input_is_one_line_and_nonzero(shootout, args, message):
    done = shootout("run", *args, "--db", shootout.db)
    assert done.returncode != 0
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1  # the error line, with why
    assert "Traceback" not in done.stderr


def test_malformed_toml_reports_file_and_line(shootout, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[workload]]\nname = 'x'\ncommand = [\n")
    done = shootout("run", "-c", "host", "--file", str(bad), "--db", shootout.db)
    assert done.returncode == 2
    assert "bad.toml" in done.stderr and "line" in done.stderr


def test_unwritable_database_path(shootout, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = shootout("run", "-c", "host", "-w", "intmix", "--db", f"sqlite:///{blocker}/sub/r.db")
    assert done.returncode != 0
    assert "error:" in done.stderr and "Traceback" not in done.stderr


def test_user_command_that_fails_or_prints_no_number(shootout, tmp_path):
    toml = tmp_path / "s.toml"
    toml.write_text('[[workload]]\nname = "broken"\ncommand = "echo oops >&2; exit 3"\n'
                    '[[workload]]\nname = "silent"\ncommand = "echo nothing"\nregex = "rate: ([0-9.]+)"\nunit = "MB/s"\n')
    done = shootout("run", "-c", "host", "--file", str(toml), "-w", "broken", "-w", "silent", "--db", shootout.db)
    assert done.returncode == 5
    assert done.stderr.startswith("error: no workload produced a result: broken failed on host: exit status 3: oops; "
                                  "silent failed on host: silent printed no number")
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""  # nothing measured: one line
    runs = shootout("runs", "--db", shootout.db)
    assert "failed" not in runs.stdout and "broken" not in runs.stdout  # and no run kept


def test_compare_of_runs_that_share_no_workload_is_refused(shootout):
    imports = Path(__file__).parents[1] / "fixtures" / "report" / "imports"
    for name in ("hyperfine.json", "composite.xml"):
        assert shootout("import", str(imports / name), "--db", shootout.db).returncode == 0
    done = shootout("compare", "1", "2", "--db", shootout.db)
    assert done.returncode == 2
    assert "share no workload" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    sides = shootout("compare", "1", "vs", "--db", shootout.db)
    assert sides.returncode == 2 and "'vs' needs runs on both sides" in sides.stderr
