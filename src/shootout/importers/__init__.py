"""Results of other benchmark tools as shootout runs: Phoronix Test Suite and hyperfine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Run, Trial
from shootout.importers.common import read_bytes
from shootout.importers.hyperfine import import_hyperfine
from shootout.importers.phoronix import import_phoronix

__all__ = ["detect", "import_foreign", "import_hyperfine", "import_phoronix", "load_results"]


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


def load_results(path: Path) -> dict[str, Any]:
    """The results-file data `Store.import_run` takes, from any file `shootout import` accepts.

    A shootout results file (from `shootout export`) is returned as parsed, for the store to
    validate; a Phoronix composite.xml or hyperfine JSON is converted (run id 0, the store
    assigns the real one). Nothing is written here.
    """
    from shootout.store.results import RESULTS_FORMAT, to_results

    raw = read_bytes(Path(path), "results file")
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        doc = None
    if isinstance(doc, dict) and doc.get("format") == RESULTS_FORMAT:
        return doc
    run, trials = import_foreign(path)
    return to_results(run, trials)
