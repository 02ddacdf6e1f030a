"""Validation of assignment sources: each assignment's solution copy graded as a student's would be (public and
hidden checks, in a kernel of its own), which must earn full marks. It finds what the source's own rules
(:func:`.source.validate`) cannot: a misspelled function name, a check that relies on the notebook's `import torch`
(check cells run in the grader's process, see the teacher's guide), a check whose value is not a boolean.
``vrs-edu assignments build`` runs it after writing; ``vrs-edu assignments validate`` runs it alone.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat

from vrs_edu.course.assignments.build import make_copies
from vrs_edu.course.assignments.grade import grade_submission, grading_session
from vrs_edu.course.assignments.source import SOURCES, discover


def validate_solutions(sources: str | Path | None = SOURCES, names: list[str] | None = None,
                       isolate: bool = True) -> dict[str, list[str]]:
    """Grade the solution copy of every assignment in ``sources`` (or of ``names``).

    Returns ``{name: problems}``: empty for a solution that earns every point, else one line per failed check (its
    message, cell as in the grader's reports) or per error of the solution's own cells. A broken source is one
    problem. Raises ValueError for a name that is not an assignment."""
    assignments = discover(sources)
    known = [a.name for a in assignments]
    unknown = [n for n in names or () if n not in known]
    if unknown:
        raise ValueError(f"no assignment named {unknown[0]!r}; known: {', '.join(known) or 'none'}")
    chosen = [a for a in assignments if names is None or a.name in names]
    problems: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="vrs-edu-validate-") as tmp:
        folder = Path(tmp) / "solutions"
        paths = {}
        for a in chosen:
            try:
                solution = make_copies(a)["solution"]
            except ValueError as e:
                problems[a.name] = [str(e)]
                continue
            paths[a.name] = folder / "solution" / f"{a.name}.ipynb"
            paths[a.name].parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(solution, paths[a.name])
        if not paths:
            return problems
        with grading_session(sources, submissions=[folder], isolate=isolate) as session:
            for name, path in paths.items():
                r = grade_submission(path, assignment=name, student="solution", session=session)
                found = [f"{c.check}: {c.message or 'failed'}" for c in r.checks if not c.passed]
                found += [f"the solution's cells: {e}" for e in r.errors if not e.startswith("note:")]
                if r.points < r.max_points and not found:
                    found.append(f"{r.points:g} of {r.max_points:g} points ({r.status})")
                problems[name] = found
    return problems
