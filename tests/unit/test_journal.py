import os
import signal
import subprocess
import sys
import textwrap

from shootout.system.journal import Journal, leftovers, recover


def test_undo_in_reverse_order_and_file_removed(tmp_path):
    log = tmp_path / "log"
    j = Journal(tmp_path)
    j.change("first", {"argv": ["sh", "-c", f"echo undo1 >> {log}"]}, lambda: None)
    j.change("second", {"argv": ["sh", "-c", f"echo undo2 >> {log}"]}, lambda: None)
    assert j.pending == ["first", "second"]
    assert j.undo() == []
    assert log.read_text().split() == ["undo2", "undo1"]
    assert not j.path.exists()


def test_failed_change_is_undone_at_once(tmp_path):
    target = tmp_path / "made"
    j = Journal(tmp_path)

    def do():
        target.write_text("half")
        raise RuntimeError("boom")

    try:
        j.change("make file", {"remove": str(target)}, do)
    except RuntimeError:
        pass
    assert not target.exists() and j.pending == []


def test_killed_process_changes_are_recovered(tmp_path):
    sysfile = tmp_path / "governor"
    sysfile.write_text("powersave")
    code = textwrap.dedent(f"""
        import os, time
        from pathlib import Path
        from shootout.system.journal import Journal
        j = Journal(Path({str(tmp_path)!r}))
        f = Path({str(sysfile)!r})
        j.change("governor", {{"write": str(f), "content": f.read_text()}}, lambda: f.write_text("performance"))
        print("changed", flush=True)
        time.sleep(60)
    """)
    env = {**os.environ, "PYTHONPATH": "src"}
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout.readline().strip() == "changed"
    assert leftovers(tmp_path) == []  # still alive: not a leftover
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert sysfile.read_text() == "performance"
    undone, errors = recover(tmp_path)
    assert undone == ["governor"] and errors == []
    assert sysfile.read_text() == "powersave"
    assert list(tmp_path.glob("*.jsonl")) == []


def test_a_process_left_running_is_killed_but_a_reused_pid_is_not(tmp_path):
    import psutil

    survivor = subprocess.Popen(["sleep", "300"], start_new_session=True)
    other = subprocess.Popen(["sleep", "300"], start_new_session=True)
    started = psutil.Process(survivor.pid).create_time()
    code = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from shootout.system.journal import Journal
        j = Journal(Path({str(tmp_path)!r}))
        j.record("a VM", {{"kill": {survivor.pid}, "started": {started}}})
        # the same pid number with another start time: a pid reused by an unrelated process
        j.record("an old VM", {{"kill": {other.pid}, "started": {started - 3600}}})
        os.kill(os.getpid(), 9)
    """)
    subprocess.run([sys.executable, "-c", code])
    try:
        undone, errors = recover(tmp_path)
        assert errors == [] and sorted(undone) == ["a VM", "an old VM"]
        survivor.wait(timeout=10)  # a 300 s sleep ended: killed (and reaped by the undo's wait)
        assert other.poll() is None  # not ours any more: left alone
    finally:
        other.kill()
        other.wait()
        survivor.kill()
        survivor.wait()


def test_a_failed_undo_keeps_its_entry_until_it_succeeds(tmp_path):
    """Nothing claims an undo that did not happen: the entry stays (in memory and on disk)
    and the next undo, doctor or run tries it again."""
    blocker = tmp_path / "busy"
    blocker.write_text("")
    undo = {"argv": ["sh", "-c", 'if [ -e "$1" ]; then echo "still busy" >&2; exit 1; fi', "busy-check", str(blocker)]}
    j = Journal(tmp_path)
    first = j.record("swapon busy", undo)
    j.record("plain", {"argv": ["true"]})
    assert j.undo_entry(first) == ["swapon busy: busy-check " + str(blocker) + ": still busy"]
    assert j.pending == ["swapon busy", "plain"]
    assert j.undo() == ["swapon busy: busy-check " + str(blocker) + ": still busy"]
    assert j.pending == ["swapon busy"] and j.path.exists()
    # as after a kill: doctor finds the entry, fails again, keeps it
    undone, errors = recover(tmp_path, alive_too=True)
    assert undone == [] and len(errors) == 1 and "still busy" in errors[0]
    assert [e["description"] for left in leftovers(tmp_path, alive_too=True) for e in left.entries] == ["swapon busy"]
    blocker.unlink()
    assert recover(tmp_path, alive_too=True) == (["swapon busy"], [])
    assert list(tmp_path.glob("*.jsonl")) == []
