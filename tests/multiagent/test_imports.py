"""The modules of ``tether.multiagent`` import each other one way only: no import circle, counting
every import statement (at the top, deferred inside a function, or under TYPE_CHECKING)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "tether"


def imports_within(package: Path, dotted: str) -> dict[str, set[str]]:
    """Module name -> the modules of the same package it imports (every import statement)."""
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {}
    for name in sorted(names):
        tree = ast.parse((package / f"{name}.py").read_text())
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                found |= {node.module} if node.module else {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(dotted + "."):
                found.add(node.module.removeprefix(dotted + ".").split(".")[0])
        graph[name] = (found & names) - {name}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """An import circle of ``graph`` as a path of module names, or None."""
    state = dict.fromkeys(graph, 0)
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for other in sorted(graph[name]):
            if state[other] == 1:
                return [*path[path.index(other) :], other]
            if state[other] == 0 and (found := visit(other)):
                return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if state[name] == 0 and (found := visit(name)):
            return found
    return None


def test_no_import_circle_inside_multiagent() -> None:
    graph = imports_within(SRC / "multiagent", "tether.multiagent")
    assert {"base", "results", "state", "graph", "swarm", "nodes"} <= set(graph)
    assert circle(graph) is None, " -> ".join(circle(graph) or [])
