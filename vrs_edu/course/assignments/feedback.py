"""What one student may read after grading: ``<assignment>/<student>.feedback.md`` beside the teacher's report —
the points of each check, the hint of each failed one (the checker's likely mistake, as the student saw it under
the public checks; never a hidden test's code) and the errors of the student's own cells. Like nbgrader's
``generate_feedback``, without the graded notebook, which holds the hidden tests.
"""
from __future__ import annotations


def feedback_markdown(report: dict) -> str:
    """A student's feedback from one JSON report: points, each check with the hint of a failed one, and the
    errors of the student's own cells. Nothing of the hidden tests but their names and messages."""
    lines = [f"# {report['assignment']}: feedback for {report['student']}", "",
             f"**{report['points']:g} of {report['max_points']:g} points** "
             f"({report.get('checks_passed', 0)} of {report.get('checks_total', 0)} checks passed)", ""]
    if report["status"] != "graded":
        lines += [f"Status: {report['status']}.", ""]
    if report.get("checks"):
        lines += ["| check | kind | points | what to look at |", "|---|---|---|---|"]
        for c in report["checks"]:
            hint = "" if c["passed"] else (c.get("message") or "failed").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {c['check']} | {c['kind']} | {c['points']:g} / {c['max_points']:g} | "
                         f"{'passed' if c['passed'] else hint} |")
        lines.append("")
    own = [e for e in report.get("errors", []) if not e.startswith("note:")]
    if own:
        lines += ["## Errors in your cells", ""] + [f"- {e.splitlines()[0]}" for e in own] + [""]
    if report.get("flags"):
        lines += [f"Your teacher has {len(report['flags'])} note(s) on this notebook to go through with you.", ""]
    return "\n".join(lines)
