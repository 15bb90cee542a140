"""Target kinds are plug-ins: one module plus one line in shootout.places, and everything that
knows the kinds (parse_spec, make_target, the hints, the --config help) is derived from it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from echokind import EchoKind, EchoTarget
from typer.testing import CliRunner

import shootout
from shootout import places as kinds
from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.cli.main import app
from shootout.configs.specs import parse_spec
from shootout.parts import parts_problem
from shootout.places import LOCAL, machine_key, make_target
from shootout.system.journal import Journal

SRC = Path(shootout.__file__).parent


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(kinds.KINDS, EchoKind.name, EchoKind())  # the registry's one line
    yield


def test_a_new_kind_is_parsed_made_and_runs(echo: None, tmp_path: Path) -> None:
    config = parse_spec(f"echo:{tmp_path}")
    assert (config.target, config.option("dir")) == ("echo", str(tmp_path))
    with pytest.raises(UsageError, match="bad echo configuration") as bad:
        parse_spec("echo:relative")
    assert bad.value.hint == EchoKind.hint
    journal = Journal()
    try:
        target = make_target(config, journal)
        assert isinstance(target, EchoTarget)
        target.open()
        try:
            target.put(b"hello\n", f"{tmp_path}/greeting")
            done = target.run(["cat", "greeting"], cwd=target.workdir(), timeout=60)
            assert (done.exit_status, done.stdout) == (0, "hello\n")
        finally:
            target.close()
    finally:
        journal.undo()
    # its capabilities, asked where they are used: this machine's lane, this machine's parts
    assert machine_key(config) == LOCAL
    settings = {"settings": {"sysctl": {}, "sysfs": {}}}
    assert parts_problem(Config(name="e", target="echo", parts=settings)) is None
    assert "this machine only" in (parts_problem(Config(name="s", target="ssh", parts=settings)) or "")


def test_the_hints_name_a_new_kind(echo: None) -> None:
    with pytest.raises(UsageError, match="unknown configuration") as unknown:
        parse_spec("nosuch")
    assert "echo:DIR" in unknown.value.hint and "kernel:RELEASE[:MACHINE]" in unknown.value.hint
    with pytest.raises(UsageError, match="unknown target 'bogus'") as target:
        make_target(Config(name="b", target="bogus"), Journal())
    assert target.value.hint == "use host, chroot, image, ssh, vm or echo"


def test_without_its_line_a_kind_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown configuration"):
        parse_spec(f"echo:{tmp_path}")
    with pytest.raises(UsageError, match="unknown target 'echo'"):
        make_target(Config(name="e", target="echo"), Journal())


def _help(env: dict[str, str] | None = None) -> str:
    done = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "400", "NO_COLOR": "1", **(env or {})})
    assert done.exit_code == 0, done.output
    return " ".join(done.output.replace("\u2502", " ").split())


def test_the_config_help_shows_every_form_the_parser_takes() -> None:
    shown = _help()
    for form in kinds.spec_forms():
        assert form in shown
    assert "kernel:RELEASE[:MACHINE]" in shown  # it once said kernel:RELEASE


def test_the_config_help_shows_a_new_kind() -> None:
    # The help is written when the CLI is imported: a fresh interpreter registers the kind first.
    code = ("import echokind\nfrom shootout import places as kinds\nkinds.KINDS['echo'] = echokind.EchoKind()\n"
            "from shootout.cli.main import app\napp(['run', '--help'])\n")
    path = os.pathsep.join([str(SRC.parent), str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": path, "COLUMNS": "400", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    assert "echo:DIR" in " ".join(done.stdout.replace("\u2502", " ").split())
    assert "echo:DIR" not in _help()


def _target_compared_with_names(tree: ast.AST) -> Iterator[int]:
    def names(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(names(e) for e in node.elts)

    def target(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "target"

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            # config.target == "vm", config.target in ("ssh", "vm"), config.target in ELSEWHERE
            listed = isinstance(node.ops[0], (ast.In, ast.NotIn)) and isinstance(node.comparators[0], ast.Name)
            if target(node.left) and listed or any(target(s) for s in sides) and any(names(s) for s in sides):
                yield node.lineno


def test_no_module_compares_a_target_with_a_name() -> None:
    found = [f"{path.relative_to(SRC)}:{line}" for path in sorted(SRC.rglob("*.py"))
             for line in _target_compared_with_names(ast.parse(path.read_text(), str(path)))]
    assert found == [], "ask the configuration's kind (shootout.places.kind_of) instead"


@pytest.mark.parametrize("spec, kind", [("host+m64", "host"), ("debian:bookworm", "chroot"), ("ssh:a:port", "ssh"),
                                        ("vm:debian:bookworm", "vm")])
def test_a_malformed_spec_gets_its_kinds_hint(spec: str, kind: str) -> None:
    with pytest.raises(UsageError) as bad:
        parse_spec(spec)
    assert bad.value.hint == kinds.KINDS[kind].hint
