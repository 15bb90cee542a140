"""The ssh target against a real local sshd (see sshd.py): host keys, trials, rusage, cleanup.

Needs root (a private mount namespace for the server); fails, never skips, without it or
without openssh-server.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from shootout.base.errors import TargetError
from shootout.base.model import Config, RunSettings
from shootout.measure.runner import Runner, RunRequest
from shootout.places.ssh import SshTarget
from shootout.remote.probe import RemoteMonitor
from shootout.store import Store
from shootout.system.journal import Journal, journal, leftovers, recover
from shootout.workloads.catalogue import suite, workload

sys.path.insert(0, str(Path(__file__).parent))
from sshd import LocalSshd, start_sshd

SRC = Path(__file__).resolve().parents[2] / "src"
# Small work per trial: this checks the channel, not the machine.
NATIVE_PARAMS = {"ptrtree": {"nodes": 200_000, "lookups": 100_000}, "sha1-sparse": {"size": 200_000_000},
                 "membw": {"reps": 2}}


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSshd]:
    if os.geteuid() != 0:
        pytest.fail("the ssh target tests need root (CI runs as root)")
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.fixture
def target(sshd: LocalSshd, tmp_path: Path) -> Iterator[SshTarget]:
    j = Journal(tmp_path)
    t = SshTarget(sshd.config(), j)
    t.open()
    yield t
    t.close()
    assert j.pending == []


def _remote_pids(target: SshTarget, marker: str) -> list[str]:
    # "[s]leep" matches the sleeps but not this pgrep's own command line (nor its helper's)
    done = target.run(["pgrep", "-f", f"[{marker[0]}]{marker[1:]}"])
    return done.stdout.split()


def test_native_suite_runs_through_ssh_with_remote_rusage(sshd: LocalSshd, tmp_path: Path) -> None:
    names = suite("native")
    settings = RunSettings(seed=3, min_rounds=2, max_rounds=2, budget_s=900)
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    remote = sshd.config()
    request = RunRequest([remote], [workload(n) for n in names], settings,
                         params={n: p for n, p in NATIVE_PARAMS.items() if n in names})
    run_id = Runner(store, Journal(tmp_path)).start(request)
    run = store.get_run(run_id)
    trials = store.trials(run_id)
    assert run.status == "complete", [t.error for t in trials if not t.ok]
    by_config = {remote.name: trials}
    assert {t.spec.workload for t in by_config[remote.name]} == set(names)
    for trial in by_config[remote.name]:
        assert trial.ok, trial.error
        assert trial.user_s + trial.sys_s > 0.05 and trial.max_rss_kb > 0, trial
    ptrtree = [t for t in by_config[remote.name] if t.spec.workload == "ptrtree"]
    assert all(t.max_rss_kb > 200_000 * 16 / 1024 for t in ptrtree)  # the tree's nodes, on the remote
    facts = run.facts.target(remote.name)
    assert facts["channel"] == "ssh" and facts["machine"]["cores"] and facts["boot"]["boot_id"]
    assert facts["libc"].startswith("glibc")
    assert facts["preflight"]["conditions"]["load1"] is not None  # the remote's own preflight
    samples = run.facts.side(remote.name)["monitor_samples"]  # and its monitor, all run long
    assert len(samples) >= 3 and all(s["load1"] is not None for s in samples)
    # The binaries were built and kept on the server's side only (a tmpfs the host cannot see).
    assert list(sshd.remote_cache.iterdir()) == []
    # the remote helper reports each trial's faults and wait for a CPU; the counters pass ran there
    assert all(t.observed["rusage"]["minor_faults"] > 0 and "sched" in t.observed for t in trials)
    assert run.counters["intmix"][remote.name]["source"] == "cachegrind"
    assert run.counters["intmix"][remote.name]["counts"]["instructions"] > 0


def test_rusage_is_the_remote_programs_not_the_ssh_clients(target: SshTarget) -> None:
    loop = ["sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = target.run(loop)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert done.exit_status == 0 and done.user_s > 0.1
    assert done.user_s + done.sys_s > 5 * client_cpu, (done, client_cpu)
    assert done.wall_s >= done.user_s * 0.5  # measured around the program, on the remote


def test_stdin_files_probe_and_wrap(target: SshTarget, tmp_path: Path) -> None:
    assert target.run(["cat"], stdin=b"through stdin\n").stdout == "through stdin\n"
    path = f"{target.workdir()}/sub/file.bin"
    data = os.urandom(100_000)
    assert target.put(data, path) == path
    assert target.exists(path) and not target.exists(path + ".nope")
    assert target.read(path) == data and target.read(path, 10) == data[:10]
    assert not Path(path).exists()  # on the server's private tmpfs, not here
    tree = tmp_path / "tree"
    (tree / "d").mkdir(parents=True)
    (tree / "d/f").write_text("in a tree")
    copied = target.put_tree(tree, f"{target.cache_dir()}/tree")
    assert target.read(f"{copied}/d/f") == b"in a tree"
    target.remove(copied)
    assert not target.exists(copied)
    assert target.which("sha1sum") == "/usr/bin/sha1sum" and target.which("no-such-tool-here") is None
    failed = target.run(["sh", "-c", "echo out; echo oops >&2; exit 7"])
    assert (failed.exit_status, failed.stdout, failed.stderr) == (7, "out\n", "oops\n")
    # wrap runs on the target's machine, in front of the command
    assert target.run(["sh", "-c", 'echo "$W"'], wrap=["env", "W=wrapped"]).stdout == "wrapped\n"
    sizing = target.probe()
    assert sizing.cores == os.cpu_count() and sizing.memory_bytes and sizing.memory_bytes > 1 << 28
    assert sizing.address_bits == (64 if sys.maxsize > 2**32 else 32)  # the remote userspace's getconf
    disk = target.scratch("disk")
    assert disk.startswith("/var/tmp/shootout-") and target.exists(disk)
    assert target.scratch_facts() == {"path": disk, "filesystem": target.scratch_facts()["filesystem"],  # type: ignore[index]
                                      "on": target.where}
    assert target.scratch("tmpfs").startswith(target.workdir())


def test_timeout_kills_the_remote_process_group(target: SshTarget) -> None:
    marker = f"sleep 3{os.getpid() % 1000}.5"
    t0 = time.monotonic()
    done = target.run(["sh", "-c", f"{marker} & {marker}"], timeout=1.0)
    assert done.timed_out and done.exit_status == -signal.SIGKILL
    assert time.monotonic() - t0 < 10
    assert _remote_pids(target, marker) == []


def test_a_lost_channel_kills_the_remote_command(target: SshTarget) -> None:
    import threading

    marker = f"sleep 4{os.getpid() % 1000}.5"
    failed: list[BaseException] = []

    def trial() -> None:
        try:
            target.run(["sh", "-c", f"{marker} & {marker}"], timeout=600)
        except TargetError as exc:
            failed.append(exc)

    worker = threading.Thread(target=trial)
    worker.start()
    probe = SshTarget(target.config, Journal())  # a second connection looks at the remote meanwhile
    probe.open()
    try:
        deadline = time.monotonic() + 10
        while not _remote_pids(probe, marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _remote_pids(probe, marker), "the remote command did not start"
        assert target.session is not None and target.session._proc is not None
        target.session._proc.kill()  # like a shootout killed mid-trial: the channel closes, sshd sends no signal
        worker.join(timeout=30)
        assert failed and "lost during a command" in str(failed[0])
        deadline = time.monotonic() + 10
        while _remote_pids(probe, marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _remote_pids(probe, marker) == []
    finally:
        probe.close()
    assert target.run(["echo", "after"]).stdout == "after\n"  # the next command opens a new session


def test_a_background_command_is_stopped_with_its_group(target: SshTarget) -> None:
    marker = f"sleep 5{os.getpid() % 1000}.5"
    server = target.spawn(["sh", "-c", f"echo serving; {marker} & {marker}"])
    try:
        deadline = time.monotonic() + 10
        while len(_remote_pids(target, marker)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_remote_pids(target, marker)) >= 3  # the shell and its two sleeps
    finally:
        done = server.stop()
    assert done.exit_status == -signal.SIGTERM and done.stdout == "serving\n" and not done.timed_out
    assert done.wall_s > 0 and _remote_pids(target, marker) == []


def test_remote_monitor_samples_the_remote(target: SshTarget) -> None:
    assert target.mirror is not None
    monitor = RemoteMonitor(target.mirror, interval_s=0.5)
    with monitor:
        time.sleep(2.5)
    samples = monitor.samples()
    assert len(samples) >= 3
    assert all(s["load1"] is not None for s in samples)
    assert any(s["steal_pct"] is not None for s in samples)
    window = monitor.window(samples[0]["t"], samples[-1]["t"])
    assert window["samples"] >= 3 and window["cpus"] == os.cpu_count()


def test_the_remote_preflight_reads_the_remote(target: SshTarget) -> None:
    pf = target.preflight(load_wait_s=0)
    cond = pf.facts["conditions"]
    assert cond["load1"] is not None and cond["busy_pct"] is not None and cond["steal_pct"] is not None
    assert pf.facts["kernel"] and pf.facts["cores"] == os.cpu_count()
    assert "measured_mhz" not in cond  # the host's clock loop does not describe a remote


@pytest.mark.parametrize("case", ["changed", "unknown"])
def test_a_wrong_or_unknown_host_key_is_refused(sshd: LocalSshd, tmp_path: Path, case: str) -> None:
    known = tmp_path / "known_hosts"
    if case == "changed":
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
        key = (tmp_path / "other.pub").read_text().split()
        known.write_text(f"[127.0.0.1]:{sshd.port} {key[0]} {key[1]}\n")
    else:
        known.write_text("")
    config_file = tmp_path / "ssh_config"
    config_file.write_text(sshd.ssh_config.read_text().replace(str(sshd.known_hosts), str(known)))
    j = Journal(tmp_path)
    target = SshTarget(sshd.config(ssh_config=str(config_file)), j)
    with pytest.raises(TargetError) as err:
        target.open()
    message = str(err.value)
    assert "\n" not in message
    assert ("does not match known_hosts" if case == "changed" else "is not in known_hosts") in message
    assert j.pending == [] and known.read_text().count("\n") <= 1  # nothing added to known_hosts


def test_an_unreachable_host_is_one_line(sshd: LocalSshd, tmp_path: Path) -> None:
    with socket_port() as port:
        config = Config(name="ssh:x", target="ssh", options=(("destination", "root@127.0.0.1"), ("port", str(port)),
                                                               ("known_hosts", str(sshd.known_hosts))))
        j = Journal(tmp_path)
        with pytest.raises(TargetError, match=r"cannot reach root@127.0.0.1: .*Connection refused") as err:
            SshTarget(config, j).open()
    assert "\n" not in str(err.value) and j.pending == []


class socket_port:
    """A port nothing listens on (bound, not listening, while the test runs)."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def test_sigkill_leaves_nothing_after_doctor(sshd: LocalSshd, tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from sshd import LocalSshd
        from shootout.base.model import Config
        from shootout.system.journal import Journal
        from shootout.places.ssh import SshTarget
        config = Config(name="s", target="ssh", options={sshd.config().options!r})
        t = SshTarget(config, Journal())
        t.open()
        print(t.workdir(), t.scratch("disk"), t.mirror.root, t.channel.control_path, flush=True)
        time.sleep(600)
    """)
    env = {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": str(SRC)}
    child = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    remote_dir, remote_scratch, mirror, control = child.stdout.readline().split()
    masters = [p for p in psutil.Process(child.pid).children() if p.name() == "ssh"]
    child.send_signal(signal.SIGKILL)
    child.wait()
    os.environ["SHOOTOUT_HOME"], saved = str(home), os.environ.get("SHOOTOUT_HOME")
    try:
        assert leftovers()
        undone, errors = recover()
    finally:
        os.environ.pop("SHOOTOUT_HOME") if saved is None else os.environ.__setitem__("SHOOTOUT_HOME", saved)
    assert errors == [] and undone
    assert not Path(mirror).exists() and not Path(control).parent.exists()
    assert all(not p.is_running() or p.status() == psutil.STATUS_ZOMBIE for p in masters)
    with journal() as j:
        check = SshTarget(sshd.config(), j)
        check.open()
        assert not check.exists(remote_dir) and not check.exists(remote_scratch)
        check.close()
