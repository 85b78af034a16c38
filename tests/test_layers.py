"""The layering the README's Layout section promises, checked on the source (no side channels).

- Every module is on a layer of the map (:data:`LAYERS`, the README's Layout section) and imports
  only from its own layer and the ones below, at the top level and inside functions; and no
  modules import each other in a circle (``TYPE_CHECKING`` imports count too, but for the few
  annotation-only references to the agent in :data:`ANNOTATION_ONLY`).
- ``loop/`` depends only downward: never on the agent facade, the turn protocol, the
  invocation orchestrator, durable runs, Temporal or the CLI (not even under TYPE_CHECKING).
- No module writes a private attribute of another module's object, and durable runs keep no
  per-agent state in module globals.
- Temporal imports no private helper of ``loop/`` (it uses the turn protocol's public names).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tether"
ABOVE_LOOP = ("tether.agent", "tether.invocation", "tether.turn", "tether.durable", "tether.temporal", "tether.cli", "tether.testing")


def modules(under: str = "") -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((SRC / under).rglob("*.py")):
        dotted = "tether." + ".".join(path.relative_to(SRC).with_suffix("").parts)
        yield dotted.removesuffix(".__init__"), ast.parse(path.read_text(), str(path))


def imported(module: str, tree: ast.Module) -> Iterator[tuple[str, list[str]]]:
    """(absolute module, imported names) for every import statement in ``tree``."""
    package = module if module.endswith(("tether", "loop", "durable", "temporal", "tools", "cli")) else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            yield base, [alias.name for alias in node.names]


@pytest.mark.parametrize(("module", "tree"), list(modules("loop")), ids=lambda v: v if isinstance(v, str) else "")
def test_the_loop_imports_nothing_above_it(module: str, tree: ast.Module) -> None:
    for name, _ in imported(module, tree):
        assert not name.startswith(ABOVE_LOOP), f"{module} imports {name}"


def test_temporal_imports_no_private_loop_helper() -> None:
    for module, tree in modules("temporal"):
        for name, names in imported(module, tree):
            if name.startswith("tether.loop"):
                private = [n for n in names if n.startswith("_")]
                assert not private, f"{module} imports private {private} from {name}"


def private_writes(tree: ast.AST) -> Iterator[ast.stmt]:
    """Assignments to ``x._name`` where ``x`` is not ``self``/``cls``, outside a class's own
    alternate constructors (a classmethod filling in the instance it just made)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list
        ):
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr.startswith("_")
                    and not target.attr.startswith("__")
                    and not (isinstance(target.value, ast.Name) and target.value.id in ("self", "cls"))
                ):
                    yield node
        yield from private_writes(node)


def test_no_module_writes_a_private_attribute_of_another_object() -> None:
    offenders = [f"{module}:{node.lineno} {ast.unparse(node)}" for module, tree in modules() for node in private_writes(tree)]
    assert offenders == []


def test_durable_runs_keep_no_per_agent_state_in_module_globals() -> None:
    for module, tree in modules("durable"):
        source = ast.unparse(tree)
        assert "WeakKeyDictionary" not in source, module
        assert "._durable" not in source, module


# -- the whole layer map ------------------------------------------------------------------

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "data",
        (
            "tether.types",
            "tether.errors",
            "tether._unicode",
            "tether._json",
            "tether._messages",
            "tether._version",
            "tether._clock",
            "tether._sync",
            "tether._diff",
            "tether._jsonpatch",
            "tether.home",
        ),
    ),
    (
        "run state",
        (
            "tether.loop.state",
            "tether.loop.effects",
            "tether.loop.core",
            "tether.loop.policies",
            "tether.budget",
            "tether.loop.journal",
            "tether.loop.stream",
            "tether.answers",
            "tether.interrupts",
            "tether.metrics",
            "tether.snapshot",
            "tether.checkpoint",
            "tether.result",
            "tether.events",
            "tether._prompt",
            "tether.agent_state",
        ),
    ),
    (
        "services",
        (
            "tether.tools",
            "tether.manifest",
            "tether.effects",
            "tether.hooks",
            "tether.conversation",
            "tether.models",
            "tether.loop.tracing",
            "tether._capture",
        ),
    ),
    ("driver half", ("tether.loop",)),
    ("turn protocol", ("tether.turn", "tether.invocation")),
    (
        "runs",
        (
            "tether.agent",
            "tether.agent_config",
            "tether.agent_runs",
            "tether.agent_snapshots",
            "tether.agent_tool",
            "tether.runnable",
            "tether.durable",
            "tether.multiagent",
            "tether.mcp",
            "tether.telemetry",
        ),
    ),
    ("edges", ("tether.temporal", "tether.inspect", "tether.testing", "tether.cli", "tether.strands", "tether.serve", "tether")),
)
"""The README's Layout section, bottom to top: a module is on the layer of its longest prefix
here, and imports only from its own layer and the ones below."""

ANNOTATION_ONLY: frozenset[tuple[str, str]] = frozenset(
    {
        ("tether.hooks", "tether.agent"),
        ("tether.tools.context", "tether.agent"),
        ("tether.agent_tool", "tether.agent"),
        ("tether.agent_runs", "tether.agent"),
        ("tether.durable.replay", "tether.agent"),
        ("tether.temporal.fork", "tether.temporal.client"),
    }
)
"""References allowed under ``if TYPE_CHECKING:`` only, against the direction of the map or of
the imports: what a hook event, a tool context, an agent tool, the agent's durable-run methods
and the replay engine are handed is the agent, and their annotations name it (they never import
it at run time; the agent imports them). Likewise a Temporal fork is handed the ``TetherClient``
whose ``fork`` method calls it."""


def layer_of(module: str) -> int:
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    assert best is not None, f"{module} is on no layer of the map: add it to LAYERS (and to the README's Layout)"
    return best[0]


def import_graph() -> dict[str, dict[str, bool]]:
    """module -> {imported tether module: imported at run time (top level or deferred)}."""
    packages = {".".join(("tether", *path.relative_to(SRC).parent.parts)) for path in SRC.rglob("__init__.py")}
    trees = dict(modules())
    graph: dict[str, dict[str, bool]] = {}
    for module, tree in trees.items():
        typing_only = {id(node) for block in ast.walk(tree) if _is_type_checking(block) for stmt in block.body for node in ast.walk(stmt)}  # type: ignore[attr-defined]
        here = module if module in packages else module.rsplit(".", 1)[0]
        edges: dict[str, bool] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                while target not in trees and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in trees and target != module and target.startswith("tether"):
                    edges[target] = edges.get(target, False) or id(node) not in typing_only
        graph[module] = edges
    return graph


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def test_every_import_goes_down_the_layer_map() -> None:
    graph = import_graph()
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for module, edges in graph.items()
        for target, runtime in edges.items()
        if layer_of(target) > layer_of(module) and (runtime or (module, target) not in ANNOTATION_ONLY)
    ]
    assert upward == []


def test_no_import_circle() -> None:
    """Among the modules of src/tether, counting imports at the top level, deferred ones inside
    functions and ``TYPE_CHECKING`` ones (but the annotation-only references allowed above)."""
    graph = {m: [t for t, runtime in edges.items() if runtime or (m, t) not in ANNOTATION_ONLY] for m, edges in import_graph().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert circles == []
