"""The package's import structure: one-way layers and no import cycle, read from the code's own import statements.

``nn`` holds the implementations the course is about and imports nothing else of the package, so a reader can take
it alone. Above it each layer imports only layers below it:

    nn  <  lab  <  viz, cli_args  <  cli  <  course  <  bench

Every import counts, also one inside a function (a deferred import still ties the two modules together: it only
hides the cycle from Python until the function runs).
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYER = {"__init__": 0, "nn": 0, "nbval_stderr": 0, "lab": 1, "viz": 2, "cli_args": 2, "cli": 3, "course": 4, "bench": 5}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from .x import y`` counts as ``x.y`` when that is a module)."""
    paths = {module_name(p, root): p for p in sorted((root / "vrs_edu").rglob("*.py"))}
    graph = {}
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                targets |= {f"{module}.{a.name}" if f"{module}.{a.name}" in paths else module for a in node.names}
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_cycle_finder_on_known_graphs():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_graph_sees_relative_absolute_and_deferred_imports():
    graph = import_graph()
    assert "vrs_edu.nn.layers" in graph["vrs_edu.nn.model"]                   # from .layers import ...
    assert "vrs_edu.course.book" in graph["vrs_edu.course.sphinx.conf"]       # from vrs_edu.course.book import ...
    assert "vrs_edu.lab.distributed" in graph["vrs_edu.lab.parallel"]         # from . import distributed, in a function


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_nn_imports_nothing_else_of_the_package():
    graph = import_graph()
    outside = {m: sorted(d for d in deps if not d.startswith("vrs_edu.nn")) for m, deps in graph.items()
               if m.startswith("vrs_edu.nn")}
    assert not any(outside.values()), {m: d for m, d in outside.items() if d}


def test_every_layer_imports_only_layers_below_it():
    graph = import_graph()
    assert {_layer(m) for m in graph} <= set(LAYER), f"a new top-level module: give it a layer in {LAYER}"
    upward = [f"{m} -> {d}" for m, deps in graph.items() for d in deps
              if _layer(d) != _layer(m) and LAYER[_layer(d)] >= LAYER[_layer(m)]]
    assert not upward, upward


def test_nn_draws_nothing():
    """``nn`` holds models, not figures: no module of it imports a plotting or widget library (plots and widgets
    live in ``viz``, the measurements they show in ``lab``)."""
    drawing = {"matplotlib", "seaborn", "ipywidgets", "IPython", "plotly"}
    found = {}
    for path in sorted((ROOT / "vrs_edu" / "nn").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            hits = sorted(n for n in names if n.split(".")[0] in drawing)
            if hits:
                found.setdefault(path.name, []).extend(hits)
    assert not found, found
