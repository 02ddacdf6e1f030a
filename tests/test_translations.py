"""The Korean edition (issue 40) never silently falls behind the English one.

The mechanism, on a tiny two-markdown-cell notebook and its catalog in a temporary folder:

* a markdown cell without a translation fails, naming the notebook and the cell (its id and first line);
* a translation made from an older English text (the cell's id is in the catalog with another hash, or its entry
  is fuzzy) is stale: it fails, naming the cell and showing the English diff (old ``msgid`` against the new text);
* a stored Korean notebook must be exactly what the English notebook and the catalog give: the same cells, ids and
  order, every code cell the English one, every markdown cell its catalog's translation, the same link targets.

The real course: every notebook that has a Korean edition (``notebooks/ko/NN_slug.ipynb``) passes those checks,
keeps the chapter anatomy with the Korean headings (tests/test_chapter_anatomy.py's check with ``lang="ko"``), and
its glossary, citation and notebook links resolve, and every English notebook has its Korean edition.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import polib
import pytest
from pybtex.database import parse_file

from test_chapter_anatomy import anatomy_problems
from vrs_edu.course.book import chapters
from vrs_edu.course.book_build import CONF_DIR, glossary_terms, term_slug
from vrs_edu.course.translation import (LINK_TARGET, TranslationMissing, build_korean, catalog_path, catalog_status,
                                        korean_notebook, source_cells, sync_problems, update_catalog)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ENGLISH = sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))
KOREAN = sorted((NOTEBOOKS / "ko").glob("[0-9][0-9]*_*.ipynb"))
STUDY_MIN = {c.stem: c.study_min for c in chapters()}

HEADING = "# 01 · Tiny\n\n**Question.** Is it tiny?"
BODY = "The [residual stream](#glossary:residual-stream) adds.\nA second line."


# ---------------------------------------------------------------------------------------------- the mechanism


def _write_english(folder: Path, heading: str = HEADING, body: str = BODY) -> Path:
    """A stored English notebook: a heading cell, a code cell and a body cell, with fixed nbformat ids."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(heading), nbformat.v4.new_code_cell("x = 1\nprint(x)"),
                nbformat.v4.new_markdown_cell(body)]
    for cell, cell_id in zip(nb.cells, ("head0001", "code0002", "body0003")):
        cell.id = cell_id
    path = folder / "01_tiny.ipynb"
    nbformat.write(nb, str(path))
    return path


def _translate(ipynb: Path, korean: dict[str, str]) -> None:
    """Fill the msgstr of the current entries whose cell id is in ``korean``, as a translator does (with polib)."""
    po_path = catalog_path(ipynb)
    po = polib.pofile(str(po_path), wrapwidth=0)
    current = {c.key for c in source_cells(ipynb)}
    for entry in po:
        if entry.msgctxt in current and entry.msgctxt.split()[0] in korean:
            entry.msgstr = korean[entry.msgctxt.split()[0]]
    po.save(str(po_path))


KO = {"head0001": "# 01 · 작은 예\n\n**질문.** 작습니까?",
      "body0003": "[잔차 스트림(residual stream)](#glossary:residual-stream)은 더합니다.\n두 번째 줄입니다."}


@pytest.fixture
def english(tmp_path):
    path = _write_english(tmp_path)
    update_catalog(path)
    return path


def test_the_catalog_has_one_entry_per_english_markdown_cell_keyed_by_id_and_hash(english):
    po = polib.pofile(str(catalog_path(english)), wrapwidth=0)
    assert [e.msgctxt.split()[0] for e in po] == ["head0001", "body0003"]
    assert [e.msgid for e in po] == [HEADING, BODY]
    assert all(len(e.msgctxt.split()[1]) == 12 and not e.msgstr for e in po)


def test_a_missing_translation_fails_naming_the_notebook_and_the_cells(english):
    _translate(english, {"head0001": KO["head0001"]})
    status = catalog_status(english)
    assert not status.ok and [c.cell_id for c in status.missing] == ["body0003"] and not status.stale
    report = status.report()
    assert "01_tiny.ipynb: 1 markdown cell(s) have no Korean translation" in report
    assert "cell body0003: The [residual stream](#glossary:residual-stream) adds." in report
    assert "head0001" not in report
    with pytest.raises(TranslationMissing, match="cell body0003: The \\[residual stream\\]"):
        korean_notebook(english)
    partial = korean_notebook(english, allow_missing=True)      # a translator's draft: the rest stays English
    assert [c.source for c in partial.cells if c.cell_type == "markdown"] == [KO["head0001"], BODY]


def test_a_fully_translated_notebook_passes(english):
    _translate(english, KO)
    assert catalog_status(english).ok and catalog_status(english).report() == ""
    nb = korean_notebook(english)
    assert [c.source for c in nb.cells] == [KO["head0001"], "x = 1\nprint(x)", KO["body0003"]]
    assert [c.id for c in nb.cells] == ["head0001", "code0002", "body0003"]


def test_an_english_cell_changed_after_its_translation_is_stale_and_shows_the_english_diff(english):
    _translate(english, KO)
    _write_english(english.parent, body=BODY.replace("A second line.", "A second, longer line."))
    for refreshed in (False, True):       # before `make translations` (hash differs) and after (entry fuzzy)
        if refreshed:
            update_catalog(english)
            assert any("fuzzy" in e.flags for e in polib.pofile(str(catalog_path(english)), wrapwidth=0))
        status = catalog_status(english)
        assert [c.cell_id for c, _ in status.stale] == ["body0003"] and not status.missing
        report = status.report()
        assert "01_tiny.ipynb: 1 markdown cell(s) changed in English after their translation" in report
        assert "cell body0003: The [residual stream]" in report
        assert "-A second line." in report and "+A second, longer line." in report
        with pytest.raises(TranslationMissing, match="\\+A second, longer line"):
            korean_notebook(english)
    _translate(english, {"body0003": KO["body0003"] + " 더 깁니다."})     # the translator catches up
    assert catalog_status(english).ok


def test_an_entry_the_translator_flagged_fuzzy_is_stale(english):
    _translate(english, KO)
    po = polib.pofile(str(catalog_path(english)), wrapwidth=0)
    po[0].flags.append("fuzzy")
    po.save()
    assert [c.cell_id for c, _ in catalog_status(english).stale] == ["head0001"]


def test_a_stored_korean_notebook_must_be_the_english_plus_the_catalog(english):
    _translate(english, KO)
    korean = build_korean(english, execute=False)
    assert korean == english.parent / "ko" / "01_tiny.ipynb"
    assert sync_problems(english, korean) == []

    def altered(change):
        nb = nbformat.read(str(korean), as_version=4)
        change(nb)
        out = korean.with_name("altered.ipynb")
        nbformat.write(nb, str(out))
        return " | ".join(sync_problems(english, out))

    def edit_code(nb):
        nb.cells[1].source = "x = 2\nprint(x)"

    def edit_markdown(nb):
        nb.cells[2].source = KO["body0003"] + " 손으로 고친 줄입니다."

    def drop_link(nb):
        nb.cells[2].source = nb.cells[2].source.replace("(#glossary:residual-stream)", "(#glossary:residual)")

    def reorder(nb):
        nb.cells[0], nb.cells[2] = nb.cells[2], nb.cells[0]

    def collapse(nb):
        nb.cells[2].metadata["jp-MarkdownHeadingCollapsed"] = True

    assert "cell 1 (code0002: x = 1): the code differs from the English" in altered(edit_code)
    assert "cell 2 (body0003: The [residual stream]" in altered(edit_markdown)
    assert "not its catalog's translation" in altered(edit_markdown)
    assert "link targets ['#glossary:residual']" in altered(drop_link)
    assert "first difference at cell 0" in altered(reorder)
    assert "metadata" in altered(collapse)
    _translate(english, {"body0003": KO["body0003"] + " 새 번역입니다."})     # the catalog moved on, the notebook not
    assert "not its catalog's translation" in " ".join(sync_problems(english, korean))


def test_the_korean_anatomy_check_reads_the_korean_headings():
    def nb(*sources):
        out = nbformat.v4.new_notebook()
        out.cells = [nbformat.v4.new_markdown_cell(s) if s.startswith(("#", "**", "<")) else
                     nbformat.v4.new_code_cell(s) for s in sources]
        return out

    head = ("# 01 · 예\n\n**질문.** 왜?\n\n**목표.** 봅니다.\n\n**선수 지식.** 없음.\n\n"
            "**공부 시간.** 약 45분. **예상 실행 시간.** 약 30초.")
    good = nb(head, "from vrs_edu.viz.schematics import x", "<details><summary>답</summary>네.</details>",
              "## 이 장의 답", "say(1)")
    assert anatomy_problems(good, 45, lang="ko") == []
    assert "the study time says 45 min, book.toml's study_min 60" in anatomy_problems(good, 60, lang="ko")
    english_headings = nb(head.replace("**질문.**", "**Question.**"), "from vrs_edu.viz.schematics import x",
                          "<details><summary>Answer</summary>Yes.</details>", "## The answer", "say(1)")
    problems = " | ".join(anatomy_problems(english_headings, 45, lang="ko"))
    for lack in ("lacks **질문.**", "no conceptual question with a folded answer", "no '## 이 장의 답' section"):
        assert lack in problems, lack
    hour = nb(head.replace("약 45분", "약 1시간"))
    assert "study time says 60 min" in " ".join(anatomy_problems(hour, 45, lang="ko"))


# ---------------------------------------------------------------------------------------------- the real course


def _english_of(korean: Path) -> Path:
    return NOTEBOOKS / korean.name


def test_every_catalog_has_an_entry_for_every_english_markdown_cell():
    """`make translations` was run after the last English edit: a translator sees every cell to translate."""
    stale = []
    for ipynb in ENGLISH:
        po_path = catalog_path(ipynb)
        keys = {e.msgctxt for e in polib.pofile(str(po_path), wrapwidth=0)} if po_path.exists() else set()
        stale += [f"{ipynb.name} cell {c.cell_id}" for c in source_cells(ipynb) if c.key not in keys]
    assert not stale, "run `make translations`; the catalogs lack " + ", ".join(stale)


def test_every_notebook_has_its_korean_edition():
    missing = [p.name for p in ENGLISH if not (NOTEBOOKS / "ko" / p.name).exists()]
    assert not missing, "no Korean edition yet (make notebook-ko NB=notebooks/NN_slug.ipynb): " + ", ".join(missing)


@pytest.mark.parametrize("korean", KOREAN, ids=lambda p: p.stem)
def test_a_korean_notebook_has_a_current_translation_of_every_cell(korean):
    assert _english_of(korean).exists(), f"notebooks/ko/{korean.name} has no English notebook"
    status = catalog_status(_english_of(korean))
    assert status.ok, status.report()


@pytest.mark.parametrize("korean", KOREAN, ids=lambda p: p.stem)
def test_a_korean_notebook_is_the_english_plus_its_catalog(korean):
    problems = sync_problems(_english_of(korean), korean)
    assert not problems, (f"rebuild it: make notebook-ko NB=notebooks/{korean.name}\n  " + "\n  ".join(problems))


@pytest.mark.parametrize("korean", [k for k in KOREAN if k.stem in STUDY_MIN], ids=lambda p: p.stem)
def test_a_korean_chapter_keeps_the_anatomy_with_the_korean_headings(korean):
    problems = anatomy_problems(nbformat.read(str(korean), as_version=4), STUDY_MIN[korean.stem], lang="ko")
    assert not problems, f"notebooks/ko/{korean.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("korean", KOREAN, ids=lambda p: p.stem)
def test_every_link_of_a_korean_notebook_resolves(korean):
    slugs = {term_slug(t) for t in glossary_terms()}
    keys = set(parse_file(str(CONF_DIR / "references.bib")).entries)
    bad = []
    for cell in nbformat.read(str(korean), as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        for target in LINK_TARGET.findall(cell.source):
            if target.startswith("#glossary:") and target.split(":", 1)[1] not in slugs:
                bad.append(f"{target} (no such glossary term)")
            elif target.startswith("#cite:") and target.split(":", 1)[1] not in keys:
                bad.append(f"{target} (no such reference)")
            elif target.endswith(".ipynb") and not (NOTEBOOKS / target).exists():
                bad.append(f"{target} (no such notebook)")
    assert not bad, f"notebooks/ko/{korean.name}: " + ", ".join(bad)
