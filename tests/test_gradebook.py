"""After grading: platform names mapped to students, late files flagged, the class's gradebook (roster, missing as
0, versions) and each student's feedback — on files and reports written here by hand (no kernel)."""
import csv
import datetime as dt
import json
import os
import re

import pytest

from vrs_edu.course.assignments.collection import PLATFORMS, copy_stem, late_note, name_pattern, platform_name
from vrs_edu.course.assignments.feedback import feedback_markdown
from vrs_edu.course.assignments.gradebook import gradebook, read_roster, write_gradebook


@pytest.mark.parametrize("file, expected", [
    # Canvas's "Download Submissions": login, LATE when late, user id, submission id, then the student's file name
    ("grace_LATE_48213_1736650_02_causal_attention-1.ipynb", ("grace", "02_causal_attention", True)),
    ("henry_48214_1736651_02_causal_attention.ipynb", ("henry", "02_causal_attention", False)),
])
def test_canvas_download_names_give_the_student_the_file_and_the_late_mark(tmp_path, file, expected):
    assert platform_name(tmp_path / file, name_pattern("canvas")) == expected


def test_moodle_names_and_a_teachers_own_pattern():
    assert platform_name("Ann Lee_1234_assignsubmission_file_00_stream_norms.ipynb", name_pattern("moodle")) == \
        ("Ann Lee", "00_stream_norms", False)
    own = name_pattern(r"(?P<student>[a-z]+)-(?P<file>\d\d_\w+)")
    assert platform_name("ivan-00_stream_norms.ipynb", own) == ("ivan", "00_stream_norms", False)
    assert platform_name("notes.ipynb", own) is None
    assert set(PLATFORMS) == {"canvas", "moodle"}


def test_a_pattern_without_a_student_or_not_a_pattern_is_refused_in_one_line():
    with pytest.raises(ValueError, match=re.escape("argument --names: the pattern needs a group (?P<student>...)")):
        name_pattern(r"(?P<file>.+)")
    with pytest.raises(ValueError, match="argument --names: expected canvas or moodle or a regular expression"):
        name_pattern("(unclosed")


def test_a_browsers_or_a_platforms_copy_suffix_is_not_part_of_the_name():
    assert copy_stem("02_causal_attention (1)") == copy_stem("02_causal_attention-1") == "02_causal_attention"
    assert copy_stem("ann") == "ann"


def test_a_file_modified_after_the_deadline_is_late_by_its_hours(tmp_path):
    deadline = dt.datetime(2026, 12, 10, 23, 59, tzinfo=dt.timezone.utc)
    f = tmp_path / "a.ipynb"
    f.write_text("{}")
    os.utime(f, (deadline.timestamp() + 5400, deadline.timestamp() + 5400))   # 1.5 h after
    assert late_note(f, deadline).startswith("late: modified 2026-12-11 01:29, 1.5 h after the deadline")
    os.utime(f, (deadline.timestamp() - 60, deadline.timestamp() - 60))
    assert late_note(f, deadline) == "" and late_note(f, None) == ""
    assert late_note(f, None, marked=True) == "late: the platform marked the submission late"


def _report(folder, student, assignment, points, max_points=4.0, version="aaaaaaaaaaaa", status="graded",
            checks=(), errors=(), flags=()):
    path = folder / assignment / f"{student}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    checks = list(checks)
    path.write_text(json.dumps({"student": student, "assignment": assignment, "status": status, "points": points,
                                "max_points": max_points, "version": version, "checks": checks,
                                "errors": list(errors), "flags": list(flags),
                                "checks_passed": sum(c["passed"] for c in checks), "checks_total": len(checks)}))
    return path


def test_the_gradebook_has_a_row_per_roster_student_missing_as_zero_and_warns_of_two_versions(tmp_path):
    grades = tmp_path / "grades"
    _report(grades, "ann", "00_stream_norms", 4)
    _report(grades, "bo", "00_stream_norms", 1, version="bbbbbbbbbbbb")     # graded against another source
    _report(grades, "ann", "02_causal_attention", 7, max_points=9)
    _report(grades, "zed", "02_causal_attention", 9, max_points=9)           # not on the roster
    roster = tmp_path / "students.csv"
    roster.write_text("student,email\nann,a@x\nbo,b@x\ncy,c@x\n")
    book = gradebook(grades, read_roster(roster))
    path = write_gradebook(book, tmp_path / "gradebook.csv")
    rows = {r["student"]: r for r in csv.DictReader(path.open())}
    assert list(rows) == ["ann", "bo", "cy", "zed"]
    assert (rows["ann"]["total"], rows["ann"]["max total"]) == ("11", "13")
    assert (rows["bo"]["02_causal_attention"], rows["bo"]["02_causal_attention status"]) == ("0", "missing")
    assert (rows["cy"]["total"], rows["cy"]["max total"]) == ("0", "13")   # nothing handed in: 0 of 13
    assert rows["zed"]["on roster"] == "no" and rows["ann"]["on roster"] == "yes"
    assert rows["bo"]["00_stream_norms version"] == "bbbbbbbbbbbb"
    assert book.warnings == ["00_stream_norms: graded against 2 versions of its source (aaaaaaaaaaaa, "
                             "bbbbbbbbbbbb): regrade the older rows, or compare them knowing that"]


@pytest.mark.parametrize("text, message", [
    ("name\nann\n", "expected a CSV file with a 'student' column, got columns ['name']"),
    ("student\nann\n\n  \n", "row 3 has no student name"),
    ("student\nann\nann\n", "ann listed twice"),
])
def test_a_roster_without_students_is_refused_naming_the_file(tmp_path, text, message):
    roster = tmp_path / "r.csv"
    roster.write_text(text)
    with pytest.raises(ValueError, match=re.escape(f"roster {roster}: {message}")):
        read_roster(roster)


def test_feedback_gives_points_hints_and_own_errors_but_no_test_code():
    report = {"student": "ann", "assignment": "02_causal_attention", "status": "graded", "points": 3.0,
              "max_points": 9.0, "checks_passed": 2, "checks_total": 3,
              "checks": [{"check": "attention_pattern_public", "kind": "public", "passed": True, "points": 1.0,
                          "max_points": 1.0, "message": ""},
                         {"check": "attention_pattern_hidden", "kind": "hidden", "passed": False, "points": 0.0,
                          "max_points": 2.0, "message": "the scale is missing: look at how the scores are divided"},
                         {"check": "attend_public", "kind": "public", "passed": True, "points": 2.0,
                          "max_points": 2.0, "message": ""}],
              "errors": ["note: graded as 02_causal_attention", "cell 4 of the submission ('x = y'): NameError: y"],
              "flags": ["imports the course's code: ..."]}
    text = feedback_markdown(report)
    assert "**3 of 9 points** (2 of 3 checks passed)" in text
    assert "| attention_pattern_hidden | hidden | 0 / 2 | the scale is missing: look at how the scores are divided |" \
        in text
    assert "- cell 4 of the submission ('x = y'): NameError: y" in text and "note:" not in text
    assert "1 note(s) on this notebook" in text and "imports the course's code" not in text


def test_a_bad_roster_or_name_pattern_is_one_line_before_any_work(tmp_path, capsys):
    from vrs_edu.cli import main as vrs_edu_main

    roster = tmp_path / "r.csv"
    roster.write_text("name\nann\n")
    (tmp_path / "grades").mkdir()
    with pytest.raises(SystemExit) as stop:
        vrs_edu_main(["assignments", "export", "--grades", str(tmp_path / "grades"), "--roster", str(roster)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --roster: roster {roster}: expected a CSV file with a 'student' column" in err
    assert not (tmp_path / "grades" / "gradebook.csv").exists()
    nb = tmp_path / "ann.ipynb"
    nb.write_text("{}")
    with pytest.raises(SystemExit):
        vrs_edu_main(["assignments", "grade", str(nb), "--out", str(tmp_path / "g"), "--names", "(?P<file>.+)"])
    assert "argument --names: the pattern needs a group (?P<student>...)" in capsys.readouterr().err
