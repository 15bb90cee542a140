"""Reserved CPUs on this machine (root, two CPUs or more; without either these tests fail):
the trials run on them, a sleeping bystander started before moves to the rest and back,
IRQ affinities are put back, and a SIGKILLed run's changes are undone by `shootout doctor`."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kill_sweep import cpu_state, cpus_changed, journals
from shootout.base.model import Config, RunSettings
from shootout.measure.runner import Runner, RunRequest
from shootout.store import Store
from shootout.system.affinity import allowed, format_cpulist, online_cpus
from shootout.system.cgroups import layout
from shootout.system.cpureserve import Reservation, cpus_named, reserve, split
from shootout.system.journal import Journal
from shootout.workloads.user import CommandWorkload


@pytest.fixture(autouse=True)
def reservable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert os.geteuid() == 0, "reserving CPUs needs root: run these tests as root"
    assert len(online_cpus()) >= 2, "reserving CPUs needs two online CPUs or more"
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))


def cpuset_v1() -> Path | None:
    """The cgroup v1 cpuset hierarchy here (this CI machine has one), where the rest gets a group."""
    found = layout().holding("cpuset")
    return found.mount if found is not None and found.version == 1 else None


def rest_groups(pid: int | str = "*") -> list[Path]:
    root = cpuset_v1()
    return sorted(root.glob(f"shootout-rest-{pid}-*")) if root is not None else []


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A sleeping program started before the run, outside shootout's tree."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


def where(script: str, out: Path, bystander: int) -> list[str]:
    """A trial that writes its own allowed CPUs and the bystander's into out."""
    return ["sh", "-c", f"{script}; echo $(grep Cpus_allowed_list /proc/self/status | cut -f2) "
                        f"$(grep Cpus_allowed_list /proc/{bystander}/status | cut -f2) >> {out}"]


class TwoCpus(CommandWorkload):
    def cpus(self, params: dict[str, Any]) -> int:
        return 2  # as openssl speed -multi 2 would say


def test_trials_run_on_the_reserved_cpu_the_rest_elsewhere_and_all_is_put_back(
        tmp_path: Path, bystander: subprocess.Popen[bytes]) -> None:
    before = cpu_state()
    online = online_cpus()
    one, two = tmp_path / "one", tmp_path / "two"
    work = [CommandWorkload({"name": "one", "command": where("true", one, bystander.pid)}),
            TwoCpus({"name": "two", "command": where("true", two, bystander.pid)})]
    journal = Journal(tmp_path / "journal")
    made = reserve(journal, isolate=True, here=True)
    assert isinstance(made, Reservation), made
    notices: list[str] = []
    try:
        assert allowed(bystander.pid) == made.split.rest
        assert made.moved.tasks > 0 and made.moved.irqs > 0, made.describe()
        if cpuset_v1() is not None:  # the bystander in the rest's group, which it cannot leave by itself
            assert made.cpuset is not None and str(bystander.pid) in (made.cpuset.group / "tasks").read_text().split()
        store = Store(f"sqlite:///{tmp_path / 'r.db'}")
        run_id = Runner(store, journal, lambda e: notices.append(getattr(e, "text", "")),
                        reservation=made).start(
            RunRequest([Config(name=n, target="host") for n in ("A", "B")], work,
                       RunSettings(seed=1, min_rounds=6, max_rounds=6, counters=False, repeats=0)))
    finally:
        errors = journal.undo()
    assert errors == []
    assert rest_groups(os.getpid()) == []
    reserved, rest = format_cpulist(made.split.reserved), format_cpulist(made.split.rest)
    assert set(one.read_text().splitlines()) == {f"{reserved} {rest}"}  # the trial alone on its CPU
    assert set(two.read_text().splitlines()) == {f"{format_cpulist(online)} {rest}"}  # needs 2: every CPU
    assert any(n.startswith("two needs 2 CPUs") for n in notices), notices
    assert allowed(bystander.pid) == online
    assert cpus_changed(before) == {}
    facts = store.get_run(run_id).facts.machine["reserved_cpus"]
    assert facts["reserved"] == reserved and facts["unreserved_workloads"] == {"two": 2}


def _toml(tmp_path: Path, out: Path, bystander: int, pause: float) -> Path:
    toml = tmp_path / "shootout.toml"
    script = where(f"sleep {pause}", out, bystander)[2].replace('"', '\\"')
    toml.write_text(f'[[workload]]\nname = "where"\ncommand = "{script}"\n')
    return toml


def test_run_says_what_it_reserved_and_no_isolate_changes_nothing(shootout, tmp_path: Path,
                                                                 bystander: subprocess.Popen[bytes]) -> None:
    out = tmp_path / "seen"
    args = ("run", "-c", "host", "--file", str(_toml(tmp_path, out, bystander.pid, 0)), "-w", "where",
            "--min-rounds", "6", "--max-rounds", "6", "--no-counters", "--load-wait", "1s", "--db", shootout.db)
    before = cpu_state()
    done = shootout(*args)
    assert done.returncode == 0, done.stderr
    said = " ".join((done.stdout + done.stderr).split())  # as wrapped at any width
    chosen = split(online_cpus())
    assert chosen is not None
    assert f"{cpus_named(chosen.reserved)} reserved for the trials; moved " in said, said
    how = "cgroup v1 cpuset, sched_setaffinity" if cpuset_v1() else "sched_setaffinity"
    assert f" IRQs to {cpus_named(chosen.rest)} ({how}, IRQ smp_affinity)" in said, said
    rest = format_cpulist(chosen.rest)
    # the trial on the reserved CPU(s), the bystander moved while it ran
    assert set(out.read_text().splitlines()) == {f"{format_cpulist(chosen.reserved)} {rest}"}
    assert cpus_changed(before) == {}
    out.unlink()
    done = shootout(*args, "--no-isolate")
    assert done.returncode == 0, done.stderr
    assert "CPUs not reserved (--no-isolate)" in done.stdout + done.stderr
    everything = format_cpulist(online_cpus())
    assert set(out.read_text().splitlines()) == {f"{everything} {everything}"}  # nothing moved


def _run_in_background(shootout, tmp_path: Path, out: Path, bystander: int) -> subprocess.Popen[str]:
    """A run of the `where` workload, left going (the caller stops it)."""
    return shootout.popen("run", "-c", "host", "--file", str(_toml(tmp_path, out, bystander, 0.3)),
                          "-w", "where", "--min-rounds", "6", "--max-rounds", "20", "--no-counters",
                          "--load-wait", "1s", "--db", shootout.db)


def _wait_for_trials(child: subprocess.Popen[str], out: Path, trials: int = 3) -> None:
    """Until `trials` trials wrote what they saw (the run has reserved its CPUs by then)."""
    deadline = time.monotonic() + 300
    while not (out.exists() and len(out.read_text().splitlines()) >= trials):
        assert child.poll() is None, child.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "no trial ran"
        time.sleep(0.05)


def test_sigkilled_run_leaves_its_cpus_reserved_until_doctor_puts_everything_back(
        shootout, tmp_path: Path, bystander: subprocess.Popen[bytes]) -> None:
    out = tmp_path / "seen"
    before = cpu_state()
    child = _run_in_background(shootout, tmp_path, out, bystander.pid)
    try:
        _wait_for_trials(child, out)
    finally:
        child.kill()
        child.communicate(timeout=60)
    rest = allowed(bystander.pid)
    assert rest is not None and rest != online_cpus(), "the kill should leave the bystander moved"
    assert len(rest_groups(child.pid)) == (1 if cpuset_v1() else 0)
    assert cpus_changed(before), "the kill should leave tasks and IRQs moved"
    assert journals(shootout)
    done = shootout("doctor")
    assert done.returncode == 0, done.stderr
    assert allowed(bystander.pid) == online_cpus()
    assert cpus_changed(before) == {}
    assert journals(shootout) == []
    assert rest_groups() == []


def test_one_run_at_a_time_reserves_and_the_next_undoes_a_killed_ones_first(
        shootout, tmp_path: Path, bystander: subprocess.Popen[bytes]) -> None:
    out = tmp_path / "seen"
    before = cpu_state()
    mine = Journal(tmp_path / "elsewhere")  # another SHOOTOUT_HOME's: the killed run's is not recovered by us
    child = _run_in_background(shootout, tmp_path, out, bystander.pid)
    try:
        _wait_for_trials(child, out)
        second = reserve(mine, isolate=True, here=True)
        assert second == (f"CPUs not reserved: shootout process {child.pid} reserves them for its own trials; "
                          f"this run's share {cpus_named(split(online_cpus()).rest)} with everything else "
                          "while it runs"), second
        assert journals(shootout) and mine.pending == []
    finally:
        child.kill()
        child.communicate(timeout=60)
    made = reserve(mine, isolate=True, here=True)
    try:
        assert isinstance(made, Reservation), made
        assert journals(shootout) == [] and rest_groups(child.pid) == []  # the killed run's, undone first
        assert made.recovered and "first undid " in made.describe(), made.describe()
        # undoing the killed holder's journal let go of its lock, not of the one just taken
        third = reserve(Journal(tmp_path / "third"), isolate=True, here=True)
        assert isinstance(third, str) and f"shootout process {os.getpid()} reserves them" in third, third
        assert allowed(bystander.pid) == made.split.rest
    finally:
        assert mine.undo() == []
    assert allowed(bystander.pid) == online_cpus()
    assert cpus_changed(before) == {}
    assert rest_groups() == []


def test_ctrl_c_puts_everything_back_before_the_run_exits(shootout, tmp_path: Path,
                                                         bystander: subprocess.Popen[bytes]) -> None:
    out = tmp_path / "seen"
    before = cpu_state()
    child = _run_in_background(shootout, tmp_path, out, bystander.pid)
    try:
        _wait_for_trials(child, out)
        assert allowed(bystander.pid) != online_cpus()
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, stderr[-2000:]
    assert allowed(bystander.pid) == online_cpus()
    assert cpus_changed(before) == {}
    assert journals(shootout) == []
    assert rest_groups() == []
