"""Pure parts of the ssh target: error lines, the helper's report, snapshots, path mapping, specs."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from shootout.base.errors import TargetError, UsageError
from shootout.places.ssh import address_of, ssh_config
from shootout.remote.channel import SshAddress, ssh_failure
from shootout.remote.helper import new_token, parse_snapshot, parse_usage, run_command
from shootout.remote.probe import read_stream, write_tree

CHANGED = """@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Offending ED25519 key in /home/u/.ssh/known_hosts:12
  remove with:
  ssh-keygen -f "/home/u/.ssh/known_hosts" -R "[127.0.0.1]:42022"
Host key for [127.0.0.1]:42022 has changed and you have requested strict checking.
Host key verification failed.
"""
UNKNOWN = ("No ED25519 host key is known for [127.0.0.1]:42022 and you have requested strict checking.\n"
           "Host key verification failed.\n")


@pytest.mark.parametrize(("stderr", "expected"), [
    (CHANGED, "the host key of h does not match known_hosts (/home/u/.ssh/known_hosts:12); refusing to connect"),
    (UNKNOWN, "the host key of h is not in known_hosts; refusing to connect"),
    ("root@127.0.0.1: Permission denied (publickey).\n", "h refused our keys (root@127.0.0.1: Permission denied (publickey).)"),
    ("ssh: connect to host 127.0.0.1 port 1: Connection refused\n",
     "cannot reach h: ssh: connect to host 127.0.0.1 port 1: Connection refused"),
    ("ssh: Could not resolve hostname nosuch.invalid: Name or service not known\n",
     "cannot reach h: ssh: Could not resolve hostname nosuch.invalid: Name or service not known"),
    ("", "ssh to h failed: no message"),
])
def test_ssh_failures_are_one_line(stderr: str, expected: str) -> None:
    err = ssh_failure(stderr, "h")
    assert isinstance(err, TargetError) and err.message == expected and "\n" not in str(err)


def test_host_keys_are_always_checked() -> None:
    opts = SshAddress("u@h", 2222, "/cfg", "/key", "/kh").options()
    assert "StrictHostKeyChecking=yes" in opts and "BatchMode=yes" in opts
    assert not any("StrictHostKeyChecking=no" in o or "accept-new" in o for o in opts)
    assert opts[:2] == ["-F", "/cfg"] and ["-p", "2222"] == opts[opts.index("-p"):opts.index("-p") + 2]
    assert "UserKnownHostsFile=/kh" in opts and "IdentitiesOnly=yes" in opts


def test_usage_line_is_parsed_and_stripped_from_stderr() -> None:
    token = new_token()
    stderr = (f"warning: something\npartial line without newline\n{token} status=-9 wall=1.500000000 user=0.25 "
              f"sys=0.125 maxrss=2048 nvcsw=3 nivcsw=4 minflt=500 majflt=2 delay=0.25 started=1700000000.5 timedout=1\n")
    usage, rest = parse_usage(stderr, token)
    assert rest == "warning: something\npartial line without newline"
    assert (usage.exit_status, usage.wall_s, usage.user_s, usage.sys_s) == (-9, 1.5, 0.25, 0.125)
    assert (usage.max_rss_kb, usage.ctx_switches, usage.timed_out) == (2048, 7, True)
    assert usage.rest() == {"minor_faults": 500, "major_faults": 2, "voluntary_switches": 3, "involuntary_switches": 4,
                            "run_delay_s": 0.25, "instructions": None, "cycles": None, "pmu_scope": None}


@pytest.mark.parametrize(("tail", "counted"), [
    (" instructions=123456789 cycles=98765 pmu=all", (123456789, 98765, "all")),
    (" instructions=123 cycles=-1 pmu=user", (123, None, "user")),  # an event the PMU lacks
    (" instructions=-1 cycles=-1 pmu=none", (None, None, None)),  # no PMU
    ("", (None, None, None))])  # a helper from before the counts
def test_the_pmu_counts_on_the_usage_line_are_read_where_counted(tail: str, counted: tuple) -> None:
    token = new_token()
    line = (f"\n{token} status=0 wall=1 user=1 sys=0 maxrss=1 nvcsw=0 nivcsw=0 minflt=0 majflt=0 delay=-1 "
            f"started=1 timedout=0{tail}\n")
    usage, _ = parse_usage(line, token)
    assert (usage.instructions, usage.cycles, usage.pmu_scope) == counted


def test_a_forged_or_missing_usage_line_is_an_error() -> None:
    token = new_token()
    forged = "\nshootout-usage-0000 status=0 wall=1 user=1 sys=0 maxrss=1 nvcsw=0 nivcsw=0 minflt=0 majflt=0 delay=-1 started=1 timedout=0\n"
    with pytest.raises(TargetError, match="did not report"):
        parse_usage(forged, token)
    with pytest.raises(TargetError, match="did not report"):
        parse_usage("connection lost\n", token)


def test_the_trial_command_is_quoted_and_clean() -> None:
    line = run_command("/c/helper", ["sh", "-c", "echo 'a b'; exit 3"], env={"PATH": "/bin", "X": "y z"},
                       cwd="/w d", timeout=12.5, token="T")
    assert line == ("exec env -i PATH=/bin 'X=y z' /c/helper run 12.500 T '/w d' -- sh -c 'echo '\"'\"'a b'\"'\"'; "
                    "exit 3'")


def test_snapshots_parse_and_mirror_into_a_tree(tmp_path: Path) -> None:
    data = b"F 5 /proc/loadavg\n1 2 3F 0 /sys/x/empty\nF 3 /a b/c\nx\ny"
    files = parse_snapshot(data)
    assert files == {"/proc/loadavg": b"1 2 3", "/sys/x/empty": b"", "/a b/c": b"x\ny"}
    write_tree(tmp_path, files)
    assert (tmp_path / "proc/loadavg").read_text() == "1 2 3" and (tmp_path / "a b/c").read_bytes() == b"x\ny"
    seen: list[dict[str, bytes]] = []
    read_stream(io.BytesIO(data + b"E 1.0\nF 2 /p\nokE 2.0\nF 1 /cut"), seen.append)
    assert seen == [files, {"/p": b"ok"}]  # a snapshot cut off by the end is not used


def test_ssh_specs() -> None:
    c = ssh_config("ssh:pi@raspberrypi.local:2222")
    assert (c.target, c.option("destination"), c.option("port")) == ("ssh", "pi@raspberrypi.local", "2222")
    assert address_of(c) == SshAddress("pi@raspberrypi.local", 2222)
    assert address_of(ssh_config("ssh:cloud-a")) == SshAddress("cloud-a")
    for bad in ("ssh:", "ssh:host:port"):
        with pytest.raises(UsageError):
            ssh_config(bad)


def test_the_mirror_takes_writers_from_several_threads_at_once(tmp_path) -> None:
    """The monitor's stream and a refresh for facts write the same files at once (a run that
    describes its machines in parallel met this): neither loses its temporary file to the other."""
    import threading

    errors: list[BaseException] = []
    files = {"/proc/loadavg": b"0.1 0.2 0.3 1/100 1\n", "/proc/stat": b"cpu  1 2 3 4 5 6 7 8\n"}

    def writer() -> None:
        try:
            for _ in range(300):
                write_tree(tmp_path, files)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and (tmp_path / "proc" / "loadavg").read_bytes() == files["/proc/loadavg"]
