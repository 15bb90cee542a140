"""The real command as a new user meets it: a file with its own workloads (docs/configurations.md),
a run written to a file, and `show` at 80 columns on a terminal and into a pipe."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import termios

import pytest
from conftest import Shootout

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TOML = """\
[run]
configs = ["plain", "tuned"]

[[config]]
name = "plain"

[[config]]
name = "tuned"
env = { MALLOC_ARENA_MAX = "2" }

[[workload]]
name = "sorter"
command = "seq 1 200000 | sort -rn | tail -n 1"

[[workload]]
name = "counter"
command = "echo rate: $(seq 1 100000 | wc -l)"
regex = 'rate: ([0-9.]+)'
unit = "ops/s"
"""


@pytest.fixture(scope="module")
def user_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Shootout, subprocess.CompletedProcess[str]]:
    home = tmp_path_factory.mktemp("newcomer")
    toml = home / "shootout.toml"
    toml.write_text(TOML)
    sh = Shootout(home)
    done = sh("run", "--file", str(toml), "--max-rounds", "7", "--seed", "5", "--db", sh.db)
    return sh, done


def test_the_files_own_workloads_run_when_none_is_selected(user_run):
    sh, done = user_run
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())  # a note wraps at words
    assert "running the 2 workloads named in" in said and "sorter, counter" in said
    assert {r["workload"] for r in sh.rows() if not r["workload"].startswith("geomean")} == {"sorter", "counter"}


def test_a_run_written_to_a_file_prints_a_line_per_round(user_run):
    _, done = user_run
    lines = done.stdout.splitlines()
    assert any(line.startswith("warm-up: 2 workloads left") for line in lines)
    # rounds are counted to the first round that can give a verdict (7 here), not to --min-rounds
    for r in range(1, 8):
        assert any(line.startswith(f"round {r} of 7: ") and "ETA" in line for line in lines), done.stdout
    # two comparisons looked at from round 6 to 7: the sequential rule can first decide at round 7
    assert any(line.startswith("a first verdict needs 7 rounds: about") for line in lines), done.stdout


def on_a_terminal(sh: Shootout, *args: str, columns: int = 80) -> str:
    """Run shootout with a pseudo-terminal of `columns` columns as its stdout."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {**sh.env, "COLUMNS": str(columns), "TERM": "xterm"}
    proc = subprocess.Popen(sh.argv(*args), env=env, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r", "")


@pytest.mark.parametrize("extra", [(), ("--all",)])
def test_show_fits_80_columns_on_a_terminal(user_run, extra):
    sh, _ = user_run
    text = on_a_terminal(sh, "show", "--db", sh.db, *extra)
    assert "sorter" in text and "counter" in text and "geomean" in text
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "\u2026" not in text


def test_show_into_a_pipe_is_plain_and_whole(user_run):
    sh, _ = user_run
    done = sh("show", "--db", sh.db)
    assert done.returncode == 0
    assert "\u2026" not in done.stdout and "\u2503" not in done.stdout and "\x1b[" not in done.stdout
    # its headline clock: CPU time where the pipeline only computed (on a reserved CPU, as a rule), else wall
    assert re.search(r"^sorter\s+(wall|cpu)\b", done.stdout, re.M) and re.search(r"^geomean\s+2 workloads", done.stdout, re.M)
