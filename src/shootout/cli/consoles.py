"""The command line's two consoles: results to stdout, problems and passing status to stderr."""

from __future__ import annotations

import textwrap

from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def say(text: str, indent: int = 0, hanging: int = 2, on: Console | None = None) -> None:
    """Plain text wrapped at spaces to the console's width (80 into a pipe), indented by
    `indent`, the lines after the first by `hanging` more. A word is never cut: one wider than
    a line (a long path) stands whole on a line of its own."""
    lines = textwrap.wrap(text, (on or console).width, initial_indent=" " * indent,
                          subsequent_indent=" " * (indent + hanging), break_long_words=False, break_on_hyphens=False)
    for line in lines:
        (on or console).print(line, soft_wrap=True, markup=False, highlight=False)
