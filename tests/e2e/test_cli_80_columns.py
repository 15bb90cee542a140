"""Every command's output fits 80 columns: into a pipe (COLUMNS unset, not a terminal) and in a
terminal of 80 columns (a pty), on a data directory holding real stored runs (fake targets).
What goes to stdout is checked: an error stays one line on stderr (a terminal wraps it).

One process per mode runs every command through the CLI entry, one after another, each after
a marker line, so that the check costs two interpreter starts rather than a hundred."""

from __future__ import annotations

import fcntl
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import typer
from rich.cells import cell_len

from shootout.base.model import Config, RunSettings
from shootout.cli.main import app
from shootout.experiments import EXPERIMENTS
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.catalogue import REGISTRY
from shootout.workloads.user import CommandWorkload

WIDTH = 80
MARK = "=== command: "
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
# Names as long as people give them: the table must keep them whole, not cut or fold them.
CONFIGS = ("debian-bookworm-amd64", "debian-bookworm-i386", "debian-bookworm-x32")
WORKLOADS = (("compile-the-kernel-tree", "ops/s"), ("sqlite-insert-rows", "items/s"), ("json-parse", "MB/s"))
DRIVER = """
import sys, json
from shootout.cli.main import main
for argv in json.loads(sys.argv[1]):
    print(%r + " ".join(argv), flush=True)
    sys.argv = ["shootout", *argv]
    try:
        main()
    except SystemExit:
        pass
    sys.stdout.flush(); sys.stderr.flush()
""" % MARK


def scripted(argv: Sequence[str], config: str, n: int) -> str:
    """Each configuration a few percent apart, with 1% noise."""
    factor = 1.0 + 0.03 * CONFIGS.index(config)
    value = 1000.0 * factor * math.exp(random.Random(f"{config}:{n}:{argv}").gauss(0, 0.01))
    return f"throughput: {value:.6f}\n"


def stored_runs(home: Path) -> None:
    """Two runs of three configurations and three workloads, as `shootout run` stores them."""
    SCRIPTS["columns"] = scripted
    store = Store(f"sqlite:///{home / 'results.db'}")
    configs = [Config(name=n, target="fake", options=(("script", "columns"),)) for n in CONFIGS]
    work = [CommandWorkload({"name": name, "command": f"bench-{name}", "regex": r"throughput: ([0-9.]+)",
                             "unit": unit, "description": f"the {name} benchmark"}) for name, unit in WORKLOADS]
    for seed in (3, 4):
        Runner(store, Journal(home)).start(RunRequest(configs, work, RunSettings(seed=seed, budget_s=600, max_rounds=12)))


def every_help(group: typer.core.TyperGroup, path: tuple[str, ...] = ()) -> Iterator[list[str]]:
    yield [*path, "--help"]
    for name, sub in getattr(group, "commands", {}).items():
        yield from every_help(sub, (*path, name))


def commands(out: Path) -> list[list[str]]:
    """Every command, its --help, and each listing's NAME form for every name."""
    return [
        [], *every_help(typer.main.get_command(app)),
        ["workloads"], *(["workloads", name] for name in REGISTRY),
        ["experiments"], *(["experiments", name] for name in EXPERIMENTS),
        ["runs"], ["show"], ["show", "--all"], ["show", "1"], ["compare", "1", "2"], ["compare", "1", "vs", "2"],
        ["export", "last", "-o", str(out / "run.json")], ["import", str(out / "run.json")],
        ["report", "1", "--format", "md", "--out", str(out / "r")],
        ["doctor"], ["userspace", "list"], ["conditions", "--wait", "0"], ["show", "no-such-run"],
        ["run", "-f", str(run_file(out)), "--max-rounds", "8", "--db", f"sqlite:///{out / 'run.db'}"],
    ]


def run_file(out: Path) -> Path:
    """A real run on this machine, named as people name things: two host configurations and a
    command whose figure varies by 1%."""
    path = out / "shootout.toml"
    path.write_text("""
[[config]]
name = "debian-bookworm-amd64-plain"
spec = "host"

[[config]]
name = "debian-bookworm-amd64-arena"
spec = "host"
env = { MALLOC_ARENA_MAX = "2" }

[[workload]]
name = "python-random-throughput"
command = "python3 -c \\"import random; print('throughput:', 1000 * random.gauss(1, 0.01))\\""
regex = 'throughput: ([0-9.]+)'
unit = "ops/s"
""")
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    stored_runs(home)
    return home


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return {**env, "SHOOTOUT_HOME": str(home), "SHOOTOUT_LOAD_WAIT": "0s", "TERM": "xterm-256color"}


def piped(argvs: list[list[str]], home: Path) -> str:
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(argvs)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=environment(home),
                          timeout=600)
    return done.stdout


def in_terminal(argvs: list[list[str]], home: Path) -> str:
    """Everything the commands write into a pty of 80 columns."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, WIDTH, 0, 0))
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, json.dumps(argvs)], stdin=follower, stdout=follower,
                            stderr=subprocess.DEVNULL, env=environment(home), close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=600)
    os.close(leader)
    return ANSI.sub("", b"".join(chunks).decode(errors="replace")).replace("\r\n", "\n")


def outputs(text: str) -> dict[str, str]:
    """Each command's output, by its words."""
    parts = text.split(MARK)[1:]
    return {part.split("\n", 1)[0]: part.split("\n", 1)[1] if "\n" in part else "" for part in parts}


def too_wide(text: str) -> dict[str, list[str]]:
    """Per command, the lines wider than 80 columns."""
    # a live progress bar redraws its line after "\r": each drawing is a line on the screen
    found = {command: [line for line in re.split("[\r\n]", out) if cell_len(line.rstrip()) > WIDTH]
             for command, out in outputs(text).items()}
    return {command: lines for command, lines in found.items() if lines}


@pytest.mark.parametrize("mode", ["piped", "terminal"])
def test_no_command_writes_a_line_wider_than_80_columns(home: Path, tmp_path: Path, mode: str) -> None:
    argvs = commands(tmp_path)
    text = (piped if mode == "piped" else in_terminal)(argvs, home)
    assert text.count(MARK) == len(argvs), text[-2000:]
    wide = too_wide(text)
    assert not wide, "\n".join(f"{cmd}: {len(lines)} lines, widest {max(map(cell_len, lines))}: {lines[0][:120]}"
                               for cmd, lines in wide.items())
    # nothing was cut short to fit: a cut word ends in "…" (help's own "A B B A …" stands alone),
    # a cut command line in --help in "..."
    assert not [cmd for cmd, out in outputs(text).items() if re.search(r"\S\u2026|[a-z,]\.\.\.$", out, re.M)]
    ran = next(out for cmd, out in outputs(text).items() if cmd.startswith("run -f"))
    assert "python-random-throughput" in ran.split() and "geomean" in ran, ran  # its table, names whole
    shown = outputs(text)["show"]
    assert all(name in shown for name in CONFIGS) and all(name in shown for name, _ in WORKLOADS)


def test_show_wide_keeps_every_cell_into_a_pipe(home: Path) -> None:
    text = piped([["show", "--wide"]], home)
    assert any(cell_len(line) > WIDTH for line in text.splitlines())  # the medians, side by side
    assert "1,000 ops/s" in text or "ops/s" in text


def test_workloads_lists_one_line_each_with_its_marks(home: Path) -> None:
    text = piped([["workloads"]], home)
    lines = text.splitlines()
    for name, cls in REGISTRY.items():
        (line,) = [line for line in lines if line.split()[:1] == [name]]
        assert ("root" in line.split()) == bool(cls.needs_root), line
    assert any(line.startswith("root:") or " root: " in line or line.startswith("marks:") for line in lines)
    assert len(lines) < 2 * len(REGISTRY)
