"""No function over 60 lines in the command line (cli/) and the runner: a long one is split
into functions named for what they do."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "shootout"
LIMIT = 60


def long_functions(files: list[Path]) -> list[str]:
    """'path:line name (N lines)' of every function, nested ones too, longer than LIMIT."""
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LIMIT:
                    found.append(f"{path}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_in_cli_or_the_runner_is_over_60_lines() -> None:
    files = sorted((SRC / "cli").glob("*.py")) + [SRC / "measure" / "runner.py"]
    assert len(files) > 2
    assert long_functions(files) == []


def test_the_check_finds_a_long_function_nested_or_not(tmp_path: Path) -> None:
    body = "".join(f"        x{i} = {i}\n" for i in range(LIMIT - 1))
    path = tmp_path / "long.py"
    path.write_text(f"def outer() -> None:\n    def inner() -> None:\n{body}\n\ndef short() -> None:\n    pass\n")
    assert long_functions([path]) == [f"{path}:1 outer (61 lines)"]  # inner: 60 lines, the limit
