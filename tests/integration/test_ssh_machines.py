"""Several local "machines" (an sshd each, its own port, keys and known_hosts; see sshd.py):
the parallel path and groups of machines really run over SSH, through the real command.

Needs root (each server's private mount namespace); fails, never skips, without it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sshd import LocalSshd, start_machines, toml_table


def quiet(line: str) -> None:
    """Messages of a request nobody reads here."""


SPIN = ('[[workload]]\nname = "spin"\ncommand = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done"\n'
        'metric = "wall"\nunit = "s"\n')


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LocalSshd]]:
    if os.geteuid() != 0:
        pytest.fail("the ssh machine tests need root (CI runs as root)")
    servers = start_machines(tmp_path_factory.mktemp("machines"), 4)
    yield servers
    for server in servers:
        server.stop()


def _file(tmp_path: Path, machines: list[LocalSshd], groups: str) -> Path:
    toml = tmp_path / "fleet.toml"
    toml.write_text(SPIN + "".join(toml_table(m, m.alias) for m in machines) + groups)
    return toml


def _trials(db: Path) -> list[tuple]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("select round, workload, config, started_at, wall_s from trials").fetchall()
    except sqlite3.OperationalError:
        return []


GROUPS = ('[[config]]\nname = "a"\nmachines = ["machine1", "machine2"]\n'
          '[[config]]\nname = "b"\nmachines = ["machine3", "machine4"]\n')


def _timed(events: list[tuple[str, str, str, float]], what: str, name: str, call):
    """call, its first call's start and end recorded (open() is called again by every command)."""
    def wrapped(*args, **kwargs):
        first = not any(e[:2] == (what, name) for e in events)
        if first:
            events.append((what, name, "start", time.monotonic()))
        result = call(*args, **kwargs)
        if first:
            events.append((what, name, "end", time.monotonic()))
        return result
    return wrapped


def _spanned(events: list[tuple[str, str, str, float]]):
    """A target factory whose targets record (what, config, "start"/"end", time) around open() and facts()."""
    from shootout.places import make_target

    def factory(config, journal):
        target = make_target(config, journal)
        for what in ("open", "facts"):
            setattr(target, what, _timed(events, what, config.name, getattr(target, what)))
        return target
    return factory


def _shm(server: LocalSshd) -> list[str]:
    """What shootout left in the machine's own /dev/shm (its work directories), seen over ssh."""
    import subprocess

    done = subprocess.run(["ssh", "-F", str(server.ssh_config), server.alias, "ls /dev/shm"], capture_output=True,
                          text=True, timeout=60, check=True)
    return [name for name in done.stdout.split() if name.startswith("shootout-")]


def _start(machines: list[LocalSshd], tmp_path: Path, events: list, journal, parallel: bool = True) -> int:
    from shootout.base.model import RunSettings
    from shootout.measure.runner import Runner, RunRequest
    from shootout.store import Store
    from shootout.workloads.user import CommandWorkload

    work = CommandWorkload({"name": "echo", "command": "echo 1", "metric": "wall", "unit": "s"})
    configs = [m.config(f"ssh:{m.alias}") for m in machines]
    settings = RunSettings(seed=1, min_rounds=1, max_rounds=1, repeats=0, budget_s=600, parallel=parallel, counters=False)
    store = Store(f"sqlite:///{tmp_path / 'open.db'}")
    return Runner(store, journal, target_factory=_spanned(events)).start(RunRequest(configs, [work], settings))


def test_four_machines_are_opened_and_described_at_once(machines, tmp_path) -> None:
    from shootout.system.journal import Journal

    events: list[tuple[str, str, str, float]] = []
    journal = Journal(tmp_path / "journal")
    _start(machines, tmp_path, events, journal)
    for what in ("open", "facts"):  # every machine started before any had finished: they overlapped
        mine = [e for e in events if e[0] == what]
        starts = [t for _, _, edge, t in mine if edge == "start"]
        ends = [t for _, _, edge, t in mine if edge == "end"]
        assert len(starts) == len(ends) == 4 and max(starts) < min(ends), (what, mine)
    assert journal.pending == []
    assert all(_shm(m) == [] for m in machines)


def test_a_machine_failing_to_open_beside_others_leaves_nothing_open(machines, tmp_path) -> None:
    """machine3's host key is unknown: it fails at once, while the others are still opening;
    they finish, and everything they opened is closed again before the one-line error."""
    from shootout.base.errors import TargetError
    from shootout.system.journal import Journal

    events: list[tuple[str, str, str, float]] = []
    journal = Journal(tmp_path / "journal")
    saved = machines[2].known_hosts.read_text()
    machines[2].known_hosts.write_text("")
    try:
        with pytest.raises(TargetError) as err:
            _start(machines, tmp_path, events, journal)
    finally:
        machines[2].known_hosts.write_text(saved)
    assert "the host key of machine3 is not in known_hosts" in err.value.message
    assert "\n" not in err.value.message
    opened = {c for what, c, edge, _ in events if what == "open" and edge == "end"}
    assert opened == {"ssh:machine1", "ssh:machine2", "ssh:machine4"}  # they did open, beside the failure
    assert journal.pending == []
    assert all(_shm(m) == [] for m in machines)


def test_machines_measured_side_by_side_repeat_the_trials_their_own_load_interrupted(machines, tmp_path) -> None:
    """Two machines in parallel; a program outside shootout spins a CPU for a while mid-run. Each
    machine's own /proc/stat (its monitor, over ssh) shows it, so trials on both are set aside
    and measured again (these local machines share one kernel: the spinner is on both)."""
    import subprocess

    from shootout.base.model import RunSettings
    from shootout.measure import events as ev
    from shootout.measure.runner import Runner, RunRequest
    from shootout.store import Store
    from shootout.system.journal import Journal
    from shootout.workloads.user import CommandWorkload

    spinner: list[subprocess.Popen] = []

    def on_event(event: ev.Event) -> None:  # after the first measured trial: 2 s of a busy CPU
        if isinstance(event, ev.TrialDone) and event.trial.spec.round == 1 and not spinner:
            spinner.append(subprocess.Popen([sys.executable, "-c", "import time\nt = time.time() + 2\n"
                                             "while time.time() < t: pass"]))

    work = CommandWorkload({"name": "nap", "command": "sleep 0.3", "metric": "wall", "unit": "s"})
    configs = [m.config(f"ssh:{m.alias}") for m in machines[:2]]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    settings = RunSettings(seed=1, min_rounds=6, max_rounds=6, repeats=3, budget_s=600, counters=False)
    run_id = Runner(store, Journal(tmp_path / "journal"), on_event).start(RunRequest(configs, [work], settings))
    spinner[0].wait()
    aside = store.get_run(run_id).set_aside
    assert {a["config"] for a in aside} == {"ssh:machine1", "ssh:machine2"}, aside
    assert all(a["others_cpus"] > 0.25 for a in aside)
    kept = store.trials(run_id)
    assert len(kept) == 12 and all(t.monitor["samples"] >= 1 for t in kept)  # the remote's sample right after, at least


def test_two_groups_of_two_machines_run_in_parallel_with_machines_as_units(shootout, machines, tmp_path) -> None:
    toml = _file(tmp_path, machines, GROUPS)
    done = shootout("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--seed", "5",
                    "--min-rounds", "6", "--repeats", "0", "--budget", "10m", "--db", shootout.db, timeout=900)
    assert done.returncode == 0, done.stderr
    rows = shootout.rows()
    (row,) = [r for r in rows if r["workload"] == "spin" and r["headline"]]  # its clock; the other beside it
    assert (row["baseline"], row["config"]) == ("a", "b")
    assert row["method"] == "welch on run means", row  # the four machines are the units
    assert "machines as units" in done.stdout and "drift between the runs" not in done.stdout
    trials = _trials(tmp_path / "results.db")
    assert Counter(t[2] for t in trials) == {f"{g}@machine{i}": 7 for g, i in
                                             (("a", 1), ("a", 2), ("b", 3), ("b", 4))}
    # the four machines measured at the same time: a round's trials overlap
    for r in range(7):
        spans = [(t[3], t[3] + t[4]) for t in trials if t[0] == r]
        assert max(s for s, _ in spans) < min(e for _, e in spans), spans
    for server in machines:  # everything was made on the machines' side, and removed
        assert list(server.remote_cache.iterdir()) == []


def test_one_machine_per_side_is_labelled_so(shootout, machines, tmp_path) -> None:
    toml = _file(tmp_path, machines, '[[config]]\nname = "a"\nmachines = ["machine1"]\n'
                                     '[[config]]\nname = "b"\nmachines = ["machine2"]\n')
    done = shootout("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--seed", "6",
                    "--min-rounds", "6", "--repeats", "0", "--budget", "10m", "--db", shootout.db, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "one machine per side: machine-to-machine variation not included" in done.stdout


def test_a_machine_whose_host_key_is_unknown_stops_the_run_in_one_line(shootout, machines, tmp_path) -> None:
    unknown = machines[2]
    saved = unknown.known_hosts.read_text()
    unknown.known_hosts.write_text("")
    try:
        toml = _file(tmp_path, machines, '[[config]]\nname = "a"\nmachines = ["machine1", "machine3"]\n'
                                         '[[config]]\nname = "b"\nmachines = ["machine2"]\n')
        done = shootout("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--db", shootout.db)
    finally:
        unknown.known_hosts.write_text(saved)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert any("the host key of machine3 is not in known_hosts; refusing to connect" in line for line in lines), lines
    assert len([line for line in lines if line.startswith("error")]) == 1, lines
    assert shootout("runs", "--db", shootout.db).stdout.count("\n") <= 1  # no run kept
    for server in machines:
        assert list(server.remote_cache.iterdir()) == []


def test_a_run_of_machines_killed_mid_way_resumes_measuring_nothing_twice(shootout, machines, tmp_path) -> None:
    toml = _file(tmp_path, machines, GROUPS)
    child = shootout.popen("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--seed", "8",
                           "--min-rounds", "8", "--repeats", "0", "--budget", "10m", "--db", shootout.db)
    db = tmp_path / "results.db"
    deadline = time.time() + 300
    while time.time() < deadline and len(_trials(db)) < 14:
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    before = _trials(db)
    assert 14 <= len(before) < 36, "the kill should land mid-run"
    done = shootout("run", "--resume", "last", "--db", shootout.db, timeout=900)
    assert done.returncode == 0, done.stderr
    after = _trials(db)
    slots = Counter(t[:3] for t in after)
    assert max(slots.values()) == 1 and len(slots) == 9 * 4  # every slot once: nothing measured twice
    assert {t[:3] for t in before} <= set(slots)
    rows = json.loads(shootout("show", "last", "--json", "--db", shootout.db).stdout)
    assert rows[0]["method"] == "welch on run means"


def test_cloud_openssl_over_two_groups_of_machines(shootout, machines, tmp_path) -> None:
    """The experiment as one command, its matrix cut to one algorithm at one size (the
    command line has no parameter option; the experiment itself runs the write-up's)."""
    from shootout.measure.runner import Runner
    from shootout.request.preparation import prepare
    from shootout.request.request import Wish, build_request
    from shootout.store import Store
    from shootout.system.journal import Journal

    toml = tmp_path / "machines.toml"
    toml.write_text("".join(toml_table(m, m.alias) for m in machines) + GROUPS)
    small = {"algorithms": ["sha256"], "sizes": [16384], "multi": True, "threads": 0, "seconds": 1}
    request = prepare(build_request(Wish(configs=["a", "b"], experiment="cloud-openssl", file=toml,
                                         prices=["a=0.408", "b=0.768"], params={"openssl-speed": small}), quiet), quiet)
    request.settings = dataclasses.replace(request.settings, experiment="cloud-openssl", seed=3, min_rounds=6, repeats=0, budget_s=900)
    store = Store(shootout.db)
    run_id = Runner(store, Journal(tmp_path / "journal")).start(request)
    run = store.get_run(run_id)
    assert run.status == "complete"
    for config in run.configs:  # -multi with the machine's own CPUs, measured there
        facts = run.facts.side(config.name)
        assert facts["workloads"]["openssl-speed"]["cores"] == facts["target"]["machine"]["cores"]
    assert all("sha256_16384_mt" in t.values for t in store.trials(run_id))
    done = shootout("show", str(run_id), "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "the write-up at 16384 bytes, sha256: a1.4xlarge 18,250,851" in out
    # both forms, as the experiment runs them: -evp, and the names without it as the write-up ran them
    assert "a (2 machines), sha256 -evp: 16384: " in out and "a (2 machines), sha256 without -evp: 16384: " in out
    assert "performance per price against a (2 machines) (0.408 $/h)" in out
    assert "b (2 machines) (0.768 $/h, 1.88x the price): geomean of the algorithms at 16384 bytes " in out


class _Proxy:
    """A TCP relay to the PostgreSQL server: stop() makes the server go away for its clients."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                continue
            upstream = socket.create_connection(self.target)
            self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(self) -> None:
        self.running = False
        self.listener.close()
        for s in self.conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass


def test_a_postgresql_server_gone_mid_run_is_one_line_and_committed_trials_stay(shootout, machines, tmp_path,
                                                                                 pg_url) -> None:
    from sqlalchemy.engine import make_url

    url = make_url(pg_url)
    proxy = _Proxy(url.host or "localhost", url.port or 5432)
    relayed = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    toml = _file(tmp_path, machines, '[[config]]\nname = "a"\nmachines = ["machine1"]\n'
                                     '[[config]]\nname = "b"\nmachines = ["machine2"]\n')
    child = shootout.popen("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--seed", "2",
                           "--min-rounds", "12", "--max-rounds", "12", "--repeats", "0", "--db", relayed)

    def stored() -> list[tuple]:
        from sqlalchemy import create_engine, text

        engine = create_engine(pg_url)
        try:
            with engine.connect() as conn:
                if not conn.dialect.has_table(conn, "trials"):
                    return []
                return [tuple(r) for r in conn.execute(text("SELECT round, workload, config FROM trials")).all()]
        finally:
            engine.dispose()

    deadline = time.time() + 300
    while time.time() < deadline and len(stored()) < 8:
        time.sleep(0.1)
    proxy.stop()
    _, err = child.communicate(timeout=300)
    assert child.returncode not in (0, None)
    errors = [line for line in err.splitlines() if line.startswith(("error", "Traceback", "  File"))]
    assert len(errors) == 1 and errors[0].startswith("error: cannot") and "check that the database is reachable" \
        in err, err
    kept = stored()
    assert len(kept) >= 8  # every trial committed before the server went away is there
    again = _Proxy(url.host or "localhost", url.port or 5432)
    try:
        done = shootout("run", "--resume", "last", "--db",
                        url.set(host="127.0.0.1", port=again.port).render_as_string(hide_password=False), timeout=900)
    finally:
        again.stop()
    assert done.returncode == 0, done.stderr
    slots = Counter(stored())
    assert max(slots.values()) == 1 and len(slots) == 13 * 2 and set(kept) <= set(slots)


def test_an_unreachable_machine_of_a_group_stops_the_run_in_one_line(shootout, machines, tmp_path) -> None:
    from shootout.vm.qemu import free_port

    nowhere = tmp_path / "nowhere_config"  # a machine nothing listens for
    nowhere.write_text(f"Host machine9\n  HostName 127.0.0.1\n  Port {free_port()}\n  User root\n"
                       f"  UserKnownHostsFile {machines[0].known_hosts}\n")
    toml = _file(tmp_path, machines, f'[[config]]\nname = "machine9"\nspec = "ssh:machine9"\n'
                                     f'options = {{ ssh_config = "{nowhere}" }}\n'
                                     '[[config]]\nname = "a"\nmachines = ["machine1", "machine9"]\n'
                                     '[[config]]\nname = "b"\nmachines = ["machine2"]\n')
    done = shootout("run", "--file", str(toml), "-c", "a", "-c", "b", "-w", "spin", "--db", shootout.db)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith(("error", "Traceback"))]
    assert len(errors) == 1 and "machine9" in errors[0], done.stderr
    assert shootout("runs", "--db", shootout.db).stdout.count("\n") <= 1  # no run kept
    for server in machines:
        assert list(server.remote_cache.iterdir()) == []
