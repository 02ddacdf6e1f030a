"""The visible-apparatus share (vrs_edu.course.apparatus), on a small notebook whose answer is counted by hand, and
JupyterLab's collapsed-heading rule it relies on."""
from __future__ import annotations

import nbformat
import pytest

from vrs_edu.course.apparatus import COLLAPSED, FIGURE_LINES, HOW_SURE, collapsed_cells, main, measure

V4 = nbformat.v4


def _code(source, *outputs, **metadata):
    cell = V4.new_code_cell(source, execution_count=1, outputs=list(outputs))
    cell.metadata.update(metadata)
    return cell


def _stdout(text):
    return V4.new_output("stream", name="stdout", text=text)


def _heading(text, collapsed=False):
    cell = V4.new_markdown_cell(text)
    if collapsed:
        cell.metadata[COLLAPSED] = True
    return cell


def tiny_notebook():
    figure = V4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure size 512x288>"})
    return V4.new_notebook(cells=[
        _heading("# 03 · A chapter\n\nSome prose about the effect."),                       # 2 lines
        _code("x = 1\nprint(x)", _stdout("1\n")),                                           # 3 lines
        _code("plt.show()", figure),                                                        # 1 + 14 + 1 lines
        _code("show(verdicts)", _stdout("resformer reproduced, p (Holm) 0.010\n" + "x" * 250 + "\n")),
        #                                         apparatus: 1 + 1 + 3 (250 characters wrap to 3 lines) = 5 lines
        _code("def f():\n    return 2\nf()\nf()", _stdout("checked: interval ok\n"),
              jupyter={"source_hidden": True}),   # worked solution: only its output is seen, 1 apparatus line
        _heading(f"## {HOW_SURE}", collapsed=True),                                          # 1 line, visible
        _heading("Every declared test, Holm-corrected:"),                                    # hidden
        _code("print(table)", _stdout("a\nb\nc\n")),                                         # hidden
        _heading("### A sub-heading stays inside the section"),                             # hidden
        _heading("## The answer\n\nThe value residual helps by 0.05 nats."),                 # 2 lines
        _code("secret()", _stdout("power 8 %\n"), tags=["remove-cell"]),                     # removed: 0
    ])


def test_the_share_of_the_tiny_notebook_is_the_hand_count(tmp_path):
    path = tmp_path / "03_tiny.ipynb"
    nbformat.write(tiny_notebook(), path)
    s = measure(path)
    visible = 2 + 3 + (1 + FIGURE_LINES + 1) + 5 + 1 + 1 + 2
    assert (s.apparatus, s.visible) == (5 + 1, visible)
    assert s.share == pytest.approx(6 / visible)


def test_a_collapsed_heading_hides_its_section_up_to_the_next_heading_of_its_level():
    assert collapsed_cells(tiny_notebook()) == {6, 7, 8}
    nb = V4.new_notebook(cells=[_heading("## a", collapsed=True), _heading("x"), _heading("# top"), _heading("y")])
    assert collapsed_cells(nb) == {1}
    nb.cells[0].metadata[COLLAPSED] = False
    assert collapsed_cells(nb) == set()


def test_the_command_prints_one_line_per_chapter_and_names_a_missing_file(tmp_path, capsys):
    path = tmp_path / "03_tiny.ipynb"
    nbformat.write(tiny_notebook(), path)
    assert main([str(path)]) == 0
    assert "03_tiny" in capsys.readouterr().out
    assert main([str(tmp_path / "nope.ipynb")]) == 2
    assert "no such notebook" in capsys.readouterr().err
