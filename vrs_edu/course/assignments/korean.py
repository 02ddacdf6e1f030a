"""The assignments' Korean edition: a gettext catalog per source, and the Korean student and solution copies.

A source ``NN_name.py`` has its catalog beside it, ``ko/NN_name.po``, in the notebooks' format
(:mod:`vrs_edu.course.translation`): one entry per markdown cell, ``msgctxt = "<cell id> <sha256[:12] of the
English>"`` with the cell ids of the generated copies (``cell-NN``), and one per solution region's hint, keyed
``"<cell id>.hint-<n> <hash>"`` (n counted from 1 in the cell), whose ``msgid`` is the region's ``### HINT:`` lines,
one per line. The ``msgstr`` of a hint is the Korean stub's message (its lines become the stub's string literals,
joined by a space when raised).

The Korean copies are the English student and solution copies with those texts replaced: the same cells, cell ids,
code and cell metadata, and ``"language": "ko"`` added to the notebook's ``vrs_edu`` metadata, so the grader reads a
Korean copy as it reads the English one. There is no Korean grader copy (grading rebuilds it from the source). A
source without a catalog has no Korean copies; a catalog that lacks a current translation raises
:class:`~vrs_edu.course.translation.TranslationMissing`, naming the cells (stale ones with the English diff).

``vrs-edu assignments build`` writes them to ``OUT/ko/{student,solution}/`` with the marker file
:data:`~vrs_edu.i18n.language.MARKER` beside them: Jupyter starts a notebook's kernel in the notebook's folder, where
:func:`vrs_edu.i18n.language.current_language` finds the marker, so the copy's checkers print Korean.
``python -m vrs_edu.course.assignments.korean update`` adds the new English texts to the catalogs (and flags the
changed ones fuzzy); ``… check`` lists what lacks a current translation.
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import polib
from nbformat import NotebookNode

from vrs_edu.course.assignments.build import (DEFAULT_OUT, StableIds, make_copies, notebook_bytes, solution_hints,
                                              strip_solutions, write_if_changed)
from vrs_edu.course.assignments.source import SOLUTION, SOURCES, Assignment, discover, tags
from vrs_edu.course.translation import (LANGUAGE, CatalogStatus, SourceCell, TranslationMissing, entries_status,
                                        translations, update_entries)
from vrs_edu.i18n.language import MARKER

KOREAN_COPIES = ("student", "solution")
UPDATE = "`make translations` (or `python -m vrs_edu.course.assignments.korean update`)"
NOUN = "text(s) (markdown cells and hints)"
DEFAULT_HINT_KO = "여기에 코드를 작성하세요"   # a region without a HINT (the English DEFAULT_HINT)


def catalog_path(assignment: Assignment) -> Path:
    """Where the catalog of ``sources/NN_name.py`` lives: ``sources/ko/NN_name.po``."""
    return assignment.path.parent / LANGUAGE / f"{assignment.name}.po"


def hint_id(cell_id: str, n: int) -> str:
    """The catalog id of the ``n``-th (from 1) solution region's hint of the cell ``cell_id``."""
    return f"{cell_id}.hint-{n}"


def _stable_source(assignment: Assignment) -> NotebookNode:
    nb, _ = StableIds().preprocess(assignment.read(), {})
    return nb


def source_texts(assignment: Assignment) -> list[SourceCell]:
    """The English texts a Korean copy translates, in the notebook's order: every markdown cell (under its copies'
    cell id) and every solution region's hint that has one. Raises ValueError for a source that breaks the rules."""
    out = []
    for cell in _stable_source(assignment).cells:
        if cell.cell_type == "markdown":
            out.append(SourceCell(cell.id, cell.source))
        elif SOLUTION in tags(cell):
            out += [SourceCell(hint_id(cell.id, n), "\n".join(hint))
                    for n, hint in enumerate(solution_hints(cell.source), 1) if hint]
    return out


def update_catalog(assignment: Assignment) -> polib.POFile:
    """Add an untranslated entry for every English text the assignment's catalog lacks (the notebooks' rules:
    changed ones flagged fuzzy, vanished ones obsolete). Returns the saved catalog."""
    return update_entries(catalog_path(assignment), source_texts(assignment))


def catalog_status(assignment: Assignment) -> CatalogStatus:
    """Which English texts of the assignment lack a current translation in its catalog (missing or stale)."""
    return entries_status(f"assignment {assignment.name}", catalog_path(assignment), source_texts(assignment),
                          UPDATE, NOUN)


def korean_copies(assignment: Assignment, english: dict[str, NotebookNode] | None = None) -> dict[str, NotebookNode]:
    """The Korean student and solution copies of ``assignment``, from its English copies (``english``, default:
    :func:`.build.make_copies`) and its catalog.

    Raises:
        TranslationMissing: a markdown cell or hint has no current translation (the report names them).
        FileNotFoundError: the assignment has no catalog.
        ValueError: the source breaks the rules (:func:`.source.validate`).
    """
    po_path = catalog_path(assignment)
    if not po_path.is_file():
        raise FileNotFoundError(f"assignment {assignment.name} has no Korean catalog {po_path}")
    status = catalog_status(assignment)
    if not status.ok:
        raise TranslationMissing(status.report())
    catalog = translations(po_path)
    english = english or make_copies(assignment)
    sources = {c.id: c.source for c in _stable_source(assignment).cells}
    out = {}
    for kind in KOREAN_COPIES:
        nb = copy.deepcopy(english[kind])
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = catalog[SourceCell(cell.id, cell.source).key]
            elif kind == "student" and SOLUTION in tags(cell):
                source = sources[cell.id]
                hints = [catalog[SourceCell(hint_id(cell.id, n), "\n".join(h)).key].splitlines() if h
                         else [DEFAULT_HINT_KO] for n, h in enumerate(solution_hints(source), 1)]
                cell.source = strip_solutions(source, stub=True, hints=hints)
        nb.metadata["vrs_edu"] = {**nb.metadata["vrs_edu"], "language": LANGUAGE}
        out[kind] = nb
    return out


def output_path(out_dir: str | Path, kind: str, name: str) -> Path:
    """``OUT/ko/<kind>/<name>.ipynb``: where the build writes a Korean copy."""
    return Path(out_dir) / LANGUAGE / kind / f"{name}.ipynb"


def build_korean(out_dir: str | Path = DEFAULT_OUT, sources: str | Path | None = SOURCES,
                 check: bool = False) -> dict[Path, str]:
    """Generate ``out_dir/ko/{student,solution}/<name>.ipynb`` for every source that has a catalog, and the marker
    file beside them. Returns ``{path: status}`` as :func:`.build.build` does (``written``, ``unchanged``; with
    ``check``, which writes nothing: ``stale``, ``missing``, ``orphan``), and ``untranslated: <report>`` for both
    copies of an assignment whose catalog lacks a current translation (their files are left as they are). A source
    that breaks the rules is left to :func:`.build.build`, which reports it (its Korean copies: ``kept``)."""
    status: dict[Path, str] = {}
    for assignment in discover(sources):
        if not catalog_path(assignment).is_file():
            continue
        try:
            copies = korean_copies(assignment)
        except TranslationMissing as e:
            for kind in KOREAN_COPIES:
                status[output_path(out_dir, kind, assignment.name)] = f"untranslated: {e}"
            continue
        except ValueError as e:
            # a broken source: build() names it, and its Korean copies are kept as they are; a source whose English
            # copies build but whose Korean ones do not must not leave them silently stale
            try:
                make_copies(assignment)
                why = f"broken: {e}"
            except ValueError:
                why = "kept"
            for kind in KOREAN_COPIES:
                status[output_path(out_dir, kind, assignment.name)] = why
            continue
        for kind, nb in copies.items():
            path = output_path(out_dir, kind, assignment.name)
            status[path] = write_if_changed(path, notebook_bytes(nb), check)
    if status:
        for kind in KOREAN_COPIES:
            marker = Path(out_dir) / LANGUAGE / kind / MARKER
            status[marker] = write_if_changed(marker, f"{LANGUAGE}\n".encode(), check)
    for kind in KOREAN_COPIES:
        for path in sorted((Path(out_dir) / LANGUAGE / kind).glob("*.ipynb")):
            status.setdefault(path, "orphan")
    return status


def main(argv: list[str] | None = None) -> int:
    """``update``: add new English texts to every assignment's catalog; ``check``: list the texts without a
    current translation (exit status 1 if any)."""
    ap = argparse.ArgumentParser(prog="python -m vrs_edu.course.assignments.korean", description=main.__doc__)
    ap.add_argument("command", choices=("update", "check"))
    ap.add_argument("--sources", type=Path, default=SOURCES, help="the assignment sources (default: the checkout's)")
    args = ap.parse_args(argv)
    assignments = discover(args.sources)
    if args.command == "update":
        for a in assignments:
            po = update_catalog(a)
            untranslated = sum(1 for e in po if not e.obsolete and not e.msgstr)
            print(f"{catalog_path(a)}: {len(po)} entries, {untranslated} untranslated")
        return 0
    reports = [catalog_status(a).report() for a in assignments]
    for report in filter(None, reports):
        print(report, file=sys.stderr)
    print(f"{sum(not r for r in reports)} of {len(reports)} assignments fully translated")
    return 1 if any(reports) else 0


if __name__ == "__main__":
    raise SystemExit(main())
