"""What a teacher hands on after grading: the class's gradebook.

* :func:`export` — ``gradebook.csv``: one row per student (the roster's, then anyone else graded), one column of
  points per assignment and one of the assignment's version (a hash of its source: a row graded against an older
  source shows another), the total and its maximum; a missing submission is 0 and "missing". Warnings name the
  columns graded against more than one version, and the students with several files for one assignment (the
  latest graded counts), as nbgrader's ``export`` and gradebook do.
(Each student's feedback file is :mod:`.feedback`'s, written beside the report at grading.)

A roster is a CSV file with a ``student`` column (other columns are ignored), one row per student of the class,
names as the grader writes them (:func:`.grade.safe_name`).
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from vrs_edu.course.assignments.grade import safe_name

MISSING = "missing"


def read_roster(path: str | Path) -> list[str]:
    """The students of a roster CSV (its ``student`` column), in its order, as the grader names them.

    Raises ValueError naming the file when the column is missing or a name is empty or listed twice."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    if not rows or "student" not in rows[0]:
        raise ValueError(f"roster {path}: expected a CSV file with a 'student' column, got columns "
                         f"{list(rows[0]) if rows else '(an empty file)'}")
    empty = [i + 2 for i, r in enumerate(rows) if not (r["student"] or "").strip()]
    if empty:
        raise ValueError(f"roster {path}: row {empty[0]} has no student name")
    names = [safe_name(r["student"].strip()) for r in rows]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"roster {path}: {', '.join(twice)} listed twice")
    return names


@dataclass
class Gradebook:
    assignments: list[str]
    rows: list[dict]                       # student, {assignment: (points, max, version, status)}, on_roster
    warnings: list[str] = field(default_factory=list)


def gradebook(grades: str | Path, roster: list[str] = (), assignments: list[str] = ()) -> Gradebook:
    """The class's grades from the JSON reports under ``grades`` (``<assignment>/<key>.json``): for each student
    and assignment the latest graded report; a student of ``roster`` without one is missing (0 points). Columns:
    ``assignments`` if given, else every assignment graded."""
    reports: dict[tuple[str, str], list[tuple[float, dict]]] = {}
    for p in sorted(Path(grades).glob("*/*.json")):
        try:
            r = json.loads(p.read_text())
            key = (str(r["student"]), str(r["assignment"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if key[1] == "unknown":
            continue
        reports.setdefault(key, []).append((p.stat().st_mtime, r))
    columns = list(assignments) or sorted({a for _, a in reports})
    maxima = {a: max((r["max_points"] for (_, b), rs in reports.items() if b == a for _, r in rs), default=0.0)
              for a in columns}
    students = list(roster) + sorted({s for s, _ in reports if s not in roster})
    book = Gradebook(columns, [])
    for a in columns:
        versions = sorted({r.get("version", "") for (_, b), rs in reports.items() if b == a for _, r in rs} - {""})
        if len(versions) > 1:
            book.warnings.append(f"{a}: graded against {len(versions)} versions of its source ({', '.join(versions)})"
                                 ": regrade the older rows, or compare them knowing that")
    for s in students:
        cells = {}
        for a in columns:
            found = sorted(reports.get((s, a), []), key=lambda t: t[0])
            if not found:
                cells[a] = (0.0, maxima[a], "", MISSING)
                continue
            if len(found) > 1:
                book.warnings.append(f"{s}: {len(found)} graded files for {a}; the latest graded counts")
            r = found[-1][1]
            status = r["status"] + (", late" if r.get("late") else "")
            cells[a] = (float(r["points"]), float(r["max_points"]), r.get("version", ""), status)
        book.rows.append({"student": s, "cells": cells, "on_roster": not roster or s in roster})
    return book


def write_gradebook(book: Gradebook, path: str | Path) -> Path:
    """``gradebook.csv``: student, then per assignment its points, status and version, then total and max."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", *[f"{a}{suffix}" for a in book.assignments for suffix in ("", " status", " version")],
                    "total", "max total", "on roster"])
        for row in book.rows:
            cells = [row["cells"][a] for a in book.assignments]
            w.writerow([row["student"], *[x for pts, _, version, status in cells for x in (f"{pts:g}", status, version)],
                        f"{sum(c[0] for c in cells):g}", f"{sum(c[1] for c in cells):g}",
                        "yes" if row["on_roster"] else "no"])
    return path
