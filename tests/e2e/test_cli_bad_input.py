"""Bad input on the command line: one line that says what is wrong and what to do, a non-zero
exit, and nothing else; lines written into a pipe stay whole."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from shootout.base.model import Config, Metric, Run, RunSettings, WorkloadSpec
from shootout.base.runfacts import RunFacts
from shootout.store import Store


def shootout(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "SHOOTOUT_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "shootout", *args], capture_output=True, text=True, timeout=120,
                          env=env, check=False)


def one_run(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    Store(url).create_run(Run(
        id=0, created_at=1_700_000_000.0, status="complete", settings=RunSettings(seed=1),
        configs=[Config(name=n, target="host") for n in ("a", "b")],
        workloads=[WorkloadSpec(name="w", category="cpu", description="w", metrics=(Metric("wall", "s"),),
                                headline="wall")],
        params={}, facts=RunFacts()))
    return url


@pytest.mark.parametrize("refs", [["1", "1"], ["1", "last"], ["1", "vs", "1"]])
def test_compare_of_a_run_with_itself_is_refused_in_one_line(tmp_path: Path, refs: list[str]) -> None:
    done = shootout("compare", *refs, "--db", one_run(tmp_path), home=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""  # no summary, let alone two
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: compare: run 1 is named twice") and "another run" in line


@pytest.mark.parametrize("args, said", [
    (["run", "--seed", "abc"], "--seed"),
    (["run", "--no-such-option"], "--no-such-option"),
    (["show", "1", "2", "3"], "unexpected extra argument"),
])
def test_a_bad_option_is_one_line_not_a_usage_and_a_box(tmp_path: Path, args: list[str], said: str) -> None:
    done = shootout(*args, home=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and said in line.lower() and f"shootout {args[0]} --help" in line
    assert "\u256d" not in line and "Usage:" not in line


def test_help_and_no_arguments_still_show_the_help(tmp_path: Path) -> None:
    for args in ([], ["--help"], ["run", "--help"]):
        done = shootout(*args, home=tmp_path)
        assert "Usage" in done.stdout + done.stderr and "error:" not in done.stderr, args


def test_doctor_into_a_pipe_keeps_each_line_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """`doctor | cat` cut paths at 80 columns, mid-word."""
    from shootout.boots import switch
    from shootout.cli import consoles, doctor, main
    from shootout.system import journal

    long_path = "/var/lib/shootout/userspaces/debian-bookworm-i386/" + "deep/" * 12 + "mounted-scratch"
    out = io.StringIO()
    piped = Console(file=out, width=80, force_terminal=False)
    monkeypatch.setattr(main, "console", piped)
    monkeypatch.setattr(consoles, "console", piped)  # what say() wraps to
    monkeypatch.setattr(journal, "recover", lambda: ([f"unmount {long_path}"], []))
    monkeypatch.setattr(switch, "undo_next_boot", lambda: ([], []))
    tool = f"missing  tool-with-a-long-name (used by {long_path}): apt-get install a-package-with-a-long-name"
    monkeypatch.setattr(doctor, "tool_report", lambda: [tool])
    main.doctor()
    lines = out.getvalue().splitlines()
    assert lines[0] == f"undid: unmount {long_path}"
    assert " ".join(" ".join(lines[1:]).split()) == " ".join(tool.split())  # wrapped at words only
    assert long_path + "):" in lines[1:] or any(long_path in line for line in lines[1:])  # the path whole
