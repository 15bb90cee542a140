"""`helper serve` and HelperSession, on this machine: the helper compiled here, no ssh between.

The same binary and framing run on a remote; here the session's transport is a plain pipe.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from shootout.base.errors import TargetError
from shootout.remote.helper import source
from shootout.remote.session import HelperSession, netstring, request

ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}


@pytest.fixture(scope="module")
def helper_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc")
    if cc is None:
        pytest.fail("cc is missing: install the Debian package gcc")
    binary = tmp_path_factory.mktemp("helper") / "helper"
    subprocess.run([cc, "-O2", "-x", "c", "-o", str(binary), "-"], input=source(), check=True)
    return binary


@pytest.fixture
def session(helper_binary: Path) -> Iterator[HelperSession]:
    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen([str(helper_binary), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    s = HelperSession(start, "a local helper")
    yield s
    s.close()


def test_requests_are_netstrings() -> None:
    assert netstring("héllo") == b"6:h\xc3\xa9llo"
    assert request(["echo", "a b"], {"X": "1"}, "/w", 2.5) == b"3:run5:2.5002:/w1:13:X=11:24:echo3:a b"


def test_commands_run_one_after_another_in_one_session(session: HelperSession, tmp_path: Path) -> None:
    done = session.run(["sh", "-c", 'echo "$X in $(pwd)"; echo oops >&2; exit 7'], {**ENV, "X": "x y"}, "/tmp", 30)
    assert (done.exit_status, done.stdout, done.stderr) == (7, "x y in /tmp\n", "oops\n")
    assert session.run(["cat"], ENV, "/", 30, stdin=b"\x00binary\xff").stdout == "\x00binary\ufffd"
    big = tmp_path / "big"
    big.write_bytes(b"z" * 300_000)
    assert session.run(["wc", "-c"], ENV, "/", 30, stdin=big).stdout.strip() == "300000"
    assert session.run(["env"], ENV, "/", 30).stdout.splitlines() == ["PATH=/usr/bin:/bin", "LC_ALL=C"]


def test_rusage_is_the_commands_own(session: HelperSession) -> None:
    done = session.run(["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"], ENV, "/", 60)
    assert done.exit_status == 0 and done.user_s > 0.05 and done.max_rss_kb > 0 and done.wall_s >= done.user_s * 0.5


def test_a_timeout_kills_the_group_and_the_session_goes_on(session: HelperSession) -> None:
    done = session.run(["sh", "-c", "sleep 30 & sleep 30"], ENV, "/", 0.5)
    assert done.timed_out and done.exit_status == -9 and done.wall_s < 10
    assert session.run(["echo", "next"], ENV, "/", 30).stdout == "next\n"


def test_a_missing_program_is_exit_127_not_a_lost_session(session: HelperSession) -> None:
    done = session.run(["no-such-program-here"], ENV, "/", 30)
    assert done.exit_status == 127 and "cannot run no-such-program-here" in done.stderr


def test_a_dead_helper_is_one_line_and_the_next_command_restarts_it(session: HelperSession) -> None:
    with pytest.raises(TargetError, match="lost during a command") as err:
        session.run(["sh", "-c", "kill -KILL $PPID; sleep 5"], ENV, "/", 30)
    assert "\n" not in str(err.value)
    assert session.run(["echo", "again"], ENV, "/", 30).stdout == "again\n"
