"""A teacher's week, end to end, as the teacher's guide walks it: build -> validate -> hand out the student copy ->
collect a class of 5 from a learning platform's download (Canvas names, one file marked late, one a browser's copy
"(1)") with a roster of 6 -> grade (one endless loop among them) -> export the gradebook -> each student's feedback.
"""
import csv
import json
import time

import nbformat
import pytest

from test_assignments import _answered, _cells, _set_solution
from vrs_edu.cli import main as vrs_edu_main
from vrs_edu.course.assignments.build import make_copies
from vrs_edu.course.assignments.source import HIDDEN, SOLUTION, discover

NAME = "00_stream_norms"
LOOP = ("def mean_stream_norms(stack):   # an endless loop\n"
        "    while True:\n"
        "        pass\n")


@pytest.mark.slow
def test_a_teachers_week_from_build_to_feedback(tmp_path, capsys):
    sources = tmp_path / "sources"
    sources.mkdir()
    source = next(a for a in discover() if a.name == NAME)
    (sources / source.path.name).write_bytes(source.path.read_bytes())
    # build (and grade the solution copy: it must earn every point), then hand out the student copy
    assert vrs_edu_main(["assignments", "build", "--sources", str(sources), "--out", str(tmp_path / "built")]) == 0
    assert f"{NAME:24s} valid: the solution earns every point" in capsys.readouterr().out
    copies = make_copies(discover(sources)[0])
    right = _answered(copies)
    wrong = nbformat.from_dict(json.loads(nbformat.writes(right)))
    _set_solution(wrong, 0, _cells(right, SOLUTION)[0].source.replace("norm(dim=-1)", "pow(2).sum(-1)"))
    looping = nbformat.from_dict(json.loads(nbformat.writes(right)))
    _set_solution(looping, 0, LOOP)
    looping.cells.insert(looping.cells.index(_cells(looping, SOLUTION)[0]) + 1,
                         nbformat.v4.new_code_cell("mean_stream_norms(torch.ones(2, 1, 1, 2))"))
    download = tmp_path / "download"   # Canvas's "Download Submissions", unzipped
    download.mkdir()
    for file, nb in {"ann_48211_1736640_00_stream_norms.ipynb": right,
                     "bo_48212_1736641_00_stream_norms-1.ipynb": wrong,          # a resubmission
                     "cy_48213_1736642_00_stream_norms.ipynb": looping,
                     "dee_LATE_48214_1736643_00_stream_norms.ipynb": right,      # marked late
                     "eve_48215_1736644_00_stream_norms (1).ipynb": right}.items():  # a browser's copy
        nbformat.write(nb, download / file)
    roster = tmp_path / "students.csv"
    roster.write_text("student,email\nann,a@school\nbo,b@school\ncy,c@school\ndee,d@school\neve,e@school\n"
                      "fay,f@school\n")
    t0 = time.monotonic()
    assert vrs_edu_main(["assignments", "grade", str(download), "--sources", str(sources), "--out",
                         str(tmp_path / "grades"), "--names", "canvas", "--roster", str(roster),
                         "--timeout", "2", "--total-timeout", "20"]) == 0
    took = time.monotonic() - t0
    printed = capsys.readouterr().out
    print(f"5 notebooks (one endless loop) graded in {took:.1f} s")   # for the closing note (-s shows it)
    assert "fay              00_stream_norms        0/" in printed and "missing" in printed
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "grades" / "summary.csv").open())}
    assert sorted(rows) == ["ann", "bo", "cy", "dee", "eve", "fay"]
    points = {s: float(r["points"]) for s, r in rows.items()}
    full = float(rows["ann"]["max_points"])
    assert points["ann"] == points["dee"] == points["eve"] == full > points["bo"]
    assert points["cy"] == 0 and points["fay"] == 0 and rows["fay"]["status"] == "missing"
    reports = {s: json.loads((tmp_path / "grades" / NAME / f"{s}.json").read_text()) for s in rows}
    assert reports["dee"]["late"] and reports["dee"]["errors"][0] == "late: the platform marked the submission late"
    assert not reports["ann"]["late"]
    loop_note = [e for e in reports["cy"]["errors"] if "TimeoutError" in e or "limit" in e]
    assert loop_note and "mean_stream_norms(torch.ones" in loop_note[0], reports["cy"]["errors"]
    # export: one row per roster student, missing as 0
    assert vrs_edu_main(["assignments", "export", "--grades", str(tmp_path / "grades"), "--roster", str(roster)]) == 0
    book = list(csv.DictReader((tmp_path / "grades" / "gradebook.csv").open()))
    assert [r["student"] for r in book] == ["ann", "bo", "cy", "dee", "eve", "fay"]
    assert (book[-1][NAME], book[-1][f"{NAME} status"], book[-1]["total"]) == ("0", "missing", "0")
    assert len({r[f"{NAME} version"] for r in book}) == 1
    # feedback: what each student may read, without the hidden tests' code
    hidden = [c.source for c in copies["grader"].cells if HIDDEN in c.metadata.get("tags", [])]
    feedback = (tmp_path / "grades" / NAME / "bo.feedback.md").read_text()
    assert "of " in feedback and "points" in feedback and "stream_norms_public" in feedback
    assert hidden and not any(line.strip() in feedback for src in hidden for line in src.splitlines()
                              if len(line.strip()) > 12)
    # fay hands in late: graded with the roster again, she has one row, her file's, not "missing" beside it
    late = tmp_path / "late"
    late.mkdir()
    nbformat.write(right, late / "fay_48216_1736660_00_stream_norms.ipynb")
    assert vrs_edu_main(["assignments", "grade", str(late), "--sources", str(sources), "--out",
                         str(tmp_path / "grades"), "--names", "canvas", "--roster", str(roster), "--timeout", "2"]) == 0
    again = {r["student"]: r for r in csv.DictReader((tmp_path / "grades" / "summary.csv").open())}
    assert sorted(again) == sorted(rows)   # one row each: the others' earlier reports stay as they were graded
    assert (again["fay"]["status"], float(again["fay"]["points"])) == ("graded", full)
    assert {s: float(r["points"]) for s, r in again.items() if s != "fay"} == {s: p for s, p in points.items()
                                                                               if s != "fay"}
