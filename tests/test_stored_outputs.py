"""No committed notebook shows a learner a warning or anything else written to stderr: the chapters' stored outputs
and the generated assignment notebooks. nbval does not compare stderr (see vrs_edu/nbval_stderr.py), so a stored
warning would otherwise ship unchecked. The fix is in the cause (an API that changed, a missing argument), or, where a warning is
understood and harmless, a filter for that one warning in the chapter's source with a comment saying why."""
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
# both editions: the Korean notebooks (notebooks/ko/, executed by `make notebooks-ko`) store outputs too
NOTEBOOKS = (sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("notebooks/ko/*.ipynb"))
             + sorted(ROOT.glob("data/assignments/**/*.ipynb")))
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# "FutureWarning: ...", "UserWarning: ...", "warnings.warn(" in a traceback-like echo, "Warning: ..." from logging
WARNING = re.compile(r"\b\w*Warning\b:|^WARNING\b|\bwarnings\.warn\(", re.M)


def _texts(output) -> list[tuple[str, str]]:
    """(what, text) for every piece of text an output shows."""
    if output.get("output_type") == "stream":
        return [(output.get("name", "stream"), output.get("text", ""))]
    return [(mime, value) for mime, value in output.get("data", {}).items()
            if mime.startswith("text/") and isinstance(value, str)]


def problems(nb) -> list[str]:
    """Every stderr output and every warning shown by a cell or kept in a widget's Output, as 'where: text'."""
    found = []

    def check(where, outputs):
        for o in outputs:
            for what, text in _texts(o):
                first = text.strip().splitlines()[0][:160] if text.strip() else ""
                if what == "stderr":
                    found.append(f"{where}: stderr: {first}")
                elif WARNING.search(text):
                    found.append(f"{where}: a warning in {what}: {WARNING.search(text).group(0)} ...")

    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            check(f"code cell {i}", cell.get("outputs", []))
    for model_id, model in nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {}).items():
        check(f"widget {model_id[:8]}", model.get("state", {}).get("outputs", []) or [])
    return found


def test_there_are_notebooks_to_check():
    assert any(p.parent.name == "notebooks" for p in NOTEBOOKS)
    assert any("assignments" in p.parts for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_committed_notebook_shows_stderr_or_a_warning(path):
    found = problems(nbformat.read(path, as_version=4))
    assert not found, (f"{path.relative_to(ROOT)} stores output a learner should not read (fix the cause, "
                       "then re-execute the chapter):\n  " + "\n  ".join(found))


def _nb(*outputs, widget_outputs=()):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x", execution_count=1, outputs=list(outputs))]
    if widget_outputs:
        nb.metadata["widgets"] = {WIDGET_STATE: {"state": {"abcdef0123": {
            "model_name": "OutputModel", "state": {"outputs": list(widget_outputs)}}}}}
    return nb


STDOUT = nbformat.v4.new_output("stream", name="stdout", text="loss 1.234 nats\n")
WARN = nbformat.v4.new_output("stream", name="stderr",
                              text="/x/lib.py:3: FutureWarning: default will change\n  warnings.warn(\n")


@pytest.mark.parametrize("nb, expected", [
    (_nb(STDOUT), []),
    (_nb(STDOUT, WARN), ["code cell 0: stderr: /x/lib.py:3: FutureWarning: default will change"]),
    (_nb(nbformat.v4.new_output("stream", name="stderr", text="\r 50%|#####     | 1/2")),
     ["code cell 0: stderr: 50%|#####     | 1/2"]),
    (_nb(nbformat.v4.new_output("display_data", data={"text/plain": "UserWarning: x"})),
     ["code cell 0: a warning in text/plain: UserWarning: ..."]),
    (_nb(STDOUT, widget_outputs=[dict(WARN)]),
     ["widget abcdef01: stderr: /x/lib.py:3: FutureWarning: default will change"]),
])
def test_the_check_finds_what_it_must_and_nothing_else(nb, expected):
    assert problems(nb) == expected


@pytest.mark.slow
def test_the_book_leaves_out_stored_stderr_and_its_build_fails_on_it(tmp_path, capfd):
    from test_book import _tiny_book   # noqa: E402  (the tiny two-chapter book of tests/test_book.py)

    from vrs_edu.course.book_build import build

    book = _tiny_book(tmp_path)
    nb_path = tmp_path / "notebooks" / "01_next.ipynb"
    nb = nbformat.read(nb_path, 4)
    nb.cells[1].outputs.append(WARN)
    nbformat.write(nb, nb_path)
    assert build(book, draft=False) != 0
    assert "stderr was found in the cell outputs" in capfd.readouterr().err
    page = tmp_path / "_build" / "book" / "01_next.html"
    assert page.exists() and "FutureWarning" not in page.read_text()
