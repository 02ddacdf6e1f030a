"""The grader's reading of a class, without a kernel: who handed in what (the README's folder layout), and whether a
graded function is the student's own code (vrs_edu.course.assignments.integrity)."""
import nbformat
import pytest

from vrs_edu.course.assignments.build import make_copies
from vrs_edu.course.assignments.cli import collect
from vrs_edu.course.assignments.grade import resolve_assignment
from vrs_edu.course.assignments.integrity import baseline, graded_names, inspect
from vrs_edu.course.assignments.source import SOLUTION, discover, find, tags

KNOWN = tuple(a.name for a in discover())


def test_students_are_named_by_the_readmes_layout(tmp_path):
    files = ["collected/alice/02_causal_attention.ipynb", "collected/bob/notes.ipynb",
             "collected/carol/week2/02_causal_attention.ipynb", "collected/dave.ipynb",
             "collected/02_causal_attention.ipynb", "collected/.ipynb_checkpoints/x-checkpoint.ipynb"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("{}")
    got = {p.relative_to(tmp_path).as_posix(): s for p, s in collect([str(tmp_path / "collected")], KNOWN)}
    assert got == {"collected/alice/02_causal_attention.ipynb": "alice", "collected/bob/notes.ipynb": "bob",
                   "collected/carol/week2/02_causal_attention.ipynb": "carol", "collected/dave.ipynb": "dave",
                   # a notebook named after an assignment straight in the graded folder: the folder is the student
                   "collected/02_causal_attention.ipynb": "collected"}
    single = collect([str(tmp_path / "collected/alice/02_causal_attention.ipynb")], KNOWN)
    assert [s for _, s in single] == ["alice"], "a single file named after an assignment: its folder"


@pytest.mark.parametrize("meta, stem, given, expected", [
    ("02_causal_attention", "whatever", None, "02_causal_attention"),             # the metadata first
    ("", "01_residual_stream", "02_causal_attention", "01_residual_stream"),       # then the file name
    ("", "notes", "02_causal_attention", "02_causal_attention"),                   # then --assignment
    ("", "notes", None, "unknown"),                                                # else a row that asks for it
    ("99_gone", "notes", None, "unknown"),
])
def test_the_assignment_comes_from_metadata_then_file_name_then_the_flag(tmp_path, meta, stem, given, expected):
    name, notes = resolve_assignment(meta, tmp_path / f"{stem}.ipynb", given, list(KNOWN))
    assert name == expected
    assert bool(notes) == (meta == "99_gone")


def _inspect(*cells, assignment="02_causal_attention"):
    copies = make_copies(find(assignment))
    graded = graded_names(c for c in copies["grader"].cells if SOLUTION in tags(c))
    return inspect(list(enumerate(cells, start=1)), baseline(copies["student"].cells), graded)


def test_the_students_own_code_is_not_flagged():
    copies = make_copies(find("04_x0_injection"))   # its set-up cell imports rms_norm from the course: allowed
    cells = [(i + 1, c.source) for i, c in enumerate(copies["solution"].cells) if c.cell_type == "code"
             and "public-test" not in tags(c)]
    graded = graded_names(c for c in copies["grader"].cells if SOLUTION in tags(c))
    found = inspect(cells, baseline(copies["student"].cells), graded)
    assert (found.reference, found.imports, found.rebinds) == ({}, [], [])


@pytest.mark.parametrize("cells, culprit", [
    (["from vrs_edu.nn.attention import attention_pattern"], "attention_pattern"),
    (["from vrs_edu.course.exercises.ch02 import attend as _a\n\ndef attend(p, v):\n    return _a(p, v)"], "attend"),
    (["import vrs_edu.nn.attention as A", "def _helper(q, k):\n    return A.attention_pattern(q, k)",
      "def attention_pattern(q, k):\n    return _helper(q, k)"], "attention_pattern"),
    (["def attend(p, v):\n    import importlib\n    return importlib.import_module('vrs_edu.nn.attention').attend(p, v)"],
     "attend"),
    (["from vrs_edu.nn import attention\nattention_pattern = attention.attention_pattern"], "attention_pattern"),
])
def test_a_graded_function_that_is_or_calls_the_reference_is_found(cells, culprit):
    found = _inspect(*cells)
    assert list(found.reference) == [culprit], found


def test_rebinding_a_librarys_or_the_courses_names_is_listed():
    found = _inspect("import torch\nimport vrs_edu.course.exercises.ch02 as c\ntorch.allclose = lambda *a, **k: True\n"
                     "setattr(c, 'check_attend', print)\nx = 1\nx += 1")
    assert found.rebinds == ["cell 1, line 3: torch.allclose rebound",
                             "cell 1, line 4: setattr(c, 'check_attend', print)"]
    assert found.imports == ["cell 1, line 2: import vrs_edu.course.exercises.ch02 as c"]
    assert found.reference == {}


def test_magics_and_syntax_errors_do_not_stop_the_reading():
    found = _inspect("%timeit 1\n!ls\nfrom vrs_edu.nn.attention import attend", "def broken(:\n    pass")
    assert list(found.reference) == ["attend"]


def _preload_config(cell) -> dict:
    import ast

    line = next(li for li in cell.source.splitlines() if "_vrs_edu_grader_preload']" in li)
    return ast.literal_eval(line[line.index("]({") + 2:line.rindex(", globals())")])


def test_the_kernel_preloads_the_plotting_libraries_only_for_a_notebook_that_imports_them():
    from vrs_edu.course.assignments.kernel import preload_cell

    plain = _preload_config(preload_cell([], learner=[nbformat.v4.new_code_cell("import torch\nx = 1")]))
    assert "seaborn" not in plain["modules"] + plain["optional"]
    assert "matplotlib.pyplot" not in plain["modules"] + plain["optional"]
    plots = _preload_config(preload_cell([], learner=[
        nbformat.v4.new_code_cell("import seaborn as sns\nfrom matplotlib import pyplot as plt\nimport my_helpers"),
        nbformat.v4.new_markdown_cell("import pandas")]))
    # the learner's libraries that the course knows, outside the learner's time; a module of their own stays theirs
    assert plots["optional"] == ["seaborn", "matplotlib"]
