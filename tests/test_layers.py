"""The package's layers: its modules' imports (``uno/``, read from the source, ``TYPE_CHECKING``
blocks aside) form no cycle, and the core and the configuration import no component."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "uno"
#: the layers below the components: they may not import them
BASE = ("uno.core", "uno.config")
COMPONENTS = ("uno.cc", "uno.lb", "uno.net", "uno.transport", "uno.topo", "uno.workload",
              "uno.ec", "uno.faults", "uno.fluid", "uno.metrics")  # fmt: skip


def module_names() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The package's modules ``path`` imports, anywhere in it (functions included)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    mods = module_names()
    return {name: imports_of(path, name, set(mods)) for name, path in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            connect(v)
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_core_and_config_import_no_component():
    bad = {
        name: sorted(d for d in deps if d.startswith(COMPONENTS))
        for name, deps in import_graph().items()
        if name.startswith(BASE)
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_checks_see_what_they_look_for():
    """A cycle and a layer breach planted in a graph are found; relative and function-level
    imports are read; TYPE_CHECKING blocks are not."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    graph = import_graph()
    assert "uno.cc.registry" in graph["uno.fluid.kernels"]  # a top-level import
    assert "uno.net.compiled" in graph["uno.packet_engine"]  # an import inside a function
    assert "uno.simulation" not in graph["uno.packet_engine"]  # only under TYPE_CHECKING


#: the most lines a module or a function under uno/ may have
MAX_MODULE_LINES = 1000
MAX_FUNCTION_LINES = 150


def test_rooms_stay_small():
    """No module under uno/ over 1,000 lines and no function over 150 (a room with one purpose
    is one a reader can find their way in)."""
    big_modules, big_functions = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        rel = path.relative_to(PACKAGE.parent)
        if text.count("\n") > MAX_MODULE_LINES:
            big_modules.append(f"{rel}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    big_functions.append(f"{rel}:{node.lineno} {node.name}: {lines} lines")
    assert not big_modules, big_modules
    assert not big_functions, big_functions
