"""The assignments' Korean edition (issue 40) never silently falls behind the English one.

The mechanism, on a tiny source and its catalog in a temporary folder (as tests/test_translations.py does for the
notebooks):

* the catalog has one entry per markdown cell and one per solution region's hint, keyed by the copies' cell id and
  a hash of the English;
* a text without a translation fails, naming the assignment and the cell; a translation made from an older English
  text is stale and fails with the English diff; ``vrs-edu assignments build`` then says so and exits 1, and
  ``build --check`` reports a Korean copy that differs from a fresh build (stale) or is absent (missing);
* the Korean copies are the English ones with the markdown and the stubs' hints translated: the same cells, ids,
  code and cell metadata, and ``"language": "ko"`` in the notebook's metadata.

The real course: every assignment has a catalog with a current translation of every text, the committed Korean
copies are what the sources and catalogs give, and a kernel started in their folders runs in Korean (the marker);
one handed out alone, opened in JupyterLab, runs in Korean from its metadata.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import nbformat
import polib
import pytest

from vrs_edu.cli import main as vrs_edu_main
from vrs_edu.course.assignments.build import DEFAULT_OUT, make_copies, strip_solutions
from vrs_edu.course.assignments.korean import (build_korean, catalog_path, catalog_status, korean_copies,
                                               output_path, source_texts, update_catalog)
from vrs_edu.course.assignments.source import SOLUTION, Assignment, discover, tags
from vrs_edu.course.translation import TranslationMissing
from vrs_edu.i18n.language import MARKER, current_language, notebook_language

ASSIGNMENTS = discover()
NAMES = [a.name for a in ASSIGNMENTS]

TINY = '''# %% [markdown]
# # Assignment 09 · Tiny
#
# Write `double(x)`.

# %% tags=["solution"]
def double(x):
    ### BEGIN SOLUTION
    ### HINT: twice the input;
    ### HINT: one product
    return 2 * x
    ### END SOLUTION


# %% tags=["public-test"] check="double_public" points=1
double(2) == 4

# %% tags=["hidden-test"] check="double_hidden" points=1
double(-3) == -6
'''
KO = {"cell-00": "# 과제 09 · 작은 예\n\n`double(x)`를 작성하세요.", "cell-01.hint-1": "입력의 두 배입니다.\n곱 하나"}


def _tiny(folder: Path, text: str = TINY) -> Assignment:
    path = folder / "09_tiny.py"
    path.write_text(text, encoding="utf-8")
    return Assignment("09_tiny", path)


def _translate(assignment: Assignment, korean: dict[str, str]) -> None:
    """Fill the msgstr of the current entries whose id is in ``korean``, as a translator does (with polib)."""
    po = polib.pofile(str(catalog_path(assignment)), wrapwidth=0)
    current = {t.key for t in source_texts(assignment)}
    for entry in po:
        if entry.msgctxt in current and entry.msgctxt.split()[0] in korean:
            entry.msgstr = korean[entry.msgctxt.split()[0]]
    po.save(str(catalog_path(assignment)))


@pytest.fixture
def tiny(tmp_path):
    assignment = _tiny(tmp_path)
    update_catalog(assignment)
    return assignment


# --------------------------------------------------------------------------------------------- the mechanism

def test_the_catalog_has_an_entry_per_markdown_cell_and_per_hint_beside_the_source(tiny):
    assert catalog_path(tiny) == tiny.path.parent / "ko" / "09_tiny.po"
    po = polib.pofile(str(catalog_path(tiny)), wrapwidth=0)
    assert [e.msgctxt.split()[0] for e in po] == ["cell-00", "cell-01.hint-1"]
    assert [e.msgid for e in po] == ["# Assignment 09 · Tiny\n\nWrite `double(x)`.", "twice the input;\none product"]
    assert all(len(e.msgctxt.split()[1]) == 12 and not e.msgstr for e in po)


def test_an_untranslated_text_fails_naming_the_assignment_and_the_cell(tiny):
    _translate(tiny, {"cell-00": KO["cell-00"]})
    status = catalog_status(tiny)
    assert not status.ok and [c.cell_id for c in status.missing] == ["cell-01.hint-1"]
    report = status.report()
    assert report.startswith("assignment 09_tiny: 1 text(s) (markdown cells and hints) have no Korean translation")
    assert "python -m vrs_edu.course.assignments.korean update" in report
    assert "cell cell-01.hint-1: twice the input;" in report
    with pytest.raises(TranslationMissing, match="cell-01.hint-1"):
        korean_copies(tiny)


def test_an_english_change_after_the_translation_is_stale_and_shows_the_diff(tiny):
    _translate(tiny, KO)
    assert catalog_status(tiny).ok
    _tiny(tiny.path.parent, TINY.replace("### HINT: one product", "### HINT: one multiplication"))
    status = catalog_status(tiny)
    assert [c.cell_id for c, _ in status.stale] == ["cell-01.hint-1"] and not status.missing
    assert "-one product" in status.report() and "+one multiplication" in status.report()
    update_catalog(tiny)    # the translator's step: the old entry is kept, fuzzy, beside the new English
    po = polib.pofile(str(catalog_path(tiny)), wrapwidth=0)
    assert [("fuzzy" in e.flags, e.msgid.splitlines()[-1]) for e in po if "hint" in e.msgctxt] == [
        (False, "one multiplication"), (True, "one product")]
    assert not catalog_status(tiny).ok


def test_the_korean_copies_translate_markdown_and_hints_and_keep_everything_else(tiny):
    _translate(tiny, KO)
    english = make_copies(tiny)
    korean = korean_copies(tiny)
    assert set(korean) == {"student", "solution"}
    for kind, nb in korean.items():
        ours = english[kind]
        assert [(c.id, c.cell_type, dict(c.metadata)) for c in nb.cells] == \
            [(c.id, c.cell_type, dict(c.metadata)) for c in ours.cells]
        assert nb.metadata["vrs_edu"] == {"assignment": "09_tiny", "copy": kind, "language": "ko"}
        assert nb.metadata["kernelspec"] == ours.metadata["kernelspec"]
        assert nb.cells[0].source == KO["cell-00"]
        assert "double_hidden" not in [c.id for c in nb.cells]
    stub = korean["student"].cells[1].source
    assert stub == 'def double(x):\n    raise NotImplementedError(\n        "입력의 두 배입니다. "\n        "곱 하나")'
    with pytest.raises(NotImplementedError, match="^입력의 두 배입니다. 곱 하나$"):
        exec(stub + "\ndouble(1)", {})
    assert korean["solution"].cells[1].source == english["solution"].cells[1].source   # the code, untouched
    assert english["student"].cells[1].source.endswith('"twice the input; "\n        "one product")')


def test_a_region_without_a_hint_gets_the_korean_default_and_no_entry(tmp_path):
    assignment = _tiny(tmp_path, TINY.replace("    ### HINT: twice the input;\n    ### HINT: one product\n", ""))
    update_catalog(assignment)
    assert [t.cell_id for t in source_texts(assignment)] == ["cell-00"]
    _translate(assignment, KO)
    stub = korean_copies(assignment)["student"].cells[1].source
    assert stub == 'def double(x):\n    raise NotImplementedError("여기에 코드를 작성하세요")'
    english = make_copies(assignment)["student"].cells[1].source
    assert english.endswith('NotImplementedError("write your solution here")')


def test_a_stub_takes_one_translated_hint_per_region():
    two = "### BEGIN SOLUTION\n### HINT: a\nx = 1\n### END SOLUTION\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION"
    assert strip_solutions(two, stub=True, hints=[["가"], ["나"]]) == \
        'raise NotImplementedError("가")\nraise NotImplementedError("나")'
    with pytest.raises(ValueError, match=r"one per solution region \(2\), got 1"):
        strip_solutions(two, stub=True, hints=[["가"]])


def test_build_writes_the_korean_copies_and_their_marker_and_check_reports_them(tiny, tmp_path, capsys):
    _translate(tiny, KO)
    out = tmp_path / "out"
    argv = ["assignments", "build", "--no-validate", "--sources", str(tiny.path.parent), "--out", str(out)]
    assert vrs_edu_main(argv) == 0
    assert (out / "ko" / "student" / MARKER).read_text() == "ko\n" == (out / "ko" / "solution" / MARKER).read_text()
    student = output_path(out, "student", "09_tiny")
    assert student == out / "ko" / "student" / "09_tiny.ipynb"
    assert nbformat.read(student, as_version=4).metadata["vrs_edu"]["language"] == "ko"
    assert vrs_edu_main(argv + ["--check"]) == 0
    student.write_text(student.read_text().replace("작은 예", "작은 보기"))
    (out / "ko" / "solution" / "09_tiny.ipynb").unlink()
    capsys.readouterr()
    assert vrs_edu_main(argv + ["--check"]) == 1
    printed = capsys.readouterr().out
    assert f"stale     {student}" in printed and f"missing   {out / 'ko' / 'solution' / '09_tiny.ipynb'}" in printed
    # the English changes, the translation does not: the English copies are built, the Korean ones are not
    _tiny(tiny.path.parent, TINY.replace("Write `double(x)`.", "Write `double(x)`, returning 2x."))
    assert vrs_edu_main(argv) == 1
    printed = capsys.readouterr()
    assert "untranslated" in printed.out and "cell cell-00: # Assignment 09 · Tiny" in printed.err
    assert "+Write `double(x)`, returning 2x." in printed.err
    assert "2 Korean copy(ies) not built" in printed.err


def test_a_source_without_a_catalog_has_no_korean_copies(tmp_path):
    assignment = _tiny(tmp_path)
    assert build_korean(tmp_path / "out", tmp_path) == {}
    with pytest.raises(FileNotFoundError, match="no Korean catalog"):
        korean_copies(assignment)


# --------------------------------------------------------------------------------------------- the real course

def test_every_assignment_has_a_current_korean_translation():
    problems = [catalog_status(a).report() for a in ASSIGNMENTS if not catalog_status(a).ok]
    assert not problems, "\n".join(problems)


def test_the_committed_korean_copies_are_up_to_date():
    status = build_korean(DEFAULT_OUT, check=True)
    assert len(status) == 2 * len(NAMES) + 2, status   # a student and a solution copy each, and the two markers
    stale = {p: s for p, s in status.items() if s != "unchanged"}
    assert not stale, f"data/assignments/ko differs from the sources and catalogs: {stale} — run " \
                      "`vrs-edu assignments build`"


def _without_hints(source: str) -> tuple[str, list[str]]:
    """The code of a cell with every ``raise NotImplementedError("…")`` emptied (as an AST dump), and the messages."""
    tree, hints = ast.parse(source), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                getattr(node.exc.func, "id", "") == "NotImplementedError":
            hints += [ast.literal_eval(a) for a in node.exc.args]
            node.exc.args = []
    return ast.dump(tree), hints


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=NAMES)
def test_a_korean_copy_is_its_english_copy_in_korean(assignment):
    english = make_copies(assignment)
    for kind, nb in korean_copies(assignment, english).items():
        ours = english[kind]
        assert [c.id for c in nb.cells] == [c.id for c in ours.cells]
        for k, e in zip(nb.cells, ours.cells):
            if e.cell_type == "markdown":
                assert k.source != e.source and any("\uac00" <= ch <= "\ud7a3" for ch in k.source), e.id
            elif kind == "student" and SOLUTION in tags(e):
                code, hints = _without_hints(k.source)
                assert code == _without_hints(e.source)[0], e.id     # the same code but for the hints' words
                assert hints and all(any("\uac00" <= ch <= "\ud7a3" for ch in h) for h in hints), (e.id, hints)
            else:
                assert k.source == e.source, e.id


def test_a_kernel_in_the_korean_copies_folder_runs_in_korean(monkeypatch):
    monkeypatch.delenv("VRS_EDU_LANG", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert current_language(DEFAULT_OUT / "ko" / "student") == "ko"
    assert current_language(DEFAULT_OUT / "ko" / "solution") == "ko"
    assert current_language(DEFAULT_OUT / "student") == "en"


def test_a_copy_handed_out_alone_runs_in_its_metadatas_language(tmp_path, monkeypatch):
    """JupyterLab names the notebook in JPY_SESSION_NAME (absolute, or relative to the server's root); the kernel
    runs in the notebook's folder, which has no marker when the copy was downloaded on its own."""
    monkeypatch.delenv("VRS_EDU_LANG", raising=False)
    name = "03_value_residual.ipynb"
    (tmp_path / name).write_bytes((DEFAULT_OUT / "ko" / "student" / name).read_bytes())
    (tmp_path / "en.ipynb").write_bytes((DEFAULT_OUT / "student" / name).read_bytes())
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / name))
    assert current_language(tmp_path) == "ko"
    monkeypatch.setenv("JPY_SESSION_NAME", f"downloads/{name}")
    assert current_language(tmp_path) == "ko"
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "en.ipynb"))
    assert current_language(tmp_path) == "en"
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "gone.ipynb"))
    assert current_language(tmp_path) == "en"
    (tmp_path / "broken.ipynb").write_text("{ not JSON")
    assert notebook_language(tmp_path / "broken.ipynb") is None
    (tmp_path / "odd.ipynb").write_text(json.dumps({"metadata": {"vrs_edu": {"language": "fr"}}}))
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "odd.ipynb"))
    with pytest.raises(ValueError, match="lang: expected one of en, ko, got 'fr'"):
        current_language(tmp_path)


def test_the_metadata_is_read_once_per_saved_version_of_the_notebook(tmp_path, monkeypatch):
    """Every label asks for the edition: the notebook is parsed again only when it was saved since (a figure with
    dozens of labels must not parse a chapter dozens of times)."""
    monkeypatch.delenv("VRS_EDU_LANG", raising=False)
    nb = tmp_path / "copy.ipynb"
    nb.write_text(json.dumps({"metadata": {"vrs_edu": {"language": "ko"}}}))
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))
    reads = []
    real_read = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: reads.append(self) or real_read(self, *a, **k))
    assert [current_language(tmp_path) for _ in range(5)] == ["ko"] * 5 and reads == [nb]
    nb.write_text(json.dumps({"metadata": {"vrs_edu": {"language": "en"}}}))   # saved again: read again
    os.utime(nb, ns=(nb.stat().st_atime_ns, nb.stat().st_mtime_ns + 1_000_000))
    assert current_language(tmp_path) == "en" and reads == [nb, nb]

