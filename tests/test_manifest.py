"""book.toml is the course's single table of contents: it must list every notebook exactly once (chapters, then the
appendices that back them), in order, with titles equal to each notebook's first heading, a stated study time of
at most 7 hours in all, and the README's chapter table must be generated from it."""
import re
import tomllib
from pathlib import Path

import jupytext
import pytest

from vrs_edu.course.book import BOOK_TOML, appendices, chapter_table_markdown, chapters, load_book, study_minutes

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks"


def test_book_toml_parses_with_tomllib_and_keeps_mdbook_keys():
    with BOOK_TOML.open("rb") as f:
        book = tomllib.load(f)
    assert set(book) <= {"book", "build", "rust", "output", "preprocessor"}, "mdBook 0.5 rejects other top-level keys"
    assert {"title", "authors", "description", "language"} <= set(book["book"])
    assert "build-dir" in book["build"]


def test_every_notebook_is_listed_exactly_once_and_every_listed_one_exists():
    listed = [c.file for c in chapters()] + [a.file for a in appendices()]
    duplicates = sorted({f for f in listed if listed.count(f) > 1})
    assert not duplicates, f"listed more than once in book.toml: {duplicates}"
    on_disk = sorted(p.name for p in NB.glob("[0-9][0-9]*_*.ipynb"))
    unlisted = sorted(set(on_disk) - set(listed))
    missing = sorted(set(listed) - set(on_disk))
    assert not unlisted, f"notebooks present but not listed in book.toml: {unlisted}"
    assert not missing, f"listed in book.toml but missing from notebooks/: {missing}"
    chapter_files = [c.file for c in chapters()]
    assert chapter_files == sorted(chapter_files), "chapters must be listed in their numbered order"


def _first_heading_cell(nb, entry):
    """The notebook's first Markdown cell, after checking that its heading is the book.toml entry's title."""
    first_md = next(c for c in nb.cells if c.cell_type == "markdown")
    heading = re.match(r"#\s+(.*)", first_md.source.strip())
    assert heading and heading.group(1).strip() == entry.title, \
        f"{entry.file}: first heading {heading and heading.group(1)!r} != book.toml title {entry.title!r}"
    return first_md


@pytest.mark.parametrize("appendix", appendices(), ids=lambda a: a.stem)
def test_an_appendix_is_titled_by_its_first_heading_and_backs_its_chapter(appendix):
    nb = jupytext.read(NB / (appendix.stem + ".py"))
    first_md = _first_heading_cell(nb, appendix)
    assert appendix.file.startswith(appendix.chapter) and 0 < appendix.budget_s <= 90
    (chapter,) = [c for c in chapters() if c.number == appendix.chapter]
    assert f"({chapter.file})" in first_md.source, f"{appendix.file} does not link back to {chapter.file}"
    chapter_md = "\n".join(c.source for c in jupytext.read(NB / (chapter.stem + ".py")).cells
                           if c.cell_type == "markdown")
    assert f"({appendix.file})" in chapter_md, f"{chapter.file} does not link its appendix {appendix.file}"


def test_the_course_states_at_most_seven_hours_of_study():
    assert all(c.study_min for c in chapters()), "every chapter states its study time (study_min)"
    assert study_minutes() <= 7 * 60, f"the chapters' study times add up to {study_minutes()} min, over 7 hours"


def test_an_appendix_must_back_a_listed_chapter(tmp_path):
    bad = tmp_path / "book.toml"
    bad.write_text(BOOK_TOML.read_text() + '\n[[preprocessor.course.appendices]]\nfile = "42a_x.ipynb"\n'
                   'title = "Appendix 42 · x"\nchapter = "42"\nbudget_s = 60\n')
    with pytest.raises(ValueError, match=r"appendix #3 \(42a_x.ipynb\): chapter must be the number"):
        appendices(bad)


@pytest.mark.parametrize("chapter", chapters(), ids=lambda c: c.stem)
def test_title_matches_first_heading_and_chapter_is_complete(chapter):
    nb = jupytext.read(NB / (chapter.stem + ".py"))
    _first_heading_cell(nb, chapter)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown").lower()
    for part in ("**goals.**", "**question.**", "**prerequisites.**", "**expected run time.**"):
        assert part in text, f"{chapter.file} lacks the section {part!r}"
    # the closing section: "The answer" (the learner-first anatomy, tests/test_chapter_anatomy.py checks it), or
    # "What we measured" in a chapter not yet rewritten for it
    assert "## the answer" in text or "## what we measured" in text, f"{chapter.file} has no closing section"
    assert chapter.goals and 0 < chapter.budget_s <= 90, f"{chapter.file}: goals and a budget of at most 90 s"


def test_readme_chapter_table_equals_book_toml():
    readme = (ROOT / "README.md").read_text()
    assert chapter_table_markdown() in readme, (
        "README's chapter table differs from book.toml; paste the output of "
        "`python -m vrs_edu.course.book chapters` between the chapter-table markers")


def test_load_book_names_the_missing_table(tmp_path):
    bad = tmp_path / "book.toml"
    bad.write_text('[book]\ntitle = "x"\n[build]\n')
    with pytest.raises(ValueError, match=r"\[preprocessor\]"):
        load_book(bad)


# ----------------------------------------------------------------------------------- the Korean book (한국어판)

@pytest.mark.parametrize("entry", chapters(lang="ko") + appendices(lang="ko"), ids=lambda e: e.stem)
def test_korean_title_matches_the_korean_notebooks_first_heading(entry):
    korean = NB / "ko" / entry.file
    if not korean.exists():
        pytest.skip(f"notebooks/ko/{entry.file} not built yet (the Korean book leaves it out)")
    _first_heading_cell(jupytext.read(korean), entry)


def test_every_chapter_has_its_korean_texts():
    for en, ko in zip(chapters(), chapters(lang="ko")):
        assert ko.title.startswith(f"{en.number} · ") and ko.question and len(ko.goals) == len(en.goals), en.file


def test_a_chapter_without_its_korean_goals_is_named(tmp_path):
    bad = tmp_path / "book.toml"
    bad.write_text(re.sub(r'goals_ko = \[[^\]]*\]\n', "", BOOK_TOML.read_text(), count=1))
    assert chapters(bad)[0].file == "00_orientation.ipynb"   # the English book does not need it
    with pytest.raises(ValueError, match=r"chapter #0 \(00_orientation.ipynb\) lacks \['goals_ko'\]"):
        chapters(bad, lang="ko")
