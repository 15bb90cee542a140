"""Every --help shows its text as written: Rich markup must not eat literal [brackets]."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from shootout.cli.main import app

BRACKETED = re.compile(r"\[+[^\[\]]*\]+")


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command of the (click) tree Typer builds, with the words that invoke it."""
    yield path, group
    for name, sub in getattr(group, "commands", {}).items():
        yield from commands(sub, (*path, name))


def written(text: str | None) -> str:
    """The help text as its author meant it to read (Rich escapes undone)."""
    return (text or "").replace("\\[", "[")


ALL = list(commands(typer.main.get_command(app)))


@pytest.mark.parametrize("path, command", ALL, ids=[" ".join(p) or "shootout" for p, _ in ALL])
def test_help_keeps_every_bracketed_word(path: tuple[str, ...], command: Any) -> None:
    done = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "250", "NO_COLOR": "1"})
    assert done.exit_code == 0, done.output
    shown = " ".join(done.output.replace("\u2502", " ").split())
    texts = [command.help] + [getattr(p, "help", None) for p in command.params]
    for text in texts:
        for word in BRACKETED.findall(written(text)):
            assert word in shown, f"{' '.join(path)} --help lost {word!r} of: {written(text)}"


def test_the_brackets_test_sees_what_rich_eats() -> None:
    """The check above would fail on an unescaped help text."""
    probe = typer.Typer()

    @probe.command()
    def run(file: str = typer.Option("", help="with [[config]] tables")) -> None:
        """Run."""

    shown = " ".join(CliRunner().invoke(probe, ["--help"], env={"COLUMNS": "250"}).output.split())
    assert "[[config]]" not in shown


def test_report_help_lists_the_formats() -> None:
    shown = " ".join(CliRunner().invoke(app, ["report", "--help"], env={"COLUMNS": "250"}).output.split())
    assert all(fmt in shown for fmt in ("html", "md", "markdown", "png", "svg"))
