"""The import graph: no circle between modules, and no arrow up the layers.

Every import counts: at the top of a module, inside a function, under TYPE_CHECKING. The
layers, lowest first, are listed below; a module may import its own layer and those under it.
No exception is listed: a module that needs something above its layer is in the wrong folder.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import shootout

SRC = Path(shootout.__file__).parent

# Lowest first: every folder under src/shootout is in exactly one layer, and a module's layer is
# its folder's. Nothing is loose in src/shootout but __init__ and __main__ (the entry point, above
# everything). Folders in one layer may import each other; circles are caught below.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("base",)),
    ("stats", ("stats",)),
    ("store", ("store", "importers")),
    ("execution", ("execution",)),
    ("system", ("system",)),
    ("machinery", ("arm", "boots", "conditions", "counters", "images", "net", "remote", "storage", "swap", "userspace",
                   "vm")),
    ("places", ("places",)),
    ("parts", ("parts",)),
    ("workloads", ("workloads",)),
    ("configs", ("configs",)),
    ("judge", ("judge",)),
    ("measure", ("measure",)),
    ("report", ("report",)),
    ("experiments", ("experiments",)),
    ("request", ("request",)),
    ("cli", ("cli",)),
]
TOP = len(LAYERS)  # `python -m shootout` (__main__), above everything; the package's __init__ (its
# version) is below everything


def modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The shootout modules `name` imports anywhere in its file. `from P import M` of a submodule
    M is an import of P.M (P's __init__ runs first for any import of P.M, so it is not an edge)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in known:
                    target = target.rpartition(".")[0]
                found.add(target)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(root: str) -> None:
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))

    for name in sorted(edges):
        if name not in index:
            visit(name)
    return found


def layer(module: str) -> int:
    """The rank of the module's folder; KeyError for a module in no listed folder."""
    if module in ("shootout", "shootout.__main__"):
        return -1 if module == "shootout" else TOP
    folder = module.split(".")[1]
    return next(rank for rank, (_, folders) in enumerate(LAYERS) if folder in folders)


def layer_name(module: str) -> str:
    rank = layer(module)
    return LAYERS[rank][0] if 0 <= rank < TOP else module


def upward(edges: dict[str, set[str]]) -> list[str]:
    return [f"{a} ({layer_name(a)}) imports {b} ({layer_name(b)})"
            for a in sorted(edges) for b in sorted(edges[a]) if layer(b) > layer(a)]


def test_no_module_takes_part_in_an_import_circle() -> None:
    assert cycles(graph()) == []


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert upward(graph()) == []


def test_every_module_sits_in_one_listed_folder_and_none_is_loose() -> None:
    folders = [folder for _, names in LAYERS for folder in names]
    assert len(folders) == len(set(folders))
    present = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert present == set(folders)
    assert sorted(p.name for p in SRC.glob("*.py")) == ["__init__.py", "__main__.py"]
    for module in modules():
        layer(module)  # KeyError for a module outside the listed folders


def documented_layers() -> list[tuple[str, tuple[str, ...]]]:
    """The layer table of docs/contributing.md's section on the code: (layer, folders) per row."""
    text = (SRC.parents[1] / "docs" / "contributing.md").read_text()
    section = text.split("## The code, for contributors", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| layer")]
    return [(cells[0], tuple(f.strip("`/ ") for f in cells[1].split(",")))
            for cells in ([c.strip() for c in row.strip("|").split("|")] for row in rows)]


def test_the_documented_layer_table_is_this_tests_table() -> None:
    assert documented_layers() == LAYERS


def test_the_graph_sees_imports_in_functions_and_under_type_checking(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from shootout.places import target\n"
                      "def f():\n    import shootout.measure.runner\n    from shootout.parts.part import Part\n")
    known = {"shootout.places.target": source, "shootout.measure.runner": source, "shootout.parts.part": source,
             "x.mod": source}
    assert imports_of("x.mod", source, known) == {"shootout.places.target", "shootout.measure.runner", "shootout.parts.part"}


@pytest.mark.parametrize(("edges", "circles"), [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
])
def test_the_circle_finder_finds_circles_and_nothing_else(edges: dict[str, set[str]], circles: list[list[str]]) -> None:
    assert sorted(cycles(edges)) == circles


def test_an_upward_import_is_caught() -> None:
    assert upward({"shootout.userspace.apt": {"shootout.places.chroot"}}) == [
        "shootout.userspace.apt (machinery) imports shootout.places.chroot (places)"]
    assert upward({"shootout.places.chroot": {"shootout.userspace.apt"}}) == []



if __name__ == "__main__":  # the graph in numbers: python tests/unit/test_import_graph.py
    edges = graph()
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} imports; "
          f"circles: {[len(c) for c in cycles(edges)]}; upward arrows: {len(upward(edges))}")
    for line in upward(edges):
        print(" ", line)
