"""Classroom assignments: the build (student / solution / grader copies from one source) and the grader.

The kernel-based tests grade real notebooks with ``vrs-edu assignments grade`` — once per submission, as a teacher
would — in two module-scoped runs (every assignment's solution and untouched student copy; a set of tampered
submissions), then each test reads one report.
"""
import copy
import json
import re

import nbformat
import pytest

from vrs_edu.cli import main as vrs_edu_main
from vrs_edu.course.assignments.build import COPIES, DEFAULT_OUT, build, make_copies, strip_solutions
from vrs_edu.course.assignments.grade import grading_notebook, student_name
from vrs_edu.course.assignments.source import HIDDEN, HINT, PUBLIC, SOLUTION, discover, tags, validate

ASSIGNMENTS = discover()
NAMES = [a.name for a in ASSIGNMENTS]


def _cells(nb, tag):
    return [c for c in nb.cells if tag in tags(c)]


def _hints(assignment) -> list[str]:
    """The stub messages of one assignment: each solution region's HINT lines joined by a space."""
    out = []
    for cell in _cells(assignment.read(), SOLUTION):
        hint, inside = [], False
        for line in cell.source.splitlines():
            s = line.strip()
            if s.startswith("### BEGIN SOLUTION"):
                hint, inside = [], True
            elif s.startswith("### END SOLUTION"):
                out.append(" ".join(hint))
                inside = False
            elif inside and s.startswith(HINT):
                hint.append(s[len(HINT):].strip())
    return out


# --- the sources and the build (no kernel) -------------------------------------------------------------------

def test_one_assignment_per_chapter_01_to_05():
    chapters = {name[:2] for name in NAMES}
    assert {"01", "02", "03", "04", "05"} <= chapters, f"assignments found: {NAMES}"


def test_stub_replaces_each_region_and_keeps_everything_else():
    source = ("def f(x):\n"
              "    \"\"\"doc\"\"\"\n"
              "    ### BEGIN SOLUTION\n"
              "    ### HINT: add one\n"
              "    y = x + 1\n"
              "    ### END SOLUTION\n"
              "    return y\n")
    assert strip_solutions(source, stub=True) == ("def f(x):\n    \"\"\"doc\"\"\"\n"
                                                  "    raise NotImplementedError(\"add one\")\n    return y")
    assert strip_solutions(source, stub=False) == "def f(x):\n    \"\"\"doc\"\"\"\n    y = x + 1\n    return y"
    two_lines = "### BEGIN SOLUTION\n### HINT: first \"part\"\n### HINT: second\nx = 1\n### END SOLUTION"
    stub = strip_solutions(two_lines, stub=True)
    assert stub == 'raise NotImplementedError(\n    "first \\"part\\" "\n    "second")'
    with pytest.raises(NotImplementedError, match='first "part" second'):
        exec(stub)


@pytest.mark.parametrize("bad, message", [
    ('# %%\nx = 1  ### BEGIN SOLUTION\n', "not tagged 'solution'"),
    ('# %% tags=["solution"]\n### BEGIN SOLUTION\nx = 1\n', "has no ### END SOLUTION"),
    ('# %% tags=["solution"]\nx = 1\n', "at least one"),
    ('# %% tags=["public-test"] points=1\nTrue\n', 'needs check="name"'),
    ('# %% tags=["public-test"] check="a"\nTrue\n', "points=<positive number>"),
    ('# %% tags=["public-test"] check="a" points=1\nassert True\n', "must end with an expression"),
    ('# %% tags=["public-test"] check="a" points=1\nTrue\n\n# %% tags=["hidden-test"] check="a" points=1\nTrue\n',
     "used twice"),
    ('# %% tags=["hidden-test"] check="a" points=1\nTrue\n', "no 'public-test' cell"),
])
def test_invalid_sources_are_refused_with_the_reason(bad, message):
    import jupytext

    with pytest.raises(ValueError, match=re.escape(message)):
        validate(jupytext.reads(bad, fmt="py:percent"), "broken")


def test_build_is_deterministic_and_the_committed_copies_are_up_to_date(tmp_path):
    first = build(tmp_path / "a")
    second = build(tmp_path / "b")
    assert set(first.values()) == {"written"} and len(first) == 3 * len(NAMES)
    for path in first:
        twin = tmp_path / "b" / path.relative_to(tmp_path / "a")
        assert path.read_bytes() == twin.read_bytes(), f"two builds differ: {path.name}"
    assert set(build(tmp_path / "a").values()) == {"unchanged"}, "rebuilding rewrote files"
    edited = next(iter(first))
    edited.write_bytes(edited.read_bytes().replace(b'"cell_type"', b'"cell_type" ', 1))
    assert build(tmp_path / "a", check=True)[edited] == "stale"
    assert vrs_edu_main(["assignments", "build", "--check", "--out", str(tmp_path / "a")]) == 1
    stale = {p: s for p, s in build(DEFAULT_OUT, check=True).items() if s != "unchanged"}
    assert not stale, f"data/assignments differs from the sources: {stale} — run `vrs-edu assignments build`"
    assert len(second) == len(first)


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=NAMES)
def test_hidden_tests_and_solutions_appear_nowhere_in_the_student_copy(assignment):
    copies = make_copies(assignment)
    grader = copies["grader"]
    hidden = _cells(grader, HIDDEN)
    assert hidden, "every assignment has hidden tests"
    student_text = nbformat.writes(copies["student"])
    solution_text = nbformat.writes(copies["solution"])
    shown = {line for c in grader.cells if HIDDEN not in tags(c) for line in c.source.splitlines()}
    for cell in hidden:
        assert cell.metadata["check"] not in student_text + solution_text
        for line in cell.source.splitlines():
            if len(line.strip()) > 12 and line not in shown:  # lines only a hidden test has
                as_json = json.dumps(line, ensure_ascii=False)[1:-1]
                assert as_json not in student_text, f"hidden test line in the student copy: {line}"
                assert as_json not in solution_text, f"hidden test line in the solution copy: {line}"
    for cell in _cells(copies["solution"], SOLUTION):  # the worked solution is not in the student copy either
        body = [ln for ln in cell.source.splitlines() if ln.startswith("    ") and '"""' not in ln]
        assert body and not any(json.dumps(ln, ensure_ascii=False)[1:-1] in student_text for ln in body)
    assert "### BEGIN" not in student_text + solution_text + nbformat.writes(grader)
    student_meta = copies["student"].metadata
    assert student_meta["vrs_edu"] == {"assignment": assignment.name, "copy": "student"}
    assert set(student_meta) == {"kernelspec", "vrs_edu"}
    public = [c.metadata["check"] for c in _cells(copies["student"], PUBLIC)]
    assert public == [c.metadata["check"] for c in _cells(grader, PUBLIC)] and public


def test_grading_notebook_drops_the_learners_test_cells_and_appends_the_canonical_ones():
    copies = make_copies(ASSIGNMENTS[0])
    submission = copy.deepcopy(copies["student"])
    public = _cells(submission, PUBLIC)[0]
    public.source = "True  # edited"
    twin = copy.deepcopy(public)
    twin.id, twin.metadata = "pasted-copy", {"tags": [PUBLIC]}   # a pasted copy keeps the tag, not the id
    submission.cells.append(twin)
    nb, origin, test_index = grading_notebook(submission, copies["grader"])
    sources = [c.source for c in nb.cells]
    assert "True  # edited" not in sources
    tests = [c for c in copies["grader"].cells if PUBLIC in tags(c) or HIDDEN in tags(c)]
    assert [nb.cells[i].source for i in test_index] == [c.source for c in tests]
    assert test_index == list(range(len(nb.cells) - len(tests), len(nb.cells))), "the checks run last"
    assert len(origin) == len(submission.cells) - 2
    assert len({c.id for c in nb.cells}) == len(nb.cells)


def test_student_names_come_from_the_file_or_its_folder(tmp_path):
    assert student_name(tmp_path / "alice.ipynb", "01_residual_stream") == "alice"
    assert student_name(tmp_path / "bob" / "01_residual_stream.ipynb", "01_residual_stream") == "bob"
    assert student_name(tmp_path / "x y!.ipynb", None) == "x_y"
    assert student_name(tmp_path / "ann.lee.ipynb", "01_residual_stream") == "ann.lee"


def test_reports_are_written_per_student_and_summarised(tmp_path):
    from vrs_edu.course.assignments.grade import CheckResult, Report, write_report

    checks = [CheckResult("a_public", "public", True, 1.0, 1.0), CheckResult("a_hidden", "hidden", False, 0.0, 2.0,
                                                                             "✗ a: case 0: the scale is missing")]
    for student in ("ann.lee", "bo"):
        write_report(Report(student, "01_x", "x.ipynb", "graded", 1.0, 3.0, checks), tmp_path)
    report = json.loads((tmp_path / "01_x" / "ann.lee.json").read_text())
    assert (report["points"], report["max_points"], report["checks_passed"], report["checks_total"]) == (1, 3, 1, 2)
    rows = (tmp_path / "01_x" / "ann.lee.csv").read_text().splitlines()
    assert rows[2] == "ann.lee,01_x,a_hidden,hidden,False,0.0,2.0,✗ a: case 0: the scale is missing"
    summary = (tmp_path / "summary.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in summary[1:]] == ["ann.lee", "bo"]


# --- grading real notebooks (one fresh kernel per submission) ------------------------------------------------

def _grade(out, *paths, **options):
    argv = ["assignments", "grade", *map(str, paths), "--out", str(out)]
    for k, v in options.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    assert vrs_edu_main(argv) == 0


def _report(out, assignment, student):
    return json.loads((out / assignment / f"{student}.json").read_text())


@pytest.fixture(scope="module")
def graded_copies(tmp_path_factory):
    """Every assignment's solution copy (as student `solution`) and untouched student copy (as student `stub`)."""
    root = tmp_path_factory.mktemp("copies")
    built = build(root / "built")
    subs = []
    for path in built:
        kind = path.parent.name
        if kind in ("solution", "student"):
            dest = root / "collected" / ("solution" if kind == "solution" else "stub") / path.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
            subs.append(dest)
    _grade(root / "grades", root / "collected")
    return root / "grades"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_solution_passes_every_public_and_hidden_check(graded_copies, name):
    r = _report(graded_copies, name, "solution")
    assert r["status"] == "graded"
    failed = [(c["check"], c["message"]) for c in r["checks"] if not c["passed"]]
    assert not failed
    assert r["points"] == r["max_points"] > 0 and {c["kind"] for c in r["checks"]} == {"public", "hidden"}
    assert [e for e in r["errors"] if not e.startswith("note:")] == []


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=NAMES)
def test_the_student_copy_runs_its_stubs_and_every_check_fails_with_a_hint(graded_copies, assignment):
    r = _report(graded_copies, assignment.name, "stub")
    assert r["status"] == "graded" and r["points"] == 0
    hints = _hints(assignment)
    for e in r["errors"]:  # the learner's cells that call a stub raise its NotImplementedError, with the hint
        assert "NotImplementedError: " in e and any(h in e for h in hints), e
    for c in r["checks"]:
        if c["kind"] == "public":
            assert "not implemented yet" in c["message"], c
        else:
            assert "not implemented yet" in c["message"] or any(h in c["message"] for h in hints), c
    graded = nbformat.read(graded_copies / assignment.name / "stub.graded.ipynb", as_version=4)
    public = [c for c in graded.cells if PUBLIC in tags(c)]
    for cell in public:  # what the learner sees under a check cell: the ✗ line, and the value False
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        assert text.startswith("✗") and "not implemented yet" in text
        assert [o.data["text/plain"] for o in cell.outputs if o.output_type == "execute_result"] == ["False"]


@pytest.fixture(scope="module")
def tampered(tmp_path_factory):
    """Submissions of assignment 00 that break the rules, graded in one CLI call."""
    root = tmp_path_factory.mktemp("tampered")
    copies = make_copies(next(a for a in ASSIGNMENTS if a.name.startswith("00")))
    right = copies["solution"]
    wrong = copy.deepcopy(copies["student"])
    solution_cell = _cells(wrong, SOLUTION)[0]
    solution_cell.source = _cells(right, SOLUTION)[0].source.replace("norm(dim=-1)", "pow(2).sum(-1)")

    def variant(nb, name, edit):
        nb = copy.deepcopy(nb)
        edit(nb)
        nbformat.write(nb, root / "in" / f"{name}.ipynb")

    (root / "in").mkdir()
    variant(wrong, "deleted_test", lambda nb: nb.cells.remove(_cells(nb, PUBLIC)[0]))
    variant(wrong, "edited_test", lambda nb: setattr(_cells(nb, PUBLIC)[0], "source", "True"))
    variant(right, "infinite_loop", lambda nb: nb.cells.insert(2, nbformat.v4.new_code_cell("while True:\n    pass")))
    variant(right, "syntax_error", lambda nb: setattr(_cells(nb, SOLUTION)[0], "source",
                                                        _cells(nb, SOLUTION)[0].source.replace("return", "return (")))
    variant(right, "kernel_dies", lambda nb: nb.cells.insert(2, nbformat.v4.new_code_cell("import os\nos._exit(1)")))
    variant(right, "ignores_interrupts", lambda nb: nb.cells.insert(2, nbformat.v4.new_code_cell(
        "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except KeyboardInterrupt:\n        pass")))
    (root / "in" / "not_a_notebook.ipynb").write_text("{ this is not JSON")
    # A short per-cell limit for the loops; the course's imports are preloaded outside it.
    _grade(root / "grades", root / "in", timeout=8, total_timeout=40)
    return root / "grades", copies["grader"]


def _by_kind(report):
    return {c["kind"]: c for c in report["checks"]}


@pytest.mark.slow
@pytest.mark.parametrize("student", ["deleted_test", "edited_test"])
def test_a_deleted_or_edited_check_cell_cannot_change_the_grade(tampered, student):
    grades, grader = tampered
    r = _report(grades, "00_stream_norms", student)
    assert r["status"] == "graded" and r["points"] == 0
    assert len(r["checks"]) == len(_cells(grader, PUBLIC) + _cells(grader, HIDDEN)), "every canonical check ran"
    public = _by_kind(r)["public"]
    assert not public["passed"] and "squared norm" in public["message"], "the canonical check and its hint"


@pytest.mark.slow
def test_an_infinite_loop_is_interrupted_and_the_checks_still_run(tampered):
    r = _report(tampered[0], "00_stream_norms", "infinite_loop")
    assert r["status"] == "graded" and r["points"] == r["max_points"]
    assert any(e.startswith("cell 3 ('while True:'): TimeoutError") for e in r["errors"]), r["errors"]


@pytest.mark.slow
def test_a_syntax_error_is_reported_and_the_checks_fail_without_crashing_the_grader(tampered):
    r = _report(tampered[0], "00_stream_norms", "syntax_error")
    assert r["status"] == "graded" and r["points"] == 0
    assert any("SyntaxError" in e for e in r["errors"]), r["errors"]
    assert all("NameError: name 'mean_stream_norms' is not defined" in c["message"] for c in r["checks"])


@pytest.mark.slow
def test_a_dead_kernel_or_an_uninterruptible_loop_still_gives_a_report(tampered):
    dead = _report(tampered[0], "00_stream_norms", "kernel_dies")
    assert dead["status"] == "kernel died" and dead["points"] == 0
    assert all("not run: the kernel died in cell 3 of the submission" in c["message"] for c in dead["checks"])
    stuck = _report(tampered[0], "00_stream_norms", "ignores_interrupts")
    assert stuck["status"] == "time limit" and stuck["points"] == 0
    assert all(c["message"].startswith("not run: the notebook hit the 40 s limit") for c in stuck["checks"])


@pytest.mark.slow
def test_an_unreadable_file_gets_a_report_and_the_summary_lists_everyone(tampered):
    grades, _ = tampered
    r = _report(grades, "unknown", "not_a_notebook")
    assert r["status"] == "unreadable" and "NotJSONError" in r["errors"][0]
    rows = (grades / "summary.csv").read_text().splitlines()
    assert rows[0].startswith("student,assignment,status,points,max_points")
    assert len(rows) == 1 + 7
    per_check = (grades / "00_stream_norms" / "edited_test.csv").read_text().splitlines()
    assert per_check[0] == "student,assignment,check,kind,passed,points,max_points,message"
    assert len(per_check) == 1 + 3
