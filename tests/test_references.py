"""The project is self-contained: every source it cites is in its bibliography, and no file points at notes that do
not ship with it.

The bibliography is ``vrs_edu/course/sphinx/references.bib`` (the book's references page lists every entry). A source
is cited by arXiv id in docstrings, chapters and tests ("arXiv 2410.17897", "arXiv:2410.17897", an arxiv.org link);
each such id must be the ``eprint`` of one entry. tests/test_book.py builds the page.
"""
import os
import re
from pathlib import Path

from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "vrs_edu" / "course" / "sphinx" / "references.bib"
# "arXiv 2410.17897", "arXiv:2410.17897", "arXiv\n# 2410.17897" (a comment wrapped after the word), arxiv.org links
ARXIV_ID = re.compile(r"(?:arXiv[\s:#]*|arxiv\.org/(?:abs|pdf)/)(\d{4}\.\d{4,5})", re.IGNORECASE)
# where the course cites: the package (docstrings, comments, assignment sources), the chapters' sources, the tests
CITING = [*sorted((ROOT / "vrs_edu").rglob("*.py")), *sorted((ROOT / "notebooks").glob("*.py")),
          *sorted((ROOT / "tests").glob("*.py")), ROOT / "README.md"]


def _entries():
    return parse_file(str(BIB), bib_format="bibtex").entries


def cited_arxiv_ids(text: str) -> set[str]:
    return set(ARXIV_ID.findall(text))


def test_the_citation_pattern_finds_every_form_the_course_writes():
    text = ("Zhou et al., arXiv 2410.17897; (arXiv:2312.00751, eq. 3); MUDDFormer arXiv\n# 2502.12170 wrapped;\n"
            "https://arxiv.org/abs/2603.16039v2; not an id: 0.2410 or 12.5 s")
    assert cited_arxiv_ids(text) == {"2410.17897", "2312.00751", "2502.12170", "2603.16039"}


def test_every_arxiv_id_cited_in_the_package_chapters_and_tests_is_in_the_bibliography():
    eprints = {e.fields.get("eprint") for e in _entries().values()}
    cited = {}
    for path in CITING:
        for arxiv_id in cited_arxiv_ids(path.read_text(encoding="utf-8")):
            cited.setdefault(arxiv_id, []).append(str(path.relative_to(ROOT)))
    # the course's own subject is cited (guards against a pattern or a file list that finds nothing)
    assert {"2410.17897", "2606.02780", "2603.16039", "2402.02622"} <= set(cited)
    missing = {i: files for i, files in cited.items() if i not in eprints}
    assert not missing, f"arXiv ids cited but not in {BIB.relative_to(ROOT)} (add an entry with eprint = {{id}}): " \
                        f"{missing}"


def test_every_entry_has_authors_a_title_a_year_and_a_way_to_find_it():
    entries = _entries()
    assert len(entries) >= 20
    for key, e in entries.items():
        assert e.persons.get("author"), f"{key}: no author"
        assert e.fields.get("title") and re.fullmatch(r"(19|20)\d\d", e.fields.get("year", "")), f"{key}: title/year"
        if e.type == "misc":  # a paper's venue says where it is; anything else needs an arXiv id or an address
            assert e.fields.get("eprint") or e.fields.get("url"), f"{key}: neither an arXiv id nor a URL"
        if "eprint" in e.fields:
            assert re.fullmatch(r"\d{4}\.\d{4,5}", e.fields["eprint"]), f"{key}: eprint {e.fields['eprint']!r}"
            assert e.fields.get("archiveprefix", "").lower() == "arxiv", f"{key}: eprint without archivePrefix"


def test_each_paper_has_one_entry():
    eprints = [e.fields["eprint"] for e in _entries().values() if "eprint" in e.fields]
    assert len(eprints) == len(set(eprints)), sorted(i for i in eprints if eprints.count(i) > 1)


def test_the_references_page_lists_every_entry_of_the_bibliography():
    page = (BIB.parent / "references.md").read_text()
    assert re.search(r"```\{bibliography\}\n:all:\n```", page), "the page must list all entries, cited or not"


# ------------------------------------------------------------------------------------- self-contained project

# Notes kept next to the project while it was written (design notes, reviews, pilot runs) do not ship with it: a
# pointer to them is a dead end for a learner. The patterns are assembled so that this file does not match itself.
OUTSIDE_NOTES = re.compile("|".join([re.escape("shared" + "/"), "CLARIFI" + "CATIONS", "cpu" + "-regime"]))
SKIP_DIRS = {".git", ".venv", "_build", "node_modules", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "runs",
             "grades", "collected"}


def _project_text_files():
    """(path relative to the root, text) of every text file of the project: build outputs and the venv left out."""
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            path = Path(folder) / name
            if path.suffix in (".safetensors", ".png", ".pt", ".bin", ".db") or path.stat().st_size > 20_000_000:
                continue
            try:
                yield path.relative_to(ROOT), path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue


def test_the_pattern_catches_a_pointer_to_outside_notes():
    assert OUTSIDE_NOTES.search("see ``" + "shared" + "/research/notes.md``")
    assert OUTSIDE_NOTES.search("Init rules: " + "CLARIFI" + "CATIONS.md")
    assert not OUTSIDE_NOTES.search("see the references page (vrs_edu/course/sphinx/references.bib)")


def test_no_project_file_points_at_notes_outside_the_project():
    hits = []
    n_files = 0
    for rel, text in _project_text_files():
        n_files += 1
        for no, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_NOTES.search(line):
                hits.append(f"{rel}:{no}: {line.strip()[:120]}")
    assert n_files > 100, "the walk found too few files to mean anything"
    assert not hits, "state the fact in place or cite the references page instead:\n" + "\n".join(hits)


def test_the_walk_reads_the_files_that_matter_and_skips_the_venv():
    found = {rel for rel, _ in _project_text_files()}
    for path in ("README.md", "Makefile", "vrs_edu/nn/model.py", "notebooks/03_value_residual.py",
                 "notebooks/03_value_residual.ipynb", "vrs_edu/course/sphinx/references.bib"):
        assert Path(path) in found, path
    assert not any(rel.parts[0] in (".venv", ".git") for rel in found)


# An import the text tells the reader to write (``from vrs_edu.x import name`` in a docstring, a comment or the
# README) must work: a renamed function otherwise leaves a stale name behind.
DOC_IMPORT = re.compile(r"`from (vrs_edu(?:\.\w+)*) import (\w+(?:, \w+)*)")


def test_every_import_the_text_shows_names_something_that_exists():
    import importlib

    shown = []
    for path in [*sorted((ROOT / "vrs_edu").rglob("*.py")), *sorted((ROOT / "vrs_edu").rglob("*.md")),
                 ROOT / "README.md"]:
        for module, names in DOC_IMPORT.findall(path.read_text(encoding="utf-8")):
            shown += [(path.relative_to(ROOT), module, n.strip()) for n in names.split(",")]
    assert ("vrs_edu/course/exercises/__init__.py", "vrs_edu.course.exercises.ch01") in \
        {(str(p), m) for p, m, _ in shown}, "the pattern must find the exercises' import example"
    stale = [f"{p}: from {m} import {n}" for p, m, n in shown if not hasattr(importlib.import_module(m), n)]
    assert not stale, stale


def _chapter_table() -> str:
    """The table "Which chapter uses which modules": on the book's page "The package" (package.md), or in the README
    where a checkout keeps it there."""
    page = ROOT / "vrs_edu/course/sphinx/package.md"
    if page.exists():
        return page.read_text().split("## Which chapter uses which modules", 1)[1].split("\n## ", 1)[0]
    return (ROOT / "README.md").read_text().split("### Which chapter uses which modules", 1)[1].split("\n### ", 1)[0]


def test_every_file_the_package_pages_chapter_table_names_exists():
    section = _chapter_table()
    rows = [line for line in section.splitlines() if re.match(r"\| 0\d \|", line)]
    from vrs_edu.course.book import chapters

    assert [r[2:4] for r in rows] == [c.number for c in chapters()], "one row per chapter of book.toml"
    missing = []
    for row in rows:
        (package,) = (ROOT / "vrs_edu" / "chapters").glob(f"ch{row[2:4]}_*")
        # the columns after the chapter number; a path may also start at vrs_edu/ or data/
        folders = [ROOT / "vrs_edu" / "nn", package, ROOT / "vrs_edu" / "lab", ROOT / "vrs_edu" / "course",
                   ROOT / "tests"]
        for folder, cell in zip(folders, row.strip("|").split("|")[1:], strict=True):
            for name in re.findall(r"`([\w/]+\.py)`", cell):
                if not ((folder / name).is_file() or (ROOT / "vrs_edu" / name).is_file()
                        or (name.startswith("data/") and (ROOT / name).is_file())):
                    missing.append(f"{row[2:4]}: {folder.relative_to(ROOT) / name}")
    assert not missing, missing
