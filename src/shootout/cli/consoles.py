"""The command line's two consoles: results to stdout, problems and passing status to stderr."""

from __future__ import annotations

from rich.console import Console

console = Console()
err_console = Console(stderr=True)
