"""The change journal: every change to the machine is written down with its undo, then done.

Each shootout process keeps one journal file (JSON lines) under the data directory. An
entry is flushed to disk *before* the change is made, so a process killed at any point
leaves a record from which `shootout doctor` (or the next start) undoes what it did.
Undo steps are data, not closures, so another process can replay them:
  {"argv": [...]}                       run a command (e.g. umount); with "host_mounts": true, in
                                        the mount namespace the process started in (system.mountns)
  {"write": path, "content": text}      write a sysfs/procfs file back to its old value
  {"rmtree": path} / {"remove": path}   delete what was created
  {"kill": pid, "started": unix_time}   SIGKILL a process shootout started (a VM), if that
                                        pid is still the same process (its start time matches)
  {"detach_loops": path}                detach the loop devices backed by a file shootout made
  {"end_marked": prefix}                end what a run's commands left running (execution.tree)
  {"affinity": [[tid, started, cpus]], "boot": id}   give tasks moved off reserved CPUs their own
                                        CPUs back (system.affinity)
  {"unpin": cpus, "keep": [...], "boot": id}   give every task left on exactly those CPUs all
                                        online CPUs (the children of moved tasks)
  {"unpin_irqs": cpus, "keep": [...], "mask": hex, "irqs": dir, "boot": id}   give every IRQ left
                                        on exactly those CPUs the old default mask (requested meanwhile)
  {"unlock": path, "journal": path}     let go of a machine-wide lock its journal's process took
                                        (system.machinelock)

An entry whose undo fails stays in the journal (and its file stays on disk), so that a later
undo, `shootout doctor` or the next run tries again: every undo step is written so that
doing it twice is harmless.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from shootout.base.paths import data_subdir
from shootout.execution.tree import end_marked
from shootout.system import affinity, machinelock
from shootout.system.mountns import in_host_mounts

Undo = dict[str, Any]


def journal_dir() -> Path:
    return data_subdir("journal")


def _process_start(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def kill_started(pid: int, started: float) -> None:
    """SIGKILL pid and wait for it, unless the pid now belongs to another process."""
    start = _process_start(pid)
    if start is None or abs(start - started) > 1.0:
        return  # gone already, or the pid was reused
    try:
        proc = psutil.Process(pid)
        proc.kill()
        deadline = time.monotonic() + 30
        # dead once a zombie: its parent (init, or a subreaper) reaps it, not us
        while proc.status() != psutil.STATUS_ZOMBIE:
            if time.monotonic() > deadline:
                raise psutil.TimeoutExpired(30, pid)
            time.sleep(0.05)
    except psutil.NoSuchProcess:
        pass
    except psutil.Error as exc:  # no permission, or it did not die within the wait
        raise OSError(f"cannot kill process {pid}: {exc}") from exc


def _detach_loops(backing: str) -> str | None:
    """Detach every loop device of a backing file (by file, never by a device number that
    another process may have been given since)."""
    if not Path(backing).exists():
        return None
    found = subprocess.run(["losetup", "-n", "-O", "NAME", "-j", backing], capture_output=True, text=True, timeout=60)
    for device in found.stdout.split():
        done = subprocess.run(["losetup", "-d", device], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            return f"losetup -d {device}: {done.stderr.strip() or done.returncode}"
    return None


def _perform_undo(undo: Undo) -> str | None:
    """Carry out one undo step; return an error text or None."""
    try:
        if "argv" in undo:
            def command() -> subprocess.CompletedProcess[str]:
                return subprocess.run(undo["argv"], capture_output=True, text=True, timeout=60)

            done = in_host_mounts(command) if undo.get("host_mounts") else command()
            if done.returncode != 0 and not undo.get("tolerate_failure"):
                argv = undo["argv"][3:] if undo["argv"][:2] == ["sh", "-c"] else undo["argv"]  # a script by its name
                return f"{' '.join(argv)}: {done.stderr.strip() or done.returncode}"
        elif "write" in undo:
            Path(undo["write"]).write_text(undo["content"])
        elif "rmtree" in undo:
            shutil.rmtree(undo["rmtree"], ignore_errors=True)
        elif "remove" in undo:
            Path(undo["remove"]).unlink(missing_ok=True)
        elif "kill" in undo:
            kill_started(int(undo["kill"]), float(undo["started"]))
        elif "detach_loops" in undo:
            return _detach_loops(undo["detach_loops"])
        elif "affinity" in undo:
            affinity.restore(undo["affinity"], undo.get("boot", ""))
        elif "unpin" in undo:
            affinity.unpin(undo["unpin"], undo.get("keep", []), undo.get("boot", ""))
        elif "unpin_irqs" in undo:
            affinity.unpin_irqs(undo["unpin_irqs"], undo.get("keep", []), undo["mask"], undo["irqs"],
                                undo.get("boot", ""))
        elif "unlock" in undo:
            machinelock.release(Path(undo["unlock"]), str(undo.get("journal", "")))
        elif "end_marked" in undo:
            if left := end_marked(undo["end_marked"]):
                return f"processes {', '.join(map(str, left))} of a killed run did not exit"
        else:
            return f"unknown undo step {undo!r}"
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return None


@dataclass
class Entry:
    id: int
    description: str
    undo: list[Undo]


class Journal:
    """Append-only record of this process's changes; undo() reverts them newest first."""

    _instances = itertools.count(1)

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or journal_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        started = int((_process_start(pid) or time.time()) * 1000)
        # One file per journal (not per process): two journals alive at once never mix ids.
        self.path = self.directory / f"{pid}-{started}-{next(self._instances)}.jsonl"
        self._entries: list[Entry] = []
        self._next_id = 1
        self._lock = threading.RLock()  # userspaces are created by parallel threads

    @property
    def lock(self) -> threading.RLock:
        """Hold it across several changes that belong together (the mounts of one chroot
        session), so a thread creating a userspace in parallel never interleaves its own."""
        return self._lock

    def _append(self, record: dict[str, Any]) -> None:
        with self._lock, open(self.path, "a") as fh:
            fh.write(json.dumps(record) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def record(self, description: str, undo: Undo | list[Undo]) -> int:
        """Write an entry down before the change is made; returns its id."""
        steps = undo if isinstance(undo, list) else [undo]
        with self._lock:
            entry = Entry(self._next_id, description, steps)
            self._next_id += 1
            self._append(
                {"id": entry.id, "pid": os.getpid(), "description": description, "undo": steps, "at": time.time()}
            )
            self._entries.append(entry)
        return entry.id

    def change(self, description: str, undo: Undo | list[Undo], do: Callable[[], None]) -> int:
        """Record, then do. If doing fails, the (possibly partial) change is undone at once."""
        entry_id = self.record(description, undo)
        try:
            do()
        except BaseException:
            # The undo of a change that failed may fail too (a file never written cannot be
            # written back either): its entry goes, since the change most likely never happened.
            self.undo_entry(entry_id, keep_failed=False)
            raise
        return entry_id

    def run(self, description: str, argv: list[str], undo: Undo | list[Undo]) -> int:
        """A change made by a command, e.g. mount; raises CalledProcessError with its stderr."""

        def do() -> None:
            subprocess.run(argv, check=True, capture_output=True, text=True)

        return self.change(description, undo, do)

    def take_lock(self, description: str, path: Path,
                  wait_s: float = 0.0) -> tuple[int | None, machinelock.Holder | None]:
        """A machine-wide lock (system.machinelock), let go of when its entry is undone, also
        after a kill: (the entry, a killed holder's record or None) when taken; (None, the live
        holder if known) when another process still holds it after wait_s."""
        entry = self.record(description, {"unlock": str(path), "journal": str(self.path)})
        taken, holder = machinelock.take(path, machinelock.Holder(os.getpid(), str(self.path)), wait_s)
        if not taken:
            self.undo_entry(entry)
            return None, holder
        return entry, holder

    def undo_entry(self, entry_id: int, keep_failed: bool = True) -> list[str]:
        """Undo one entry; on an error it stays pending (retried by undo(), or after exit)."""
        errors: list[str] = []
        with self._lock:
            found = [e for e in self._entries if e.id == entry_id]
            for entry in found:
                self._entries.remove(entry)
        for entry in found:
            failed = [f"{entry.description}: {err}" for step in entry.undo if (err := _perform_undo(step)) is not None]
            if failed and keep_failed:
                with self._lock:
                    self._entries.append(entry)
                    self._entries.sort(key=lambda e: e.id)
            else:
                self._append({"undone": entry.id})
            errors += failed
        return errors

    def undo(self) -> list[str]:
        """Undo everything, newest first; return errors (undo goes on past a failure)."""
        errors: list[str] = []
        for entry in reversed(list(self._entries)):
            errors += self.undo_entry(entry.id)
        if not self._entries:
            self.path.unlink(missing_ok=True)
        return errors

    @property
    def pending(self) -> list[str]:
        return [e.description for e in self._entries]


@contextmanager
def journal(report: Callable[[str], None] | None = None) -> Iterator[Journal]:
    """A journal whose changes are undone however the block ends (including Ctrl-C); report
    gets one line per undo that failed (its entry is kept for `shootout doctor`)."""
    j = Journal()
    try:
        yield j
    finally:
        for error in j.undo():
            if report is not None:
                report(error)


@dataclass
class LeftOver:
    path: Path
    pid: int
    entries: list[dict[str, Any]]


def _read(path: Path) -> list[dict[str, Any]]:
    entries: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a kill mid-write: the change it announced was not made
        if "undone" in record:
            entries.pop(record["undone"], None)
        else:
            entries[record["id"]] = record
    return list(entries.values())


def _left(path: Path) -> LeftOver:
    return LeftOver(path, int(path.stem.split("-")[0]), _read(path))


def _alive(path: Path) -> bool:
    pid_text, started, *_ = path.stem.split("-") + ["0"]
    start = _process_start(int(pid_text))
    return start is not None and abs(start * 1000 - int(started)) < 2000


def leftovers(directory: Path | None = None, alive_too: bool = False) -> list[LeftOver]:
    """Journals of shootout processes that died without undoing their changes (alive_too: of
    live ones too, for changes meant to outlive their process, such as the next boot's)."""
    found = []
    for path in sorted((directory or journal_dir()).glob("*.jsonl")):
        if not alive_too and _alive(path):
            continue
        found.append(_left(path))
    return found


def recover(directory: Path | None = None, alive_too: bool = False) -> tuple[list[str], list[str]]:
    """Undo what killed runs left behind. Returns (descriptions undone, errors); an entry whose
    undo failed is kept in its file for the next try."""
    undone: list[str] = []
    errors: list[str] = []
    for left in leftovers(directory, alive_too):
        done, failed = _recover(left)
        undone += done
        errors += failed
    return undone, errors


def recover_file(path: Path) -> tuple[list[str], list[str]]:
    """recover() for one journal file, wherever it is (another SHOOTOUT_HOME's); nothing while
    its process lives."""
    if not path.is_file() or _alive(path):
        return [], []
    return _recover(_left(path))


def _recover(left: LeftOver) -> tuple[list[str], list[str]]:
    undone: list[str] = []
    errors: list[str] = []
    kept: list[dict[str, Any]] = []
    for entry in reversed(left.entries):
        failed = [f"{entry['description']}: {err}" for step in entry["undo"]
                  if (err := _perform_undo(step)) is not None]
        if failed:
            kept.insert(0, entry)
        else:
            undone.append(entry["description"])
        errors += failed
    if kept:  # written whole, then renamed over: a kill now loses nothing
        tmp = left.path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(entry) + "\n" for entry in kept))
        os.replace(tmp, left.path)
    else:
        left.path.unlink(missing_ok=True)
    return undone, errors
