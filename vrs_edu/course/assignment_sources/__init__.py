"""Assignment sources (jupytext py:percent), one per assignment: ``vrs-edu assignments build`` turns each into
student, solution and grader notebooks. The files are notebooks, not modules: nothing imports them (their names
start with a digit). See :mod:`vrs_edu.course.assignments.source` for the cell tags and solution markers."""
