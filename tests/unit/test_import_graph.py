"""The import graph: no circle between modules, and no arrow up the layers.

Every import counts: at the top of a module, inside a function, under TYPE_CHECKING. The
layers, lowest first, are listed below; a module may import its own layer and those under it.
An upward import is allowed only where UPWARD names it with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import shootout

SRC = Path(shootout.__file__).parent

# Lowest first; a module belongs to the layer of its longest matching prefix. Unlisted: "top"
# (configs, request, runner, plan, report, store, experiments, cli), which may import anything.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("shootout.base.errors", "shootout.base.model", "shootout.base.units", "shootout.base.paths", "shootout.execution.elf",
              "shootout.stats", "shootout.execution.fsread", "shootout.base.socs", "shootout.execution.tools")),
    ("system", ("shootout.system",)),
    ("execution", ("shootout.execution",)),
    ("machinery", ("shootout.execution.build", "shootout.net", "shootout.swap", "shootout.userspace", "shootout.vm",
                   "shootout.remote", "shootout.conditions", "shootout.boots", "shootout.arm", "shootout.conditions.machinefacts",
                   "shootout.workloads.cpuclock", "shootout.places")),
    ("targets", ("shootout.places",)),
    ("parts", ("shootout.parts",)),
    ("workloads", ("shootout.workloads",)),
    # Machinery that orchestrates runs or judges with the analysis: above everything it uses.
    ("top", ("shootout.measure.bootcampaign", "shootout.judge.noisefloor", "shootout.conditions.overhead")),
]
TOP = len(LAYERS) - 1

UPWARD: dict[tuple[str, str], str] = {
    ("shootout.conditions.clock", "shootout.places.hosttarget"):
        "the clock loop is compiled on this machine the way every native kernel is (build.compile_c on the host "
        "target); nothing under the targets imports conditions.clock",
}


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
    best, rank = -1, TOP
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    return rank


def upward(edges: dict[str, set[str]]) -> list[str]:
    return [f"{a} ({LAYERS[layer(a)][0]}) imports {b} ({LAYERS[layer(b)][0]})"
            for a in sorted(edges) for b in sorted(edges[a])
            if layer(b) > layer(a) and (a, b) not in UPWARD]


def test_no_module_takes_part_in_an_import_circle() -> None:
    assert cycles(graph()) == []


def test_no_module_imports_a_layer_above_its_own_but_the_listed_exceptions() -> None:
    edges = graph()
    assert upward(edges) == []
    assert [pair for pair in UPWARD if pair[1] not in edges.get(pair[0], set())] == []  # none stale


def test_the_graph_sees_imports_in_functions_and_under_type_checking(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from shootout.places import base\n"
                      "def f():\n    import shootout.measure.runner\n    from shootout.parts.base import Part\n")
    known = {"shootout.places.target": source, "shootout.measure.runner": source, "shootout.parts.base": source, "x.mod": source}
    assert imports_of("x.mod", source, known) == {"shootout.places.target", "shootout.measure.runner", "shootout.parts.base"}


@pytest.mark.parametrize(("edges", "circles"), [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
])
def test_the_circle_finder_finds_circles_and_nothing_else(edges: dict[str, set[str]], circles: list[list[str]]) -> None:
    assert sorted(cycles(edges)) == circles


def test_an_upward_import_is_caught() -> None:
    assert upward({"shootout.userspace.apt": {"shootout.places.chroottarget"}}) == [
        "shootout.userspace.apt (machinery) imports shootout.places.chroottarget (targets)"]
    assert upward({"shootout.places.chroottarget": {"shootout.userspace.apt"}}) == []



if __name__ == "__main__":  # the graph in numbers: python tests/unit/test_import_graph.py
    edges = graph()
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} imports; "
          f"circles: {[len(c) for c in cycles(edges)]}; upward arrows: {len(upward(edges))} "
          f"(+{len(UPWARD)} listed)")
    for line in upward(edges):
        print(" ", line)
