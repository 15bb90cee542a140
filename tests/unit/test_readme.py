"""README.md is one screen a newcomer reads: what shootout answers, the two set-up commands, a
real sample of the table and the summary chart, then links; the rest lives in short pages under
docs/, and nothing the README once documented is lost on the way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# the set-up commands, exactly: CI and scripts/emulated-arm64.sh run these two
SET_UP = ("./install.sh && .venv/bin/shootout run", "./install.sh --test && tests/run")
FIRST_SCREEN = 60  # lines
MOST_LINES = 150
# every option the README named before its pages moved to docs/: each still documented somewhere
OPTIONS = ("--aa --across-boots --all --arch --boots --budget --by-label --confidence --db --emulate --experiment "
           "--file --format --json --load-wait --max-rounds --min-rounds --next-kernel --no-monitor --out --partial "
           "--precision --price --price-unit --print-packages --pwprompt --release --repeats --resume "
           "--resume-at-boot --seed --sequential --suite --system-site-packages --test --tests-only --threshold "
           "--tune").split()
LINK = re.compile(r"\]\(((?:docs/)[^)#\s]+)")


def readme() -> str:
    return README.read_text()


def sample_table() -> list[str]:
    """The lines of the code block between README's sample markers."""
    block = readme().split("<!-- sample: begin -->\n", 1)[1].split("<!-- sample: end -->", 1)[0]
    return block.split("```\n", 2)[1].splitlines()


def test_the_readme_is_short() -> None:
    lines = readme().splitlines()
    assert len(lines) <= MOST_LINES, f"README.md has {len(lines)} lines: move the detail into a page under docs/"


def test_the_first_screen_holds_the_set_up_commands_and_the_sample() -> None:
    screen = "\n".join(readme().splitlines()[:FIRST_SCREEN])
    for command in SET_UP:
        assert f"\n    {command}\n" in screen, f"{command!r} is not among README's first {FIRST_SCREEN} lines"
    assert "<!-- sample: begin -->" in screen, "the sample table does not start on README's first screen"
    assert readme().count("./install.sh") >= 2 and screen.index(SET_UP[0]) < screen.index(SET_UP[1])


def test_the_sample_is_a_real_80_column_table_and_chart() -> None:
    table = sample_table()
    assert len(table) >= 5, "the sample table is empty: run scripts/readme-sample.sh"
    assert max(len(line) for line in table) <= 80
    assert any(word in " ".join(table) for word in ("faster", "slower", "same", "inconclusive"))
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", readme())
    assert images and all((ROOT / image).is_file() for image in images)
    assert (ROOT / "docs/img/summary.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_docs_page_the_readme_links_exists_and_every_page_is_linked() -> None:
    linked = set(LINK.findall(readme()))
    assert {"docs/method.md", "docs/configurations.md", "docs/contributing.md", "docs/writeups.md"} <= linked
    assert all((ROOT / page).is_file() for page in linked), sorted(p for p in linked if not (ROOT / p).is_file())
    pages = {f"docs/{page.name}" for page in DOCS.glob("*.md")}
    assert pages <= linked, f"pages no README link reaches: {sorted(pages - linked)}"


def test_every_page_is_short_and_titled() -> None:
    for page in DOCS.glob("*.md"):
        lines = page.read_text().splitlines()
        assert lines[0].startswith("# "), f"{page.name} has no title"
        assert len(lines) <= 250, f"{page.name} has {len(lines)} lines"


@pytest.mark.parametrize("option", OPTIONS)
def test_every_option_the_readme_named_is_still_documented(option: str) -> None:
    text = readme() + "".join(page.read_text() for page in DOCS.glob("*.md"))
    assert re.search(rf"{re.escape(option)}(?![a-z0-9-])", text), f"{option} is documented nowhere any more"


def test_the_readme_says_how_many_write_ups_the_experiments_reproduce() -> None:
    from shootout.experiments import EXPERIMENTS

    # "docs/writeups.md, sections D, E": the write-ups each experiment sets its results beside
    letters = {letter for experiment in EXPERIMENTS.values()
               for letter in re.findall(r"\b[A-E]\b", experiment.cited.split("section", 1)[1])}
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
    assert f"{words[len(letters)]} of the five write-ups" in " ".join(readme().split())
    for name in EXPERIMENTS:
        assert re.search(rf"`shootout run --experiment {re.escape(name)}[` ]", readme()), f"README's articles table lacks {name}"
