"""Machine-wide locks: one holder at a time, released by a kill, no file left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from shootout.system.machinelock import Holder, lock_file, release, take

HOLD = """
import sys, time
from pathlib import Path
from shootout.system.machinelock import Holder, take
print(take(Path(sys.argv[1]), Holder(0, "their journal"))[0], flush=True)
time.sleep(600)
"""


def _holder_elsewhere(lock: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "True"
    return proc


def test_one_holder_at_a_time_and_no_file_left(tmp_path: Path) -> None:
    lock = lock_file("cpus", tmp_path)
    me = Holder(os.getpid(), "my journal")
    assert take(lock, me) == (True, None)
    assert take(lock, Holder(1, "x")) == (False, me)  # even in the same process
    release(lock, "another's journal")  # replayed from a killed holder's journal: ours stays held
    assert lock.exists() and take(lock, Holder(1, "x")) == (False, me)
    release(lock, "my journal")
    assert not lock.exists()
    assert take(lock, me) == (True, None)
    release(lock, "my journal")
    release(lock, "my journal")  # twice: harmless
    assert list(tmp_path.iterdir()) == []


def test_a_live_holder_elsewhere_keeps_it_and_a_killed_one_is_named_to_the_next(tmp_path: Path) -> None:
    lock = lock_file("cpus", tmp_path)
    other = _holder_elsewhere(lock)
    try:
        assert take(lock, Holder(os.getpid(), "mine")) == (False, Holder(0, "their journal"))
        release(lock, "their journal")  # a replayed journal lets go of no live process's lock
        assert lock.exists()
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
    taken, left = take(lock, Holder(os.getpid(), "mine"))
    assert taken and left == Holder(0, "their journal")  # whose journal the new holder undoes first
    release(lock, "mine")
    assert not lock.exists()


def test_replaying_a_killed_holders_journal_deletes_its_file(tmp_path: Path) -> None:
    lock = lock_file("cpus", tmp_path)
    other = _holder_elsewhere(lock)
    other.send_signal(signal.SIGKILL)
    other.wait()
    assert lock.exists()
    release(lock, "their journal")  # as `shootout doctor` replays their {"unlock": lock, ...}
    assert not lock.exists()
