"""The Korean edition's translation catalog: one gettext PO file per notebook, one entry per markdown cell.

An entry is keyed by the English cell's stable id (the ``id`` nbformat 4.5 gives every cell of the stored
``.ipynb``; jupytext keeps it when the ``.py`` source changes) and a hash of the English text:
``msgctxt = "<cell id> <first 12 hex digits of sha256(English text)>"``. ``msgid`` holds the English text the
translation was made from, so a stale entry shows *what* changed; ``msgstr`` is the Korean. Code cells are not in
the catalog: the Korean notebook's code cells are the English ones, character for character.

Why gettext PO: it is the standard catalog format (Sphinx, Poedit, Weblate and ``msgmerge`` read it), and
``polib`` reads and writes it without a compiler.
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import polib

from vrs_edu.course.execute import execute_notebook

LANGUAGE = "ko"
HASH_DIGITS = 12


@dataclass(frozen=True)
class SourceCell:
    """One markdown cell of an English notebook: its nbformat id, its text and the key its translation carries."""
    cell_id: str
    text: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:HASH_DIGITS]

    @property
    def key(self) -> str:
        return f"{self.cell_id} {self.digest}"


def source_cells(ipynb: Path) -> list[SourceCell]:
    """The markdown cells of a stored English notebook, in order. Raises ValueError for a cell without an id."""
    nb = json.loads(Path(ipynb).read_text(encoding="utf-8"))
    cells = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        if not cell.get("id"):
            raise ValueError(f"ipynb: expected every cell of {ipynb} to have an nbformat id, cell {index} has none")
        cells.append(SourceCell(cell["id"], "".join(cell["source"])))
    return cells


def catalog_path(ipynb: Path, root: Path | None = None) -> Path:
    """Where the catalog of ``notebooks/NN_slug.ipynb`` lives: ``notebooks/ko/catalog/NN_slug.po``."""
    ipynb = Path(ipynb)
    return (root or ipynb.parent) / LANGUAGE / "catalog" / f"{ipynb.stem}.po"


def update_catalog(ipynb: Path, po_path: Path | None = None) -> polib.POFile:
    """Add an untranslated entry for every English markdown cell the catalog lacks, and keep every existing one.

    An entry whose cell id is current but whose hash is not (the English changed after the translation) is kept
    with its old ``msgid`` and flagged ``fuzzy``, so the translator sees the old English next to the new; the new
    English gets its own untranslated entry. Nothing is deleted: entries of cells that no longer exist are marked
    obsolete. Returns the saved catalog.
    """
    ipynb = Path(ipynb)
    return update_entries(Path(po_path or catalog_path(ipynb)), source_cells(ipynb))


def update_entries(po_path: Path, cells: list[SourceCell]) -> polib.POFile:
    """:func:`update_catalog` for any list of English texts ``cells`` (in their document's order), keyed as a
    notebook's markdown cells are: the catalog at ``po_path`` (created if missing), saved and returned."""
    po = polib.pofile(str(po_path), wrapwidth=0) if po_path.exists() else polib.POFile(wrapwidth=0)
    po.metadata = {"Project-Id-Version": "vrs_edu", "Language": LANGUAGE,
                   "Content-Type": "text/plain; charset=utf-8", "Content-Transfer-Encoding": "8bit"}
    current_keys = {c.key for c in cells}
    current_ids = {c.cell_id for c in cells}
    existing = {e.msgctxt: e for e in po if not e.obsolete}
    for entry in existing.values():
        cell_id = entry.msgctxt.split()[0]
        if entry.msgctxt not in current_keys:
            if cell_id in current_ids and "fuzzy" not in entry.flags:
                entry.flags.append("fuzzy")
            elif cell_id not in current_ids:
                entry.obsolete = True
    for cell in cells:
        if cell.key not in existing:
            po.append(polib.POEntry(msgctxt=cell.key, msgid=cell.text, msgstr=""))
    # The catalog in the notebook's order, so a translator reads it top to bottom; a stale entry right after its
    # cell's new one, obsolete entries last.
    position = {c.key: float(i) for i, c in enumerate(cells)}
    position.update({c.cell_id: i + 0.5 for i, c in enumerate(cells)})
    po.sort(key=lambda e: (e.obsolete, position.get(e.msgctxt, position.get(e.msgctxt.split()[0], len(cells)))))
    po_path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(po_path))
    return po


def translations(po_path: Path) -> dict[str, str]:
    """``{key: Korean text}`` for every translated, current (not fuzzy, not obsolete) entry of a catalog."""
    po = polib.pofile(str(po_path), wrapwidth=0)
    return {e.msgctxt: e.msgstr for e in po if e.msgstr and not e.obsolete and "fuzzy" not in e.flags}


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:70] if text.strip() else ""


class TranslationMissing(ValueError):
    """A Korean notebook was asked for while some of its markdown cells lack a current translation."""


@dataclass(frozen=True)
class CatalogStatus:
    """What a Korean notebook's catalog lacks: ``missing`` cells have no translation at all, ``stale`` ones have a
    translation made from an older English text (the cell's id is in the catalog with another hash, or its entry is
    flagged fuzzy), each with the entry that holds the old English."""
    notebook: str
    catalog: str
    missing: tuple[SourceCell, ...]
    stale: tuple[tuple[SourceCell, polib.POEntry], ...]
    update: str = "`make translations`"   # the command that adds new English texts to the catalog
    noun: str = "markdown cell(s)"        # what one entry translates

    @property
    def ok(self) -> bool:
        return not self.missing and not self.stale

    def report(self) -> str:
        """The problems in words: the notebook, each cell's id and first line, and for a stale cell the English
        diff (the text the translation was made from against the English today). Empty when all is current."""
        lines = []
        if self.missing:
            lines.append(f"{self.notebook}: {len(self.missing)} {self.noun} have no Korean translation in "
                         f"{self.catalog} (run {self.update}, then fill their msgstr):")
            lines += [f"  cell {c.cell_id}: {_first_line(c.text)}" for c in self.missing]
        if self.stale:
            lines.append(f"{self.notebook}: {len(self.stale)} {self.noun} changed in English after their "
                         f"translation in {self.catalog} (update the msgstr to the new English, then clear the "
                         f"fuzzy flag and the old entry, or run {self.update} first):")
            for cell, entry in self.stale:
                lines.append(f"  cell {cell.cell_id}: {_first_line(cell.text)}")
                diff = difflib.unified_diff(entry.msgid.splitlines(), cell.text.splitlines(),
                                            "translated English", "English today", lineterm="", n=1)
                lines += [f"    {d}" for d in diff]
        return "\n".join(lines)


def catalog_status(ipynb: Path, po_path: Path | None = None) -> CatalogStatus:
    """Which markdown cells of the English notebook ``ipynb`` lack a current translation in its catalog."""
    ipynb = Path(ipynb)
    return entries_status(ipynb.name, Path(po_path or catalog_path(ipynb)), source_cells(ipynb))


def entries_status(name: str, po_path: Path, cells: list[SourceCell], update: str = "`make translations`",
                   noun: str = "markdown cell(s)") -> CatalogStatus:
    """:func:`catalog_status` for any list of English texts ``cells`` of the document called ``name``; ``update``
    (the command that refreshes the catalog) and ``noun`` (what an entry translates) go into the report."""
    entries = [e for e in polib.pofile(str(po_path), wrapwidth=0) if not e.obsolete] if po_path.exists() else []
    by_key = {e.msgctxt: e for e in entries}
    missing, stale = [], []
    for cell in cells:
        entry = by_key.get(cell.key)
        if entry is not None and entry.msgstr and "fuzzy" not in entry.flags:
            continue
        older = [e for e in entries if e.msgstr and e.msgctxt.split()[0] == cell.cell_id
                 and (e.msgctxt != cell.key or "fuzzy" in e.flags)]
        if older:
            stale.append((cell, older[0]))
        else:
            missing.append(cell)
    return CatalogStatus(name, str(po_path), tuple(missing), tuple(stale), update, noun)


def korean_notebook(ipynb: Path, po_path: Path | None = None, allow_missing: bool = False) -> nbformat.NotebookNode:
    """The Korean edition of a stored English notebook, not executed: every markdown cell replaced by its
    translation, every code cell the English one with its outputs cleared, cell ids kept.

    Raises TranslationMissing naming the cells (id and first line) that have no current translation, with the
    English diff of the stale ones (:meth:`CatalogStatus.report`), unless ``allow_missing`` (then they stay English:
    for a translator's partial build only).
    """
    ipynb = Path(ipynb)
    catalog = translations(Path(po_path or catalog_path(ipynb)))
    nb = nbformat.read(str(ipynb), as_version=4)
    status = catalog_status(ipynb, po_path)
    if not status.ok and not allow_missing:
        raise TranslationMissing(status.report())
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            continue
        if cell.cell_type != "markdown":
            continue
        source = SourceCell(cell.id, cell.source)
        if source.key in catalog:
            cell.source = catalog[source.key]
    nb.metadata.setdefault("vrs_edu", {})["language"] = LANGUAGE
    return nb


# A markdown link's target: ``[text](target)``. The Korean keeps every target of the English cell (glossary and
# citation links, notebook links, URLs); only the text between the brackets is translated.
LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")


def sync_problems(english: Path, korean: Path, po_path: Path | None = None) -> list[str]:
    """How the stored Korean notebook ``korean`` differs from what the English notebook and its catalog give: the
    same cells (ids, types, order), every code cell's source the English one character for character, every
    markdown cell its catalog's current ``msgstr`` with the English cell's metadata (a collapsed heading stays
    collapsed), and the same link targets as the English cell. Empty when they agree."""
    english, korean = Path(english), Path(korean)
    en, ko = nbformat.read(str(english), as_version=4), nbformat.read(str(korean), as_version=4)
    catalog = translations(Path(po_path or catalog_path(english)))
    en_cells = [(c.get("id"), c.cell_type) for c in en.cells]
    ko_cells = [(c.get("id"), c.cell_type) for c in ko.cells]
    if en_cells != ko_cells:
        at = next((i for i, (a, b) in enumerate(zip(en_cells, ko_cells)) if a != b), min(len(en_cells), len(ko_cells)))
        return [f"{korean.name}: its cells are not the English ones ({len(ko_cells)} cells, the English "
                f"{len(en_cells)}; first difference at cell {at}: Korean {ko_cells[at:at + 1]}, English "
                f"{en_cells[at:at + 1]}); rebuild it with `make notebook-ko NB=notebooks/{english.name}`"]
    problems = []
    for i, (e, k) in enumerate(zip(en.cells, ko.cells)):
        where = f"{korean.name} cell {i} ({e.get('id')}: {_first_line(e.source)})"
        if e.cell_type != "markdown":
            if k.source != e.source:
                problems.append(f"{where}: the code differs from the English")
            continue
        expected = catalog.get(SourceCell(e.id, e.source).key)
        if expected is None:
            problems.append(f"{where}: no current translation in the catalog")
        elif k.source != expected:
            problems.append(f"{where}: not its catalog's translation (rebuild the notebook)")
        if dict(k.metadata) != dict(e.metadata):
            problems.append(f"{where}: metadata {dict(k.metadata)}, the English {dict(e.metadata)}")
        if sorted(LINK_TARGET.findall(k.source)) != sorted(LINK_TARGET.findall(e.source)):
            problems.append(f"{where}: link targets {sorted(LINK_TARGET.findall(k.source))}, the English "
                            f"{sorted(LINK_TARGET.findall(e.source))}")
    return problems


def build_korean(ipynb: Path, execute: bool = True, allow_missing: bool = False) -> Path:
    """Write ``notebooks/ko/NN_slug.ipynb``: the Korean notebook, executed in ``notebooks/ko/`` (whose marker file
    makes the code cells speak Korean, :func:`vrs_edu.i18n.language.current_language`) unless ``execute`` is
    False. Returns its path."""
    ipynb = Path(ipynb)
    nb = korean_notebook(ipynb, allow_missing=allow_missing)
    out_dir = ipynb.parent / LANGUAGE
    if execute:
        execute_notebook(nb, out_dir, timeout=None)
    out = out_dir / ipynb.name
    nbformat.write(nb, str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m vrs_edu.course.translation update`` refreshes every catalog; ``… check [NB.ipynb …]`` lists the
    cells without a current translation (exit status 1 if any); ``… build NB.ipynb …`` writes and executes the
    Korean notebooks (``--partial``: untranslated cells stay English)."""
    ap = argparse.ArgumentParser(prog="python -m vrs_edu.course.translation", description=main.__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("update", help="add new English cells to the catalogs, flag changed ones fuzzy")
    check = sub.add_parser("check", help="list the cells without a current translation (all notebooks by default)")
    check.add_argument("notebooks", nargs="*", type=Path, help="English notebooks, notebooks/NN_slug.ipynb")
    build = sub.add_parser("build", help="write and execute notebooks/ko/NN_slug.ipynb")
    build.add_argument("notebooks", nargs="+", type=Path, help="English notebooks, notebooks/NN_slug.ipynb")
    build.add_argument("--partial", action="store_true", help="keep untranslated cells in English")
    build.add_argument("--no-execute", action="store_true")
    args = ap.parse_args(argv)
    root = Path(__file__).resolve().parents[2] / "notebooks"
    if args.command == "update":
        for ipynb in sorted(root.glob("[0-9][0-9]*_*.ipynb")):
            po = update_catalog(ipynb)
            untranslated = sum(1 for e in po if not e.obsolete and not e.msgstr)
            print(f"{catalog_path(ipynb).relative_to(root.parent)}: {len(po)} entries, {untranslated} untranslated")
        return 0
    if args.command == "check":
        notebooks = [n.with_suffix(".ipynb") for n in args.notebooks] or sorted(root.glob("[0-9][0-9]*_*.ipynb"))
        reports = [catalog_status(n).report() for n in notebooks]
        for report in filter(None, reports):
            print(report, file=sys.stderr)
        print(f"{sum(not r for r in reports)} of {len(reports)} notebooks fully translated")
        return 1 if any(reports) else 0
    for ipynb in args.notebooks:
        ipynb = ipynb.with_suffix(".ipynb")
        try:
            out = build_korean(ipynb, execute=not args.no_execute, allow_missing=args.partial)
        except TranslationMissing as e:      # a missing or stale translation: the cells, not a traceback
            print(f"error: {e}\n(make notebook-ko … PARTIAL=1 builds with the untranslated cells in English)",
                  file=sys.stderr)
            return 1
        print(f"wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
