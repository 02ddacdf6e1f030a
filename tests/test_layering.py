"""The package's import structure: one-way layers and no import cycle, read from the code's own import statements.

``nn`` holds the implementations the course is about and imports nothing else of the package, so a reader can take
it alone. Above it each layer imports only layers below it:

    nn, i18n  <  lab  <  viz, cli_args  <  chapters  <  recipes  <  course  <  cli  <  bench

``lab`` is the shared bench, ``viz`` the shared style; ``chapters`` holds one package per chapter, each importing only
*earlier* chapters; ``recipes`` is the one table of every ``vrs-edu reproduce`` recipe. A notebook imports its own
chapter's package and the shared layers, never another chapter's (chapter 09, which gathers the others, excepted).

Every import counts, also one inside a function (a deferred import still ties the two modules together: it only
hides the cycle from Python until the function runs).
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYER = {"__init__": 0, "nn": 0, "nbval_stderr": 0, "i18n": 0, "lab": 1, "viz": 2, "cli_args": 2, "chapters": 3, "recipes": 4,
         "course": 5, "cli": 6, "bench": 7}
NOTEBOOKS = ROOT / "notebooks"
LAB_MAX_LINES = 5000   # the shared bench stays small (issue "A house by chapter")


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


def test_the_graph_sees_absolute_deferred_and_module_imports():
    graph = import_graph()
    assert "vrs_edu.nn.layers" in graph["vrs_edu.nn.model"]                   # from vrs_edu.nn.layers import ...
    assert "vrs_edu.course.book" in graph["vrs_edu.course.sphinx.conf"]       # from vrs_edu.course.book import ...
    assert "vrs_edu.lab.distributed" in graph["vrs_edu.lab.parallel"]         # from vrs_edu.lab import distributed,
    #                                                                           in a function


def test_the_package_imports_absolutely():
    """One way to name a module: ``from vrs_edu.lab.train import train``, never ``from .train import train``."""
    relative = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in sorted((ROOT / "vrs_edu").rglob("*.py"))
                for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                if isinstance(n, ast.ImportFrom) and n.level]
    assert not relative, relative


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


def _chapter(module: str) -> int | None:
    parts = module.split(".")
    return int(parts[2][2:4]) if len(parts) > 2 and parts[1] == "chapters" and parts[2][:2] == "ch" else None


def test_a_chapter_package_imports_only_earlier_chapters():
    graph = import_graph()
    forward = [f"{m} -> {d}" for m, deps in graph.items() for d in deps
               if _chapter(m) is not None and _chapter(d) is not None and _chapter(d) > _chapter(m)]
    assert not forward, forward


def test_the_chapter_finder_on_known_names():
    assert _chapter("vrs_edu.chapters.ch04_bank_of_values.recipe") == 4
    assert _chapter("vrs_edu.chapters") is None and _chapter("vrs_edu.lab.train") is None


def notebook_chapters(path: Path) -> set[int]:
    """The chapter packages a notebook's code imports (``from vrs_edu.chapters.chNN_… import …``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        found |= {c for c in map(_chapter, names) if c is not None}
    return found


def test_a_notebook_imports_only_its_own_chapter_package():
    """What a chapter reads from earlier ones it names in its own ``previous_chapters.py``; 09 gathers them all."""
    sources = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
    assert len(sources) >= 10
    others = {p.name: sorted(notebook_chapters(p) - {int(p.name[:2])}) for p in sources if not p.name.startswith("09")}
    assert not any(others.values()), {n: c for n, c in others.items() if c}


def test_the_notebook_check_sees_another_chapter(tmp_path):
    nb = tmp_path / "03_x.py"
    nb.write_text("# %%\nfrom vrs_edu.chapters.ch04_bank_of_values import recipe\nfrom vrs_edu.lab import train\n")
    assert notebook_chapters(nb) == {4}


def test_every_chapter_has_its_package():
    packages = {p.name[:4] for p in (ROOT / "vrs_edu" / "chapters").glob("ch[0-9][0-9]_*") if p.is_dir()}
    assert packages == {f"ch{p.name[:2]}" for p in NOTEBOOKS.glob("[0-9][0-9]_*.py")}


def test_the_shared_bench_stays_small():
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "vrs_edu" / "lab").rglob("*.py"))
    assert lines <= LAB_MAX_LINES, f"vrs_edu/lab holds {lines} lines: move what one chapter uses into its package"


DYNAMIC = {("importlib", "import_module"), ("pkgutil", "iter_modules"), ("pkgutil", "walk_packages")}
# The grader loads the learner's kernel helpers and the references it names by module path: dynamic by design.
DYNAMIC_ALLOWED = {"vrs_edu/course/assignments/kernel.py", "vrs_edu/course/assignments/references.py"}


def dynamic_imports(path: Path) -> list[int]:
    """Lines of ``path`` that load a module by a computed name (``importlib.import_module``, ``__import__``,
    ``pkgutil``) — an import the layering cannot see."""
    hits = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in ("__import__", "import_module"):
                hits.append(node.lineno)
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (f.value.id, f.attr) in DYNAMIC:
                hits.append(node.lineno)
    return hits


def test_no_dynamic_imports_outside_the_grader_kernel():
    found = {str(p.relative_to(ROOT)): dynamic_imports(p) for p in sorted((ROOT / "vrs_edu").rglob("*.py"))}
    found = {p: lines for p, lines in found.items() if lines and p not in DYNAMIC_ALLOWED}
    assert not found, found


def test_the_dynamic_import_finder_on_known_code(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import importlib, pkgutil\nimportlib.import_module('x')\n__import__('y')\n"
                 "list(pkgutil.iter_modules(['.']))\nimport importlib.util\nimportlib.util.find_spec('z')\n")
    assert dynamic_imports(f) == [2, 3, 4]


def test_short_swa_over_depth_has_a_module_of_its_own():
    """The article's operator for the depth axis, readable alone (``vrs_edu.nn.shortswa``)."""
    from vrs_edu.nn import shortswa

    assert {"short_swa", "depth_short_swa", "ShortSWADepth", "depth_window_mask"} <= set(vars(shortswa))
    assert all(len((ROOT / "vrs_edu" / "nn" / f).read_text().splitlines()) < 400
               for f in ("depth.py", "depth_mixer.py", "depth_weights.py", "depth_routers.py", "depth_attention.py",
                         "shortswa.py"))


# Imports stay at the top of a module, where a reader sees what it depends on, except the optional heavy ones
# (installed with the real-model extra; a module that needs them says so where it loads them).
OPTIONAL = {"transformers", "gguf", "accelerate", "playwright", "IPython", "jupytext"}
# The grader's code imports where it runs: in the learner's kernel, a sandboxed child process or one sub-command.
LOCAL_IMPORTS_ALLOWED = ("vrs_edu/course/assignments/",)


def function_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import inside a function of ``path`` whose module is not :data:`OPTIONAL`."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                    if (module or "").split(".")[0] not in OPTIONAL:
                        found.append((node.lineno, module or "."))
    return found


def test_imports_are_at_the_top_of_each_module():
    found = {str(p.relative_to(ROOT)): function_imports(p) for p in sorted((ROOT / "vrs_edu").rglob("*.py"))}
    found = {p: f for p, f in found.items() if f and not p.startswith(LOCAL_IMPORTS_ALLOWED)}
    assert not found, found


def test_the_function_import_finder_on_known_code(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import math\n\ndef f():\n    import json\n    from transformers import AutoModel\n"
                 "    if True:\n        from vrs_edu.lab import train\n")
    assert function_imports(f) == [(4, "json"), (7, "vrs_edu.lab")]
