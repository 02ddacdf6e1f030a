"""Classroom assignments: the build (student / solution / grader copies from one source) and the grader.

The kernel-based tests grade real notebooks with ``vrs-edu assignments grade`` — once per submission, as a teacher
would — in two module-scoped runs (every assignment's solution and untouched student copy, in one call; a class of
thirteen files covering every case a teacher meets, see ``graded_class``), then each test reads the summary or one
report. Each call prepares a grading session (the checks' references, the sandbox and its probe kernel: seconds)
before its first kernel, so a fixture grades as much as one call can. The class run takes about a minute on a busy
2-core machine (hangs are waited for), hence ``slow``.
"""
import copy
import json
import re

import nbformat
import pytest

from vrs_edu.cli import main as vrs_edu_main
from vrs_edu.course.assignments.build import COPIES, DEFAULT_OUT, build, make_copies, notebook_bytes, strip_solutions
from vrs_edu.course.assignments.korean import korean_copies
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
    # found by a teacher's trial: built, then failed for everyone at grading ("the check evaluated to None")
    ('# %% tags=["public-test"] check="a" points=1\nassert 1 + 1 == 2\nprint("passed")\n',
     "cell 1 (a): the test cell ends with print('passed'), which is not a boolean"),
    ('# %% tags=["public-test"] check="a" points=1\n"passed"\n', "ends with 'passed', which is not a boolean"),
    ('# %%\nx = 1\n\n# %% tags=["public-test"] check="b" points=1\nTrue\n\n'
     '# %% tags=["hidden-test"] check="c" points=1\nok = (\n', "cell 3 (c): the test cell is not valid Python"),
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
        write_report(Report(student, "01_x", f"{student}.ipynb", "graded", 1.0, 3.0, checks), tmp_path)
    report = json.loads((tmp_path / "01_x" / "ann.lee.json").read_text())
    assert (report["points"], report["max_points"], report["checks_passed"], report["checks_total"]) == (1, 3, 1, 2)
    rows = (tmp_path / "01_x" / "ann.lee.csv").read_text().splitlines()
    assert rows[2] == "ann.lee,01_x,a_hidden,hidden,False,0.0,2.0,✗ a: case 0: the scale is missing"
    summary = (tmp_path / "summary.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in summary[1:]] == ["ann.lee", "bo"]
    assert summary[0] == ("student,assignment,status,points,max_points,checks_passed,checks_total,errors,flags,"
                          "isolated,submission,report")
    # bo's file graded again as another assignment: its report replaces the earlier one, no stale row stays
    write_report(Report("bo", "02_y", "bo.ipynb", "graded", 0.0, 1.0, checks[:1]), tmp_path)
    summary = (tmp_path / "summary.csv").read_text().splitlines()
    assert [r.split(",")[:2] for r in summary[1:]] == [["ann.lee", "01_x"], ["bo", "02_y"]]
    assert not (tmp_path / "01_x" / "bo.json").exists() and not (tmp_path / "01_x" / "bo.csv").exists()


# --- grading real notebooks (one fresh kernel per submission) ------------------------------------------------

def _grade(out, *paths, **options):
    argv = ["assignments", "grade", *map(str, paths), "--out", str(out)]
    for k, v in options.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    assert vrs_edu_main(argv) == 0


def _report(out, assignment, student):
    return json.loads((out / assignment / f"{student}.json").read_text())


# The assignment whose Korean solution copy is graded beside the English one (one kernel: a few seconds; the six
# Korean copies' code and cell ids are the English ones, tests/test_assignments_korean.py).
KOREAN_GRADED = "04_x0_injection"


@pytest.fixture(scope="module")
def graded_copies(tmp_path_factory):
    """Every assignment's untouched student copy and its solution copy, handed in as students `stub` and `solution`,
    and one Korean solution copy as student `solution_ko`, graded in one call (one grading session for all:
    `vrs-edu assignments validate` grades the solution copies the same way, one kernel each;
    test_validate_grades_the_solution_and_names_a_misspelled_function and the teacher's week run the command
    itself)."""
    root = tmp_path_factory.mktemp("copies")
    for path in build(root / "built"):
        student = {"student": "stub", "solution": "solution"}.get(path.parent.name)
        if student:
            dest = root / "collected" / student / path.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
    korean = korean_copies(next(a for a in ASSIGNMENTS if a.name == KOREAN_GRADED))["solution"]
    (root / "collected" / "solution_ko").mkdir()
    (root / "collected" / "solution_ko" / f"{KOREAN_GRADED}.ipynb").write_bytes(notebook_bytes(korean))
    _grade(root / "grades", root / "collected")
    return root / "grades"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_solution_passes_every_public_and_hidden_check(graded_copies, name):
    r = _report(graded_copies, name, "solution")
    assert [c["check"] for c in r["checks"] if not c["passed"]] == [], r["checks"]
    assert r["checks"] and {c["kind"] for c in r["checks"]} == {"public", "hidden"}
    assert [e for e in r["errors"] if not e.startswith("note:")] == []   # no error in the solution's own cells
    assert (r["status"], r["points"], r["flags"]) == ("graded", r["max_points"], [])


@pytest.mark.slow
def test_a_korean_solution_copy_earns_what_the_english_one_does(graded_copies):
    ko, en = (_report(graded_copies, KOREAN_GRADED, s) for s in ("solution_ko", "solution"))
    assert (ko["status"], ko["points"], ko["flags"]) == ("graded", ko["max_points"], [])
    assert [(c["check"], c["kind"], c["passed"], c["points"]) for c in ko["checks"]] == \
        [(c["check"], c["kind"], c["passed"], c["points"]) for c in en["checks"]]
    assert ko["errors"] == en["errors"]   # the note that a solution copy was handed in, nothing else


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


def _answered(copies: dict) -> nbformat.NotebookNode:
    """The student copy with the worked solution in its solution cells: what a good student hands in."""
    nb = copy.deepcopy(copies["student"])
    for mine, theirs in zip(_cells(nb, SOLUTION), _cells(copies["solution"], SOLUTION)):
        mine.source = theirs.source
    return nb


def _edit(nb, edit) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    edit(nb)
    return nb


def _set_solution(nb, index: int, source: str) -> None:
    _cells(nb, SOLUTION)[index].source = source


def _no_metadata(nb) -> None:
    del nb.metadata["vrs_edu"]


def _insert(cell_source: str, at: int = 2):
    return lambda nb: nb.cells.insert(at, nbformat.v4.new_code_cell(cell_source))


HANG_T9 = ("def attention_pattern(q, k):\n"
           "    if q.size(-2) == 9:  # only the hidden causality check uses T = 9\n"
           "        while True:\n"
           "            pass\n"
           "    T, Dh = q.size(-2), q.size(-1)\n"
           "    scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)\n"
           "    return scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float('-inf')).softmax(-1)\n")
STUBBORN_T9 = HANG_T9.replace("        while True:\n            pass\n",
                              "        import time\n        while True:\n            try:\n                time.sleep(1)\n"
                              "            except KeyboardInterrupt:\n                pass\n")
TAMPER = ("\nimport vrs_edu.course.exercises.ch02 as _c\n_c.check_attention_pattern = lambda *a, **k: True\n"
          "_c.check_attend = lambda *a, **k: True\ntorch.allclose = lambda *a, **k: True\n")
STUCK_CELL = "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except KeyboardInterrupt:\n        pass"


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class handed in as the README says (collected/<student>/NN_name.ipynb or collected/<student>.ipynb) with
    every case a teacher meets, graded in one CLI call; then dave's notebook regraded with --assignment."""
    root = tmp_path_factory.mktemp("class")
    c00 = make_copies(next(a for a in ASSIGNMENTS if a.name == "00_stream_norms"))
    c02 = make_copies(next(a for a in ASSIGNMENTS if a.name == "02_causal_attention"))
    right00, right02 = _answered(c00), _answered(c02)
    wrong00 = _edit(right00, lambda nb: _set_solution(
        nb, 0, _cells(right00, SOLUTION)[0].source.replace("norm(dim=-1)", "pow(2).sum(-1)")))
    noscale02 = _edit(right02, lambda nb: _set_solution(
        nb, 0, _cells(right02, SOLUTION)[0].source.replace("/ math.sqrt(Dh)", "")))

    def tamper(nb):  # the first code cell rebinds the checkers and torch.allclose
        next(c for c in nb.cells if c.cell_type == "code").source += TAMPER

    def bob(nb):     # a wrong answer, its check cell edited to say True
        _cells(nb, PUBLIC)[0].source = "True  # edited"

    def deleted_check(nb):
        nb.cells.remove(_cells(nb, PUBLIC)[0])

    def reference(nb):  # attention_pattern *is* the reference; attend is the student's own
        _set_solution(nb, 0, "from vrs_edu.nn.attention import attention_pattern")

    subs = {
        "alice/00_stream_norms.ipynb": _edit(right00, deleted_check),
        "alice/old/00_stream_norms.ipynb": "{ not JSON",                       # a second, broken file of alice's
        "bob.ipynb": _edit(wrong00, bob),
        "carol/02_causal_attention.ipynb": _edit(noscale02, lambda nb: (_no_metadata(nb), tamper(nb))),
        "dave/notes.ipynb": _edit(right00, _no_metadata),                       # no metadata, no telling name
        "erin/02_causal_attention.ipynb": _edit(right02, reference),
        "frank/02_causal_attention.ipynb": _edit(right02, lambda nb: _set_solution(nb, 0, HANG_T9)),
        "gina/02_causal_attention.ipynb": _edit(right02, lambda nb: _set_solution(nb, 0, STUBBORN_T9)),
        "hank.ipynb": "{ not JSON",
        "ivan/00_stream_norms.ipynb": _edit(right00, lambda nb: _set_solution(
            nb, 0, _cells(right00, SOLUTION)[0].source.replace("return", "return ("))),
        "judy/00_stream_norms.ipynb": _edit(right00, _insert("import os\nos._exit(1)")),
        "ken/00_stream_norms.ipynb": _edit(right00, _insert("while True:\n    pass")),
        "leo/00_stream_norms.ipynb": _edit(right00, _insert(STUCK_CELL)),
    }
    for name, nb in subs.items():
        path = root / "collected" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(nb) if isinstance(nb, str) else nbformat.write(nb, path)
    grades = root / "grades"
    # A short per-cell limit for the loops and hangs (2 s, as the teacher's week and the endless-loop test use: the
    # honest cells take milliseconds); the course's imports are preloaded outside it.
    _grade(grades, root / "collected", timeout=2, total_timeout=60)
    first = (grades / "summary.csv").read_text()
    _grade(grades, root / "collected" / "dave" / "notes.ipynb", assignment="00_stream_norms", timeout=2,
           total_timeout=60)
    return grades, first


def _rows(text: str) -> list[dict]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(text)))


# student, assignment, status, points, max points, flagged?  (the summary's rows, in its order)
CLASS_TABLE = [
    ("alice", "00_stream_norms", "graded", 4, 4, False),
    ("alice", "00_stream_norms", "unreadable", 0, 4, False),
    ("bob", "00_stream_norms", "graded", 0, 4, False),
    ("dave", "00_stream_norms", "graded", 4, 4, False),
    ("ivan", "00_stream_norms", "graded", 0, 4, False),
    ("judy", "00_stream_norms", "graded", 4, 4, False),   # the cell that killed the kernel is skipped
    ("ken", "00_stream_norms", "graded", 4, 4, False),
    ("leo", "00_stream_norms", "graded", 4, 4, False),
    ("carol", "02_causal_attention", "graded", 5, 9, True),
    ("erin", "02_causal_attention", "graded", 4, 9, True),
    ("frank", "02_causal_attention", "graded", 8, 9, False),
    ("gina", "02_causal_attention", "graded", 8, 9, False),
    ("hank", "unknown", "unreadable", 0, 0, False),
]


@pytest.mark.slow
def test_the_class_summary_has_one_honest_row_per_handed_in_file(graded_class):
    grades, first = graded_class
    rows = _rows((grades / "summary.csv").read_text())
    got = [(r["student"], r["assignment"], r["status"], float(r["points"]), float(r["max_points"]),
            int(r["flags"]) > 0) for r in rows]
    assert got == [(s, a, st, float(p), float(m), f) for s, a, st, p, m, f in CLASS_TABLE]
    assert len({r["submission"] for r in rows}) == len(rows) == 13, "one row per collected file"
    before = {(r["student"], r["assignment"]): r for r in _rows(first)}
    assert before["dave", "unknown"]["status"] == "unknown assignment", "no metadata, no telling name: asks for it"
    assert ("dave", "00_stream_norms") not in before
    assert ("dave", "unknown") not in {(r["student"], r["assignment"]) for r in rows}, "the regrade left a stale row"


@pytest.mark.slow
def test_two_files_of_one_student_keep_both_rows(graded_class):
    grades, _ = graded_class
    second = _report(grades, "00_stream_norms", "alice~2")
    assert second["student"] == "alice" and second["status"] == "unreadable"
    assert any("handed in 2 files" in e for e in second["errors"])
    first = _report(grades, "00_stream_norms", "alice")
    assert first["points"] == 4 and len(first["checks"]) == 3, "her deleted check cell ran all the same"


@pytest.mark.slow
def test_rebinding_the_checkers_and_torch_cannot_buy_points_and_is_flagged(graded_class):
    r = _report(graded_class[0], "02_causal_attention", "carol")
    assert r["points"] == 5, "the honest grade of the missing scale (the tampering is worth nothing)"
    public = _by_check(r)["attention_pattern_public"]
    assert not public["passed"] and "the scale is missing" in public["message"]
    flags = "\n".join(r["flags"])
    for name in ("torch.allclose", "vrs_edu.course.exercises.ch02.check_attention_pattern",
                 "vrs_edu.course.exercises.ch02.check_attend"):
        assert f"rebound by the learner's cells: " in flags and name in flags, (name, flags)
    assert "cell 2, line 9: _c.check_attention_pattern rebound" in flags


@pytest.mark.slow
def test_the_reference_implementation_earns_no_points_and_is_reported(graded_class):
    r = _report(graded_class[0], "02_causal_attention", "erin")
    checks = _by_check(r)
    for name, c in checks.items():
        if name.startswith("attention_pattern"):
            assert not c["passed"] and c["message"].startswith(
                "no points: attention_pattern uses the course's reference implementation (the check itself passed)")
        else:
            assert c["passed"], c
    assert any(f.startswith("attention_pattern uses the course's reference implementation: cell ")
               and "from vrs_edu.nn.attention import attention_pattern" in f for f in r["flags"]), r["flags"]


@pytest.mark.slow
@pytest.mark.parametrize("student", ["frank", "gina"])
def test_a_hung_check_costs_only_its_own_points(graded_class, student):
    r = _report(graded_class[0], "02_causal_attention", student)
    failed = {name: c["message"] for name, c in _by_check(r).items() if not c["passed"]}
    assert list(failed) == ["attention_pattern_no_future"]
    assert failed["attention_pattern_no_future"].startswith(
        "TimeoutError: attention_pattern ran longer than the check's 2 s limit")


def _by_check(report):
    return {c["check"]: c for c in report["checks"]}


@pytest.mark.slow
def test_a_deleted_or_edited_check_cell_cannot_change_the_grade(graded_class):
    r = _report(graded_class[0], "00_stream_norms", "bob")
    assert r["status"] == "graded" and r["points"] == 0
    public = _by_check(r)["stream_norms_public"]
    assert not public["passed"] and "squared norm" in public["message"], "the canonical check and its hint"
    assert len(r["checks"]) == 3, "every canonical check ran"


@pytest.mark.slow
def test_loops_in_the_learners_cells_are_interrupted_or_skipped_and_the_checks_still_run(graded_class):
    ken = _report(graded_class[0], "00_stream_norms", "ken")
    assert ken["points"] == ken["max_points"]
    assert any(e.startswith("cell 3 of the submission ('while True:'): TimeoutError") for e in ken["errors"])
    leo = _report(graded_class[0], "00_stream_norms", "leo")
    assert leo["points"] == leo["max_points"]
    assert any("ignored the interrupt after 2 s; skipped" in e for e in leo["errors"]), leo["errors"]


@pytest.mark.slow
def test_a_syntax_error_is_reported_and_the_checks_fail_without_crashing_the_grader(graded_class):
    r = _report(graded_class[0], "00_stream_norms", "ivan")
    assert r["status"] == "graded" and r["points"] == 0
    assert any("SyntaxError" in e for e in r["errors"]), r["errors"]
    assert all("NameError: name 'mean_stream_norms' is not defined" in c["message"] for c in r["checks"])


@pytest.mark.slow
def test_a_cell_that_kills_the_kernel_is_skipped_and_the_functions_still_checked(graded_class):
    # before: 0/4, every check 'not run: the kernel died in cell 3', although the function was right
    judy = _report(graded_class[0], "00_stream_norms", "judy")
    assert (judy["status"], judy["points"]) == ("graded", judy["max_points"])
    assert any(e.startswith("cell 3 of the submission ('import os'): the kernel died (the cell exited or crashed the "
                            "Python process); skipped") for e in judy["errors"]), judy["errors"]


@pytest.mark.slow
def test_an_unreadable_file_still_gives_a_report(graded_class):
    grades, _ = graded_class
    r = _report(grades, "unknown", "hank")
    assert r["status"] == "unreadable" and "NotJSONError" in r["errors"][0]
    per_check = (grades / "00_stream_norms" / "bob.csv").read_text().splitlines()
    assert per_check[0] == "student,assignment,check,kind,passed,points,max_points,message"
    assert len(per_check) == 1 + 3


def test_hidden_tests_cannot_be_committed_by_accident():
    import subprocess

    for path in ("grades/02_causal_attention/alice.graded.ipynb", "collected/alice/02_causal_attention.ipynb"):
        assert subprocess.run(["git", "check-ignore", "-q", path], cwd=DEFAULT_OUT.parents[1]).returncode == 0, path


LOOP = ("def attention_pattern(q, k):   # an endless loop that never allocates\n"
        "    while True:\n"
        "        pass\n")
CALL_IT = "attention_pattern(torch.ones(1, 4, 2), torch.ones(1, 4, 2))"


@pytest.mark.slow
def test_an_endless_loop_costs_its_cells_and_its_checks_and_the_report_names_the_cell(tmp_path):
    # found by a teacher's trial: 936 s for limits of 60 s a cell and 300 s in all, the report blaming cell 2
    # ('import torch'), and the student's correct attend() "not run: the learner's cells hit the 300 s limit"
    c02 = make_copies(next(a for a in ASSIGNMENTS if a.name == "02_causal_attention"))
    nb = _answered(c02)
    _set_solution(nb, 0, LOOP)
    at = nb.cells.index(_cells(nb, SOLUTION)[1]) + 1
    for j in range(3):   # three cells that call the loop: one of them ends past the total limit
        nb.cells.insert(at + j, nbformat.v4.new_code_cell(f"{CALL_IT}  # try {j + 1}"))
    path = tmp_path / "collected" / "ada" / "02_causal_attention.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    # 2 s a cell or check, 7 s for the cells in all (kernel start included): the three calls (6 s) run past it
    _grade(tmp_path / "grades", path, timeout=2, total_timeout=7)
    r = _report(tmp_path / "grades", "02_causal_attention", "ada")
    by = _by_check(r)
    assert r["status"] == "time limit"
    loop_cells = [i + 1 for i, c in enumerate(nb.cells) if c.source.startswith(CALL_IT)]
    limit = [e for e in r["errors"] if "learner's cells hit the" in e]
    assert len(limit) == 1, r["errors"]
    named = [n for n in loop_cells if f"limit in cell {n} of the submission" in limit[0]]
    most = [n for n in loop_cells if f"most of it in cell {n} of the submission" in limit[0]]
    # where the time ran out: a cell that calls the loop (not 'import torch'); where it went, if another cell used more
    assert len(named) == 1 and (not most or most != named), (limit, loop_cells)
    assert "most of it" not in limit[0] or most, limit
    assert "the checks still run" in limit[0]
    # the correct function keeps its points; each check of the looping one ends at its own limit
    assert by["attend_public"]["passed"] and by["attend_hidden"]["passed"], by
    pattern = [c for name, c in by.items() if name.startswith("attention_pattern")]
    assert pattern and all("ran longer than the check's 2 s limit" in c["message"] for c in pattern), pattern


def test_one_broken_source_is_named_and_the_others_still_build_list_and_grade(tmp_path, capsys):
    # found by a teacher's trial: one broken draft in sources/ stopped list, build and grade for every assignment
    sources = tmp_path / "sources"
    sources.mkdir()
    for a in ASSIGNMENTS:
        (sources / a.path.name).write_bytes(a.path.read_bytes())
    broken = sources / "02_causal_attention.py"
    broken.write_text(broken.read_text().replace("check_attend(attend)", "print(check_attend(attend))", 1))
    assert vrs_edu_main(["assignments", "build", "--sources", str(sources), "--out", str(tmp_path / "out")]) == 1
    printed = capsys.readouterr()
    assert "broken: assignment 02_causal_attention, cell" in printed.out and "not a boolean" in printed.out
    built = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.ipynb"))
    assert built == sorted(f"{k}/{n}.ipynb" for k in COPIES for n in NAMES if n != "02_causal_attention")
    assert vrs_edu_main(["assignments", "list", "--sources", str(sources)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == len(NAMES) and any(li.startswith("02_causal_attention") and "broken:" in li for li in listed)
    submission = tmp_path / "collected" / "ada" / "02_causal_attention.ipynb"
    submission.parent.mkdir(parents=True)
    submission.write_bytes((DEFAULT_OUT / "student" / "02_causal_attention.ipynb").read_bytes())
    assert vrs_edu_main(["assignments", "grade", str(tmp_path / "collected"), "--sources", str(sources),
                         "--out", str(tmp_path / "grades")]) == 0
    report = json.loads((tmp_path / "grades" / "02_causal_attention" / "ada.json").read_text())
    assert report["status"] == "broken assignment" and "not a boolean" in report["errors"][-1]


@pytest.mark.slow
def test_validate_grades_the_solution_and_names_a_misspelled_function(tmp_path, capsys):
    # found by a teacher's trial: a solution with a misspelled function name built with rc 0, then failed everyone
    sources = tmp_path / "sources"
    sources.mkdir()
    source = next(a for a in ASSIGNMENTS if a.name == "00_stream_norms").path
    (sources / source.name).write_text(source.read_text().replace("def mean_stream_norms(", "def mean_stream_norm(", 1))
    assert vrs_edu_main(["assignments", "validate", "--sources", str(sources)]) == 1
    out = capsys.readouterr().out
    assert "00_stream_norms          NOT VALID" in out and "mean_stream_norms" in out, out


def _solution_calls(assignment) -> set[str]:
    """The functions and methods the worked solution calls, and its operators written as code (``@``)."""
    import ast

    names = set()
    for cell in _cells(make_copies(assignment)["solution"], SOLUTION):
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call):
                f = node.func
                names.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                names.add("@")
    return names - {""}


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=NAMES)
def test_the_hints_point_without_giving_the_code(assignment):
    # found by a teacher's trial: "scores = q @ k.transpose(-2, -1) / sqrt(Dh); ... masked_fill; then softmax"
    calls = _solution_calls(assignment)
    assert calls, "the solution calls nothing: the test reads nothing"
    for hint in _hints(assignment):
        written = sorted(c for c in calls if re.search(rf"(^|[\s.(]){re.escape(c)}(\(|\s|$|[.,;:])", hint)
                         and (c == "@" or f"{c}(" in hint or f".{c}" in hint or f"torch.{c}" in hint))
        assert not written, f"{assignment.name}: the hint writes the solution's {written}: {hint!r}"
        assert "=" not in hint.replace("==", ""), f"{assignment.name}: the hint holds an assignment: {hint!r}"
