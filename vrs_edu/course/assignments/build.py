"""Build the three copies of every assignment from its source, with nbconvert preprocessors.

* ``student``  — solution regions replaced by ``raise NotImplementedError("<hint>")``, hidden tests removed
  (TagRemovePreprocessor), no outputs. This is what learners get.
* ``solution`` — the worked solution with the public tests; hidden tests removed, so it can be released after the
  deadline without giving the hidden tests away.
* ``grader``   — the solution with public *and* hidden tests: the teacher's reference. (Grading itself rebuilds
  this copy from the source, so it never depends on generated files.)

The build is deterministic — cell ids come from the source (``cell-NN``, or the test's ``check`` name), metadata is
reduced to a fixed set of keys, there are no outputs or timestamps — so rebuilding an unchanged source reproduces the
committed files byte for byte, and ``vrs-edu assignments build --check`` can guard that in CI.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ClearMetadataPreprocessor, ClearOutputPreprocessor, Preprocessor, \
    TagRemovePreprocessor
from nbformat import NotebookNode
from traitlets import Bool

from vrs_edu.course.assignments.source import (BEGIN, END, HIDDEN, HINT, SOLUTION, SOURCES, Assignment, discover,
                                               is_test, solution_regions, tags)

COPIES = ("student", "solution", "grader")
_CHECKOUT = Path(__file__).resolve().parents[3]
# In a checkout of the course: data/assignments (committed). Installed elsewhere: ./assignments.
DEFAULT_OUT = _CHECKOUT / "data" / "assignments" if (_CHECKOUT / "pyproject.toml").exists() else Path("assignments")
CELL_METADATA = {"tags", "check", "points"}   # everything else (jupytext layout hints, ...) is dropped
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
DEFAULT_HINT = "write your solution here"


def strip_solutions(source: str, stub: bool, hints: list[list[str]] | None = None) -> str:
    """Remove the solution markers of one cell. ``stub=True`` replaces each region by a ``raise
    NotImplementedError(hint)`` line at the region's indentation (hint = its ``### HINT:`` lines, or the lines of
    ``hints``, one list per region in order: a translation's); ``stub=False`` keeps the region's code and drops only
    the marker and hint lines. Raises ValueError when ``hints`` does not hold one list per region."""
    out: list[str] = []
    region: list[str] | None = None
    hint: list[str] = []
    indent = ""
    regions = 0
    for line in source.splitlines():
        s = line.strip()
        if s.startswith(BEGIN):
            region, hint, indent = [], [], line[: len(line) - len(line.lstrip())]
        elif s.startswith(END):
            if stub:
                given = hints[regions] if hints is not None and regions < len(hints) else None
                out += _stub(indent, given or hint or [DEFAULT_HINT])
            else:
                out.extend(region or [])
            region = None
            regions += 1
        elif region is not None:
            if s.startswith(HINT):
                hint.append(s[len(HINT):].strip())
            else:
                region.append(line)
        else:
            out.append(line)
    if hints is not None and len(hints) != regions:
        raise ValueError(f"hints: expected one per solution region ({regions}), got {len(hints)}")
    return "\n".join(out)


def solution_hints(source: str) -> list[list[str]]:
    """The ``### HINT:`` lines of each solution region of one cell, in order (an empty list: a region without). The
    regions are the ones :func:`.source.solution_regions` finds (which raises ValueError on unbalanced markers)."""
    lines = [line.strip() for line in source.splitlines()]
    return [[s[len(HINT):].strip() for s in lines[begin + 1:end] if s.startswith(HINT)]
            for begin, end in solution_regions(source)]


def _stub(indent: str, hint: list[str]) -> list[str]:
    """``raise NotImplementedError("hint")``; a hint of several lines becomes one string literal per line."""
    parts = [json.dumps(h + (" " if i < len(hint) - 1 else ""), ensure_ascii=False) for i, h in enumerate(hint)]
    if len(parts) == 1:
        return [f"{indent}raise NotImplementedError({parts[0]})"]
    return ([f"{indent}raise NotImplementedError("] + [f"{indent}    {p}" for p in parts[:-1]]
            + [f"{indent}    {parts[-1]})"])


class ClearSolutions(Preprocessor):
    """Strip the solution regions of ``solution``-tagged cells (see :func:`strip_solutions`)."""

    stub = Bool(True, help="replace each region by a NotImplementedError stub (student copy)").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if SOLUTION in tags(cell):
            cell.source = strip_solutions(cell.source, stub=self.stub)
        return cell, resources


class StableIds(Preprocessor):
    """Give every cell an id derived from the source: the ``check`` name for tests, ``cell-NN`` otherwise, and keep
    only the metadata keys in :data:`CELL_METADATA` (markdown cells included)."""

    def preprocess_cell(self, cell, resources, index):
        cell.id = cell.metadata["check"] if is_test(cell) else f"cell-{index:02d}"
        cell.metadata = NotebookNode({k: v for k, v in cell.metadata.items() if k in CELL_METADATA})
        return cell, resources


def make_copies(assignment: Assignment) -> dict[str, NotebookNode]:
    """The student, solution and grader notebooks of one assignment, in memory."""
    source = assignment.read()
    source, _ = StableIds().preprocess(source, {})
    source.metadata = NotebookNode({"kernelspec": KERNELSPEC})
    out = {}
    for kind in COPIES:
        nb = copy.deepcopy(source)
        if kind != "grader":
            nb, _ = TagRemovePreprocessor(remove_cell_tags={HIDDEN}).preprocess(nb, {})
        nb, _ = ClearSolutions(stub=kind == "student").preprocess(nb, {})
        nb, _ = ClearOutputPreprocessor().preprocess(nb, {})
        nb, _ = ClearMetadataPreprocessor(preserve_cell_metadata_mask=CELL_METADATA,
                                          preserve_nb_metadata_mask={"kernelspec"}).preprocess(nb, {})
        nb.metadata["vrs_edu"] = {"assignment": assignment.name, "copy": kind}
        nbformat.validate(nb)
        out[kind] = nb
    return out


def notebook_bytes(nb: NotebookNode) -> bytes:
    """The exact bytes written for ``nb`` (nbformat's JSON: sorted keys, one-space indent, final newline)."""
    text = nbformat.writes(nb)
    return (text if text.endswith("\n") else text + "\n").encode()


def write_if_changed(path: Path, fresh: bytes, check: bool) -> str:
    """Write ``fresh`` to ``path`` unless it holds it already; with ``check``, write nothing. Returns the status:
    ``unchanged``, ``written``, or (``check``) ``missing`` / ``stale``."""
    old = path.read_bytes() if path.exists() else None
    if old == fresh:
        return "unchanged"
    if check:
        return "missing" if old is None else "stale"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(fresh)
    return "written"


def output_path(out_dir: Path, kind: str, name: str) -> Path:
    return Path(out_dir) / kind / f"{name}.ipynb"


def build(out_dir: str | Path = DEFAULT_OUT, sources: str | Path | None = SOURCES,
          check: bool = False) -> dict[Path, str]:
    """Generate ``out_dir/{student,solution,grader}/<name>.ipynb`` for every source.

    Returns ``{path: status}`` with status ``written``, ``unchanged``, or — with ``check=True``, which writes
    nothing — ``stale`` (differs from a fresh build), ``missing`` or ``orphan`` (a generated file without a source);
    a source that breaks the rules (:func:`.source.validate`) gets ``broken: <why>`` under its own path, and the
    others are built all the same (its generated files are left as they are).
    """
    out_dir = Path(out_dir)
    status: dict[Path, str] = {}
    for assignment in discover(sources):
        try:
            copies = make_copies(assignment)
        except ValueError as e:
            status[assignment.path] = f"broken: {e}"
            for kind in COPIES:
                status[output_path(out_dir, kind, assignment.name)] = "kept"
            continue
        for kind, nb in copies.items():
            path = output_path(out_dir, kind, assignment.name)
            status[path] = write_if_changed(path, notebook_bytes(nb), check)
    for kind in COPIES:
        for path in sorted((out_dir / kind).glob("*.ipynb")):
            if path not in status:
                status[path] = "orphan"
    return status
