"""The pure parts of reserved CPUs: CPU lists and masks, which CPUs are reserved, which workloads
fit on them, the preflight's line, and judging a trial by the reserved CPUs' ticks alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.conditions.sensors import parse_stat
from shootout.execution.placefacts import TargetFacts
from shootout.system.affinity import format_cpulist, format_mask, parse_cpulist, parse_mask
from shootout.system.cgroups import unique_name
from shootout.system.cpureserve import Moved, Reservation, Split, cpus_named, fits, split
from shootout.system.cpusets import RestCpuset, TrialPartition
from shootout.system.journal import Journal
from shootout.workloads.catalogue import workload
from shootout.workloads.contract import EVERY_CPU


@pytest.mark.parametrize("text, cpus", [("0", {0}), ("0-1", {0, 1}), ("0-3,5", {0, 1, 2, 3, 5}),
                                        ("1,3-4\n", {1, 3, 4}), ("", set())])
def test_cpu_lists_read_and_write_as_the_kernel_does(text: str, cpus: set[int]) -> None:
    assert parse_cpulist(text) == cpus
    assert format_cpulist(cpus) == text.strip()


@pytest.mark.parametrize("text, cpus", [("00000003", {0, 1}), ("1", {0}), ("ff,ffffffff", set(range(40))),
                                        ("00000000,00000002", {1})])
def test_irq_masks_read_and_write_in_32_bit_groups(text: str, cpus: set[int]) -> None:
    assert parse_mask(text) == cpus
    assert parse_mask(format_mask(cpus)) == cpus
    assert format_mask({0}) == "00000001" and format_mask({32}) == "00000001,00000000"


def test_all_cpus_but_the_lowest_are_reserved() -> None:
    assert split(frozenset({0})) is None  # one CPU: nothing left for everything else
    assert split(frozenset({0, 1})) == Split(frozenset({1}), frozenset({0}))
    assert split(frozenset({0, 1, 2, 3})) == Split(frozenset({1, 2, 3}), frozenset({0}))  # a Raspberry Pi 4
    assert split(frozenset({2, 5, 7})) == Split(frozenset({5, 7}), frozenset({2}))  # CPUs offline between


def test_a_workload_fits_when_its_threads_have_a_reserved_cpu_each() -> None:
    two, pi = split(frozenset({0, 1})), split(frozenset(range(4)))
    assert two is not None and pi is not None
    assert fits(1, two) and not fits(2, two)
    assert fits(3, pi) and not fits(4, pi) and not fits(EVERY_CPU, pi)


def test_workloads_say_how_many_cpus_their_trials_keep_busy() -> None:
    facts = TargetFacts(cores=4)
    ssl = workload("openssl-speed")
    assert ssl.cpus({**ssl.default_params(facts), "multi": False}) == 1
    assert ssl.cpus({**ssl.default_params(facts), "multi": True, "threads": 4}) == 4  # -multi 4
    seven = workload("7zip")
    assert seven.cpus(seven.default_params(facts)) == 4  # -mmt4 among its modes
    assert seven.cpus({**seven.default_params(facts), "modes": ["1t"]}) == 1
    assert workload("tcp-veth").cpus({"affinity": ""}) == 2  # iperf3's two ends
    assert workload("tcp-veth").cpus({"affinity": "0,1"}) == EVERY_CPU  # iperf3 -A chooses its own
    assert workload("ptrtree").cpus({}) == 1


def test_the_preflight_line_names_the_cpus_and_what_was_moved(tmp_path: Path) -> None:
    made = Reservation(Journal(tmp_path), Split(frozenset({1}), frozenset({0})), "/usr/bin/taskset")
    made.moved = Moved(tasks=143, kthreads=9, irqs=14, irqs_refused=1, stay={(i, i) for i in range(37)})
    assert made.describe() == ("CPU 1 reserved for the trials; moved 143 tasks, 9 kernel threads and 14 IRQs to "
                               "CPU 0 (sched_setaffinity, IRQ smp_affinity); 37 per-CPU kernel threads stay, "
                               "1 IRQ the kernel keeps")
    assert made.facts()["per_cpu_kernel_threads"] == 37 and made.facts()["reserved"] == "1"
    assert made.pin(1) == ["/usr/bin/taskset", "-c", "1"]
    assert made.pin(2) == ["/usr/bin/taskset", "-c", "0-1"]  # more than is reserved: every CPU
    assert cpus_named(frozenset({1, 2, 3})) == "CPUs 1-3"
    made.cpuset = RestCpuset(made.journal, Path("/cg/cpuset"), frozenset({0}), "CPU 0")
    pinned = made.pin(1)  # out of the rest's cpuset group (into the root's), then on the reserved CPU
    assert pinned[:2] == ["/bin/sh", "-c"] and pinned[-4:] == ["/cg/cpuset/cgroup.procs", "/usr/bin/taskset", "-c", "1"]
    assert "(cgroup v1 cpuset, sched_setaffinity, IRQ smp_affinity)" in made.describe()


def test_on_cgroup2_the_partition_waits_for_the_rounds_and_a_trial_needing_more_dissolves_it(
        tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    root.mkdir()
    journal = Journal(tmp_path / "journal")
    made = Reservation(journal, Split(frozenset({1}), frozenset({0})), "/usr/bin/taskset")
    made.cpuset = part = TrialPartition(journal, root, frozenset({1}), "CPU 1")
    assert part.make() and list(root.iterdir()) == []  # nothing before the rounds: preparing has every CPU
    part.sweep(set(), set(), rounds=False)
    assert list(root.iterdir()) == [] and made.pin(1) == ["/usr/bin/taskset", "-c", "1"]
    part.made = True  # as the first sweep of the rounds leaves it (tests/integration/test_cpuset_cgroup2.py)
    assert made.pin(1)[-4:] == [str(part.group / "cgroup.procs"), "/usr/bin/taskset", "-c", "1"]
    every = made.pin(2)  # dissolves the partition, enters the root group, then every CPU
    assert every[:2] == ["/bin/sh", "-c"] and every[4] == str(part.group / "cpuset.cpus.partition")
    assert every[-4:] == [str(root / "cgroup.procs"), "/usr/bin/taskset", "-c", "0-1"]
    assert "(cgroup2 cpuset partition, sched_setaffinity, IRQ smp_affinity)" in made.describe()


def test_on_cgroup2_a_run_whose_parts_made_cgroups_keeps_to_affinity(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    (root / unique_name("shootout")).mkdir(parents=True)  # a memory limit's group of this run
    journal = Journal(tmp_path / "journal")
    made = Reservation(journal, Split(frozenset({1}), frozenset({0})), "/usr/bin/taskset")
    made.cpuset = part = TrialPartition(journal, root, frozenset({1}), "CPU 1")
    part.sweep(set(), set(), rounds=True)
    assert not part.made and len(list(root.iterdir())) == 1 and journal.pending == []
    assert made.pin(1) == ["/usr/bin/taskset", "-c", "1"]
    assert made.no_partition() == ("no cpuset partition for the trials (this run's configuration parts put trials "
                                   "in cgroups of their own): affinity alone keeps their CPUs")
    facts = made.facts()  # the run's facts name what kept the CPUs apart: no group that was never made
    assert facts["method"] == "sched_setaffinity" and facts["cpuset"] is None
    assert facts["cpuset_partition_refused"] == "this run's configuration parts put trials in cgroups of their own"


STAT = """cpu  300 0 60 1000 0 0 0 0 0 0
cpu0 250 0 50 400 0 0 0 0 0 0
cpu1 50 0 10 600 0 0 0 0 0 0
procs_running 2
"""


def test_a_trial_on_reserved_cpus_is_judged_by_their_ticks_alone() -> None:
    every, _ = parse_stat(STAT)
    reserved, running = parse_stat(STAT, frozenset({1}))
    assert every is not None and every.user == 300
    assert reserved is not None and reserved.user == 50 and reserved.idle == 600 and running == 2
    assert parse_stat(STAT, frozenset({1, 2}))[0] is None  # a CPU without its line: not measured


def test_the_report_says_whether_trials_had_cpus_of_their_own() -> None:
    from shootout.conditions.runflags import reserved_line

    assert reserved_line({}) is None  # runs from before, and fake or remote runs
    assert reserved_line({"reserved_cpus": {"reserved": "1", "rest": "0", "unreserved_workloads": {"7zip": 2}}}) == (
        "trials on reserved CPU 1, everything else that may move on CPU 0; on every CPU: 7zip "
        "(more threads than reserved CPUs)")
    off = "CPUs not reserved (--no-isolate): the trials share every CPU with other programs"
    assert reserved_line({"reserved_cpus": {"reserved": None, "why": off}}) == off
    assert reserved_line({"reserved_cpus": {"reserved": None, "why": "CPUs not reserved: not root"}}) is None
    held = ("CPUs not reserved: shootout process 7 reserves them for its own trials; this run's share CPU 0 "
            "with everything else while it runs")
    assert reserved_line({"reserved_cpus": {"reserved": None, "why": held}}) == held


def test_an_irq_requested_while_the_cpus_were_reserved_gets_the_old_default_back(tmp_path: Path) -> None:
    """A driver that requests its IRQ again (a device reset) while the default mask is the rest
    CPU's would leave it there after the run: the undo gives it the default of before."""
    irqs = tmp_path / "irq"
    for n, mask in (("24", "3"), ("41", "1"), ("42", "3")):  # 41 was on CPU 0 alone before: it stays
        (irqs / n).mkdir(parents=True)
        (irqs / n / "smp_affinity").write_text(mask + "\n")
    (irqs / "default_smp_affinity").write_text("3\n")
    journal = Journal(tmp_path / "journal")
    made = Reservation(journal, Split(frozenset({1}), frozenset({0})), "/usr/bin/taskset", irqs=irqs)
    made.irqs_to_come()
    made._sweep_irqs()  # as start() and sweep() do, without moving this machine's tasks
    assert {n: (irqs / n / "smp_affinity").read_text().strip() for n in ("24", "41", "42")} == {
        "24": "00000001", "41": "1", "42": "00000001"}
    (irqs / "43").mkdir()
    (irqs / "43" / "smp_affinity").write_text((irqs / "default_smp_affinity").read_text())  # requested now
    assert journal.undo() == []
    assert {n: (irqs / n / "smp_affinity").read_text().strip() for n in ("24", "41", "42", "43")} == {
        "24": "3", "41": "1", "42": "3", "43": "3"}
    assert (irqs / "default_smp_affinity").read_text().strip() == "3"
