"""Classroom assignments: one source per assignment, generated student / solution / grader notebooks, grading.

* :mod:`.source` — the source format (jupytext py:percent in the teacher's folder ``data/assignments/sources/``, not
  in the package: students install no solutions and no hidden tests): cell tags ``solution``, ``public-test``,
  ``hidden-test`` and the ``### BEGIN SOLUTION`` / ``### HINT:`` / ``### END SOLUTION`` markers.
* :mod:`.build` — ``build()`` writes ``data/assignments/{student,solution,grader}/<name>.ipynb`` (deterministic).
* :mod:`.grade` — ``grade_submission()`` runs a submission's cells in a fresh kernel (:mod:`.kernel`) in a sandbox of
  its own (:mod:`.sandbox`, :mod:`.jail`), the canonical checks in the grader's own process (:mod:`.remote`), reads
  whether the graded functions are the learner's own code (:mod:`.integrity`), and writes JSON/CSV reports.
* :mod:`.cli` — ``vrs-edu assignments list | build | grade``, whose ``add_commands`` the ``vrs-edu`` command
  (:mod:`vrs_edu.cli`) calls.
"""
