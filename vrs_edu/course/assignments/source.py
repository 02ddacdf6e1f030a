"""Assignment sources: one jupytext ``py:percent`` file per assignment, the only file a teacher edits.

The sources hold the worked solutions and the hidden tests, so they are the teacher's and are not part of the package
students install: they live in the course's repository, ``data/assignments/sources/`` (:data:`SOURCES`, the default
of every ``vrs-edu assignments`` command in a checkout), or wherever a teacher keeps them (``--sources DIR``).

A source is an ordinary notebook with three kinds of marked cells (jupytext cell-header metadata):

* ``# %% tags=["solution"]`` — a code cell holding one or more *solution regions*::

      def causal_pattern(q, k):
          ### BEGIN SOLUTION
          ### HINT: scale the scores by 1/sqrt(Dh) before the mask and the softmax
          scores = ...
          ### END SOLUTION

  The student version replaces each region by ``raise NotImplementedError("<the HINT lines>")`` at the same
  indentation; the solution and grader versions keep the code and drop the marker lines.
* ``# %% tags=["public-test"] check="pattern_public" points=1`` — a test the learner sees and runs.
* ``# %% tags=["hidden-test"] check="pattern_hidden" points=2`` — a test only the grader has; it is removed from
  the student and solution versions, metadata included.

A test cell *passes* when it raises nothing and its last line evaluates to ``True``. The checkers in
:mod:`vrs_edu.course.exercises` return True/False and print a ``✗ …`` line with the likely mistake; the grader
copies that line (or the error a cell raised, e.g. an ``assert`` message) into the report. Hidden tests call the
checkers with other seeds, ``edges=True`` and ``quiet=True``. Every ``check`` name is unique within its assignment and doubles as the
cell id, so a grader can recognise the learner's copy of a test cell.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
from nbformat import NotebookNode

_CHECKOUT = Path(__file__).resolve().parents[3]
# The teacher's folder in a checkout of the course; None where the package is installed without one (a wheel).
TEACHER_SOURCES = _CHECKOUT / "data" / "assignments" / "sources"
SOURCES: Path | None = TEACHER_SOURCES if TEACHER_SOURCES.is_dir() else None
NO_SOURCES = ("this installation of vrs_edu has no assignment sources (the package ships without the solutions and "
              "hidden tests): pass --sources DIR, the teacher's folder (data/assignments/sources in the course's "
              "repository)")

SOLUTION, PUBLIC, HIDDEN = "solution", "public-test", "hidden-test"
TEST_TAGS = (PUBLIC, HIDDEN)
BEGIN, END, HINT = "### BEGIN SOLUTION", "### END SOLUTION", "### HINT:"
_CHECK_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
NOT_BOOLEAN_CALLS = {"print", "display"}   # a test cell's last line that shows something rather than returning it


@dataclass(frozen=True)
class Assignment:
    """One assignment: its name (the source's file stem, e.g. ``01_residual_stream``) and source path."""

    name: str
    path: Path

    def read(self) -> NotebookNode:
        """The source as a notebook, validated (see :func:`validate`)."""
        nb = jupytext.read(self.path)
        validate(nb, self.name)
        return nb

    @property
    def title(self) -> str:
        first = next((c for c in jupytext.read(self.path).cells if c.cell_type == "markdown"), None)
        return first.source.strip().splitlines()[0].lstrip("# ").strip() if first else self.name


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def is_test(cell) -> bool:
    return any(t in TEST_TAGS for t in tags(cell))


def discover(sources: str | Path | None = SOURCES) -> list[Assignment]:
    """Every ``NN_name.py`` in ``sources`` (default: the teacher's folder of this checkout), in name order.

    Raises:
        FileNotFoundError: the folder is missing, or ``sources`` is None (an installation without the teacher's
            folder: the message says to pass ``--sources``).
    """
    if sources is None:
        raise FileNotFoundError(NO_SOURCES)
    sources = Path(sources)
    if not sources.is_dir():
        raise FileNotFoundError(f"assignment sources folder {sources} does not exist")
    return [Assignment(p.stem, p) for p in sorted(sources.glob("[0-9][0-9]_*.py"))]


def find(name: str, sources: str | Path | None = SOURCES) -> Assignment:
    """The assignment called ``name``. Raises ValueError listing the known names when there is none."""
    known = discover(sources)
    for a in known:
        if a.name == name:
            return a
    raise ValueError(f"no assignment named {name!r}; known: {', '.join(a.name for a in known) or 'none'}")


def validate(nb: NotebookNode, name: str) -> None:
    """Raise ValueError, naming the assignment and cell, when a source breaks the rules above: markers outside a
    ``solution`` cell or unbalanced, a solution cell without a region, a test cell without a unique ``check`` name,
    positive ``points``, or a final expression to evaluate."""
    seen: set[str] = set()
    for i, cell in enumerate(nb.cells):
        where = f"assignment {name}, cell {i + 1}"   # counted from 1, as the grader's reports count them
        t = tags(cell)
        has_markers = BEGIN in cell.source or END in cell.source
        if has_markers and (SOLUTION not in t or cell.cell_type != "code"):
            raise ValueError(f"{where}: solution markers in a cell not tagged {SOLUTION!r}")
        if SOLUTION in t:
            solution_regions(cell.source, where)  # raises on unbalanced markers or no region
        if sum(x in t for x in (SOLUTION, PUBLIC, HIDDEN)) > 1:
            raise ValueError(f"{where}: a cell is either a solution or a test, got tags {t}")
        if not is_test(cell):
            continue
        if cell.cell_type != "code":
            raise ValueError(f"{where}: test tags belong on code cells")
        check = cell.metadata.get("check")
        if not isinstance(check, str) or not _CHECK_NAME.fullmatch(check):
            raise ValueError(f"{where}: a test cell needs check=\"name\" (lower-case letters, digits, _ or -), "
                             f"got {check!r}")
        if check in seen:
            raise ValueError(f"{where}: check name {check!r} is used twice")
        seen.add(check)
        points = cell.metadata.get("points")
        if not isinstance(points, (int, float)) or isinstance(points, bool) or points <= 0:
            raise ValueError(f"{where}: a test cell needs points=<positive number>, got {points!r}")
        try:
            body = ast.parse(cell.source).body
        except SyntaxError as e:
            raise ValueError(f"{where} ({check}): the test cell is not valid Python: {e.msg} at line {e.lineno}") \
                from None
        if not body or not isinstance(body[-1], ast.Expr):
            raise ValueError(f"{where} ({check}): a test cell must end with an expression that evaluates to True on "
                             "success")
        last = body[-1].value
        if (isinstance(last, ast.Call) and isinstance(last.func, ast.Name) and last.func.id in NOT_BOOLEAN_CALLS) \
                or (isinstance(last, (ast.Constant, ast.JoinedStr)) and not isinstance(getattr(last, "value", None),
                                                                                     bool)):
            raise ValueError(f"{where} ({check}): the test cell ends with {ast.unparse(last)[:60]}, which is not a "
                             "boolean (the grader would read None or a text as a failure for everyone): end it with "
                             "the check's True/False, e.g. the checker's call")
    if not any(PUBLIC in tags(c) for c in nb.cells):
        raise ValueError(f"assignment {name}: no {PUBLIC!r} cell")


def solution_regions(source: str, where: str = "") -> list[tuple[int, int]]:
    """(begin, end) line indices of every solution region. Raises ValueError on nesting, a missing END, or none."""
    regions, start = [], None
    for i, line in enumerate(source.splitlines()):
        s = line.strip()
        if s.startswith(BEGIN):
            if start is not None:
                raise ValueError(f"{where}: nested {BEGIN} at line {i + 1}")
            start = i
        elif s.startswith(END):
            if start is None:
                raise ValueError(f"{where}: {END} without {BEGIN} at line {i + 1}")
            regions.append((start, i))
            start = None
    if start is not None:
        raise ValueError(f"{where}: {BEGIN} at line {start + 1} has no {END}")
    if not regions:
        raise ValueError(f"{where}: a {SOLUTION!r} cell needs at least one {BEGIN} … {END} region")
    return regions
