"""Fixtures say where they come from: recorded on a machine, or written from the formats. A tree
written by hand from the formats is never called "recorded" (tests/fixtures/outputs/README.md
keeps the same rule with its CRAFTED files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
# fixture trees written from the formats (no board of theirs was at hand), and the tests that read them
WRITTEN = {"bootparts": ("unit/bootparts.py", "unit/test_pi_kernel_modes.py"),
           "arm": ("unit/test_arm_facts.py",),
           "energy": ("unit/test_counters_energy.py",)}
CALLED_RECORDED = re.compile(r"recorded (?:boot partitions?|partitions|board|outputs|in the formats)|trees recorded",
                             re.IGNORECASE)


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_fixtures_written_from_the_formats_say_so(name: str) -> None:
    readme = TESTS / "fixtures" / name / "README.md"
    assert readme.is_file(), f"{readme} says nothing of where its files come from"
    text = " ".join(readme.read_text().lower().split())
    assert "written from the formats" in text and "not recorded" in text
    for reader in WRITTEN[name]:
        called = CALLED_RECORDED.findall((TESTS / reader).read_text())
        assert not called, f"{reader} calls the {name} fixtures {called[0]!r}"
