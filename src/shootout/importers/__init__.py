"""Results of other benchmark tools as shootout runs: Phoronix Test Suite and hyperfine."""

from __future__ import annotations

import json
from pathlib import Path

from shootout.errors import UsageError
from shootout.importers.hyperfine import import_hyperfine
from shootout.importers.phoronix import import_phoronix
from shootout.importers.common import read_bytes
from shootout.model import Run, Trial

__all__ = ["detect", "import_foreign", "import_hyperfine", "import_phoronix"]


def detect(path: Path) -> str | None:
    """'phoronix', 'hyperfine' or None, from the file's content (not its name)."""
    head = read_bytes(Path(path), "result file").lstrip()
    if head.startswith(b"<"):
        return "phoronix" if b"<PhoronixTestSuite" in head[:4096] else None
    try:
        doc = json.loads(head)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(doc, dict) and isinstance(doc.get("results"), list) and all(
        isinstance(r, dict) and "command" in r for r in doc["results"]
    ):
        return "hyperfine"
    return None


def import_foreign(path: Path) -> tuple[Run, list[Trial]]:
    """Import a Phoronix composite.xml or a hyperfine JSON file, whichever `path` holds."""
    kind = detect(path)
    if kind == "phoronix":
        return import_phoronix(path)
    if kind == "hyperfine":
        return import_hyperfine(path)
    raise UsageError(
        f"{path}: not a file shootout can import",
        "expected a shootout results file, a Phoronix Test Suite composite.xml or hyperfine --export-json output",
    )
