"""docs/writeups.md holds every figure an experiment or a workload sets beside its results as the
write-up's, with its unit, and every experiment cites the sections it reproduces."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from shootout.experiments import EXPERIMENTS, rpi_iozone
from shootout.experiments.writeup import WRITEUPS
from shootout.judge.analysis import Analysis
from shootout.workloads.catalogue import REGISTRY

ROOT = Path(__file__).parents[2]
DOC = (ROOT / WRITEUPS).read_text()
# a number (not part of a word such as veth0 or A72), then perhaps its unit
FIGURE = re.compile(r"(?<![\w.,])(\d+(?:,\d{3})*(?:\.\d+)?)(?:\s?(%|×|x\b|kB/s|MB/s|GB/s|Mbit/s|Gbit/s|kpps|Mpps|MIPS|GiB|GB|MB)"
                    r"(?![\w/]))?")
NUMBER = r"(?<![\w.,]){}(?!,?\d)"


def said_by_write_ups(analysis: Analysis) -> Iterator[tuple[str, str]]:
    """(where, text) of what shootout prints as the write-ups' own: each experiment's
    `reproduces` and `found`, the line its explainer opens with (before any measured figure),
    the iozone figures of rpi-iozone, and each workload's `reproduces`."""
    for name, item in EXPERIMENTS.items():
        yield f"{name} reproduces", item.reproduces
        for workload, found in item.found.items():
            yield f"{name} found {workload}", found
        if item.explainer is not None and name != "pi3desk-swap":  # its opening line is measured figures
            yield f"{name} explains", item.explain(analysis)[0]
    for device in rpi_iozone.DEVICES:  # E's figures, from which rpi-iozone's devices are emulated
        yield f"rpi-iozone {device.name}", ", ".join(f"{v:,} kB/s" for v in (*device.e_4k.values(), *device.e_16m))
    for name, cls in REGISTRY.items():
        yield f"workload {name}", cls.spec.reproduces


def table_unit(number: str) -> str:
    """The line before the Markdown table that holds `number` (where its unit is said)."""
    lines = DOC.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(("|", "  |")) and re.search(NUMBER.format(re.escape(number)), line):
            while i > 0 and (lines[i].lstrip().startswith("|") or not lines[i].strip()):
                i -= 1
            return lines[i]
    return ""


def test_every_write_up_figure_is_in_the_doc_with_its_unit(analysis: Analysis) -> None:
    missing = []
    for where, text in said_by_write_ups(analysis):
        for number, unit in FIGURE.findall(text):
            if not re.search(NUMBER.format(re.escape(number)), DOC):
                missing.append(f"{where}: {number}")
            elif unit and f"{number} {unit}" not in DOC and f"{number}{unit}" not in DOC and unit not in table_unit(number):
                missing.append(f"{where}: {number} {unit}")
    assert not missing, f"not in {WRITEUPS}: {missing}"


def test_the_check_finds_a_figure_the_doc_lacks() -> None:
    assert FIGURE.findall("about 25 Gbit/s with the offloads on, 5.5 off") == [("25", "Gbit/s"), ("5.5", "")]
    assert not re.search(NUMBER.format(re.escape("5.5")), DOC)


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_cites_a_section_the_doc_has(name: str) -> None:
    cited = EXPERIMENTS[name].cited
    letters = re.findall(r"\b([A-E])\b", cited.split("section", 1)[1])
    assert cited.startswith(f"{WRITEUPS}, section") and letters
    for letter in letters:
        assert re.search(rf"^## {letter}\. ", DOC, re.MULTILINE), letter
    if "reference numbers" in cited:
        assert "## Reference numbers" in DOC


def test_shootout_experiments_names_where_the_figures_are() -> None:
    from typer.testing import CliRunner

    from shootout.cli.main import app

    out = CliRunner().invoke(app, ["experiments", "rpi64"]).output
    assert "  the write-up's figures: docs/writeups.md, section A\n  run: shootout run --experiment rpi64" in out
    assert "docs/writeups.md, sections D, E" in CliRunner().invoke(app, ["experiments", "browser32"]).output
    listed = CliRunner().invoke(app, ["experiments"]).output.splitlines()
    assert [line.split()[:3] for line in listed if line.startswith("browser32")] == [["browser32", "D,", "E"]]


def test_the_doc_lists_every_experiment_and_workload_under_the_sections_it_cites() -> None:
    rows = {m.group(1): m.group(0).split("|") for m in re.finditer(r"^\| ([A-E]) \|.*$", DOC, re.MULTILINE)}
    experiments = {letter: set(re.findall(r"[\w.-]+", cells[2])) for letter, cells in rows.items()}
    workloads = {letter: set(re.findall(r"[\w.-]+", cells[3])) for letter, cells in rows.items()}
    for name, item in EXPERIMENTS.items():
        for letter in re.findall(r"\b([A-E])\b", item.cited.split("section", 1)[1]):
            assert name in experiments[letter], (name, letter)
    for name, cls in REGISTRY.items():
        for letters in re.findall(r"(?:^|; )([A-E](?:, [A-E])*):", cls.spec.reproduces):
            for letter in letters.split(", "):
                assert name in workloads[letter], (name, letter)
