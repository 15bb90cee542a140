"""Governor and boost: reporting, --tune through the journal, restore (also after SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shootout.base.errors import ShootoutError
from shootout.conditions import governor
from shootout.system.journal import Journal, leftovers, recover

SRC = Path(__file__).resolve().parents[2] / "src"


def fake_cpufreq(root: Path, governors: dict[int, str] | None = None) -> Path:
    """cpu0+cpu1 share policy0 (symlinks, as on real hardware), cpu2 has policy2, cpu3 none."""
    base = root / "sys/devices/system/cpu"
    govs = governors or {0: "schedutil", 2: "schedutil"}
    for policy, gov in govs.items():
        d = base / "cpufreq" / f"policy{policy}"
        d.mkdir(parents=True)
        (d / "scaling_governor").write_text(gov + "\n")
        offered = "conservative ondemand userspace powersave performance schedutil"
        (d / "scaling_available_governors").write_text(offered + "\n")
    for cpu, policy in ((0, 0), (1, 0), (2, 2)):
        (base / f"cpu{cpu}").mkdir(parents=True)
        (base / f"cpu{cpu}" / "cpufreq").symlink_to(f"../cpufreq/policy{policy}")
    (base / "cpu3").mkdir()
    return base


def gov(base: Path, policy: int) -> str:
    return (base / "cpufreq" / f"policy{policy}" / "scaling_governor").read_text().strip()


class CheckingJournal(Journal):
    """Asserts that each sysfs file still holds its old content when the entry is recorded."""

    def record(self, description, undo):  # type: ignore[no-untyped-def]
        for step in undo if isinstance(undo, list) else [undo]:
            assert Path(step["write"]).read_text().strip() == step["content"], "written before journalled"
        return super().record(description, undo)


def test_report_governors(tmp_path: Path) -> None:
    fake_cpufreq(tmp_path, {0: "schedutil", 2: "powersave"})
    assert set(governor.governor_files(tmp_path)) == {"cpu0", "cpu2"}  # cpu1 shares cpu0's policy
    assert governor.governors(tmp_path) == {"cpu0": "schedutil", "cpu2": "powersave"}
    assert governor.governor_summary(tmp_path) == "powersave (cpu2), schedutil (cpu0)"
    assert governor.governor_summary(tmp_path / "nothing") is None


def test_tune_sets_performance_and_undo_restores(tmp_path: Path) -> None:
    base = fake_cpufreq(tmp_path / "root")
    j = CheckingJournal(tmp_path / "journal")
    lines = governor.tune(j, root=tmp_path / "root")
    assert lines == ["cpu0: governor schedutil -> performance", "cpu2: governor schedutil -> performance"]
    assert gov(base, 0) == gov(base, 2) == "performance"
    records = [json.loads(line) for line in j.path.read_text().splitlines()]
    assert [r["undo"][0]["content"] for r in records] == ["schedutil", "schedutil"]
    assert j.undo() == []
    assert gov(base, 0) == gov(base, 2) == "schedutil"


def test_tune_leaves_right_or_impossible_settings_alone(tmp_path: Path) -> None:
    base = fake_cpufreq(tmp_path / "root", {0: "performance", 2: "ondemand"})
    (base / "cpufreq/policy2/scaling_available_governors").write_text("ondemand powersave\n")
    (tmp_path / "journal").mkdir()
    j = Journal(tmp_path / "journal")
    lines = governor.tune(j, root=tmp_path / "root")
    assert lines == ["cpu0: governor already performance",
                     "cpu2: governor ondemand; performance not offered (ondemand powersave)"]
    assert j.pending == [] and not j.path.exists()
    assert gov(base, 2) == "ondemand"


def test_no_cpufreq_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "root/sys/devices/system/cpu/cpu0").mkdir(parents=True)
    (tmp_path / "journal").mkdir()
    j = Journal(tmp_path / "journal")
    assert governor.tune(j, disable_boost=True, root=tmp_path / "root") == [governor.NO_CPUFREQ]
    assert j.pending == [] and not j.path.exists()


@pytest.mark.parametrize(
    ("path", "before", "after_tune", "enabled"),
    [("intel_pstate/no_turbo", "0", "1", True), ("cpufreq/boost", "1", "0", True), ("cpufreq/boost", "0", "0", False)],
)
def test_boost(tmp_path: Path, path: str, before: str, after_tune: str, enabled: bool) -> None:
    base = fake_cpufreq(tmp_path / "root")
    (base / path).parent.mkdir(exist_ok=True)
    (base / path).write_text(before + "\n")
    state = governor.boost_state(tmp_path / "root")
    assert state == {"control": path.split("/")[0], "enabled": enabled}
    (tmp_path / "journal").mkdir()
    j = CheckingJournal(tmp_path / "journal")
    governor.tune(j, root=tmp_path / "root")  # without disable_boost the boost is left alone
    assert (base / path).read_text().strip() == before
    lines = governor.tune(j, disable_boost=True, root=tmp_path / "root")
    assert (base / path).read_text().strip() == after_tune
    assert any("boost" in line for line in lines)
    j.undo()
    assert (base / path).read_text().strip() == before
    assert gov(base, 0) == "schedutil"


def test_write_failure_is_a_one_line_error(tmp_path: Path) -> None:
    base = tmp_path / "root/sys/devices/system/cpu/cpu0/cpufreq"
    base.mkdir(parents=True)
    (base / "scaling_governor").symlink_to("/proc/version")  # readable, never writable (EIO even for root)
    (tmp_path / "journal").mkdir()
    j = Journal(tmp_path / "journal")
    with pytest.raises(ShootoutError, match="cannot write .*scaling_governor"):
        governor.tune(j, root=tmp_path / "root")
    assert j.pending == []  # the failed change was taken off the journal at once


CHILD = """
import sys, time
from pathlib import Path
from shootout.conditions.governor import tune
from shootout.system.journal import Journal
lines = tune(Journal(), disable_boost=True, root=Path(sys.argv[1]))
print(len(lines), flush=True)
time.sleep(120)
"""


def test_sigkilled_tuner_is_restored_by_recover(tmp_path: Path) -> None:
    base = fake_cpufreq(tmp_path / "root")
    (base / "cpufreq/boost").write_text("1\n")
    env = dict(os.environ, SHOOTOUT_HOME=str(tmp_path / "home"), PYTHONPATH=str(SRC))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "root")],
                             env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "3"
        assert gov(base, 0) == gov(base, 2) == "performance"
        assert (base / "cpufreq/boost").read_text().strip() == "0"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    journals = tmp_path / "home/journal"
    assert len(leftovers(journals)) == 1
    undone, errors = recover(journals)
    assert errors == []
    assert len(undone) == 3
    assert gov(base, 0) == gov(base, 2) == "schedutil"
    assert (base / "cpufreq/boost").read_text().strip() == "1"
    assert leftovers(journals) == []
