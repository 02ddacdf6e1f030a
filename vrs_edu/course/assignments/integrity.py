"""Is a graded function the learner's own code? A static reading (``ast``) of the learner's cells.

The course ships the reference implementation of every graded function (``vrs_edu.nn``, re-exported by the
checkers' modules), so ``from vrs_edu.nn.attention import attention_pattern`` is a complete, correct "solution".
This module finds such uses: an import from ``vrs_edu`` that the handed-out student copy does not already make
(the *baseline*: its set-up cells legitimately import ``setup_notebook``, ``TinyGPT``, ``rms_norm``...), and which
graded function depends on it — bound directly to it, or whose body (or a helper of the learner's that it calls)
names it, imports from ``vrs_edu`` or spells out ``"vrs_edu"`` in a string (``importlib.import_module(...)``).

It also lists statements that rebind an attribute of an imported module (``torch.allclose = ...``,
``setattr(checks, ...)``): they cannot change a grade (the checks run in the grader's own process), but a teacher
wants to know.

A static reading is not a proof: code built at run time (``exec``, ``eval`` of a string assembled from pieces) can
hide from it. The README's teacher's guide says so.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

PACKAGE = "vrs_edu"


def parse_cell(source: str) -> ast.Module | None:
    """The cell's syntax tree, IPython magics and shell escapes blanked out; None when it does not parse."""
    lines = [("pass" if line.lstrip().startswith(("%", "!")) else line) for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return None


def imports(tree: ast.AST):
    """(node, module, name or None, bound alias) for every import in ``tree``; name None for ``import module``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node, a.name, None, a.asname or a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                yield node, node.module, a.name, a.asname or a.name


def _is_package(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def baseline(cells) -> set[tuple[str, str | None]]:
    """The ``vrs_edu`` imports the handed-out copy makes itself: ``{(module, name)}`` (name None: a module)."""
    out = set()
    for cell in cells:
        tree = parse_cell(cell.source) if cell.cell_type == "code" else None
        for _, module, name, _ in imports(tree) if tree else ():
            if _is_package(module):
                out.add((module, name))
    return out


def graded_names(cells) -> list[str]:
    """The top-level functions the solution cells define: what the checks call."""
    names = []
    for cell in cells:
        tree = parse_cell(cell.source)
        for node in tree.body if tree else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in names:
                names.append(node.name)
    return names


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 — a description only
        return "?"


@dataclass
class Findings:
    reference: dict[str, list[str]] = field(default_factory=dict)   # graded name -> where it uses the reference
    imports: list[str] = field(default_factory=list)                # every import of the course's code, described
    rebinds: list[str] = field(default_factory=list)                # statements that rebind a module's attribute


def inspect(cells, allowed: set[tuple[str, str | None]], graded: list[str]) -> Findings:
    """Read the learner's code cells (``cells``: (cell number, source) pairs, 1-based as a teacher counts them)."""
    found = Findings()
    trees = [(n, src.splitlines(), t) for n, src in cells if (t := parse_cell(src)) is not None]
    forbidden: dict[str, str] = {}            # alias bound by a non-baseline course import -> where
    module_aliases: set[str] = set()
    for n, lines, tree in trees:
        for node, module, name, alias in imports(tree):
            if name is None:
                module_aliases.add(alias)
            if _is_package(module) and (module, name) not in allowed:
                where = f"cell {n}, line {node.lineno}: {lines[node.lineno - 1].strip()[:100]}"
                forbidden.setdefault(alias, where)
                if where not in found.imports:
                    found.imports.append(where)
    # Top-level bindings of a graded name to the reference (an import, or an assignment from a forbidden alias).
    functions: dict[str, ast.AST] = {}
    for n, lines, tree in trees:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[node.name] = node
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for _, _, _, alias in imports(node):
                    if alias in graded and alias in forbidden:
                        found.reference.setdefault(alias, []).append(forbidden[alias])
                        functions.pop(alias, None)
            elif isinstance(node, ast.Assign):
                uses = {_root(x) for x in ast.walk(node.value) if isinstance(x, ast.Name)} & set(forbidden)
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id in graded and uses:
                        found.reference.setdefault(target.id, []).append(
                            f"cell {n}, line {node.lineno}: {lines[node.lineno - 1].strip()[:100]}")
            for x in ast.walk(node):
                _note_rebind(x, module_aliases, n, lines, found)

    def direct(fn: ast.AST) -> list[str]:
        out = []
        for x in ast.walk(fn):
            if isinstance(x, ast.Name) and x.id in forbidden:
                out.append(f"uses {x.id} ({forbidden[x.id]})")
            elif isinstance(x, (ast.Import, ast.ImportFrom)) and any(_is_package(m) for _, m, _, _ in imports(x)):
                out.append(f"imports from {PACKAGE} inside the function (line {x.lineno})")
            elif isinstance(x, ast.Constant) and isinstance(x.value, str) and PACKAGE in x.value:
                out.append(f"names {PACKAGE} in a string (line {x.lineno})")
        return list(dict.fromkeys(out))

    def calls(fn: ast.AST) -> set[str]:
        return {x.id for x in ast.walk(fn) if isinstance(x, ast.Name) and x.id in functions and x.id != fn.name}

    tainted = {name: direct(fn) for name, fn in functions.items()}
    changed = True
    while changed:  # a helper of the learner's that uses the reference taints every function that calls it
        changed = False
        for name, fn in functions.items():
            for helper in calls(fn):
                if tainted[helper] and not tainted[name]:
                    tainted[name] = [f"calls {helper}, which " + tainted[helper][0]]
                    changed = True
    for name in graded:
        if tainted.get(name):
            found.reference.setdefault(name, []).extend(tainted[name])
    return found


def _note_rebind(node: ast.AST, modules: set[str], n: int, lines: list[str], found: Findings) -> None:
    targets = []
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
            and node.args and _root(node.args[0]) in modules:
        found.rebinds.append(f"cell {n}, line {node.lineno}: {lines[node.lineno - 1].strip()[:100]}")
        return
    for t in targets:
        if isinstance(t, ast.Attribute) and _root(t) in modules:
            found.rebinds.append(f"cell {n}, line {node.lineno}: {_dotted(t)} rebound")
