"""The auto-checked exercises, one module per chapter (``ch00``, ``ch01``, ...). Each exposes
``check_<name>(fn, **kw)`` built on :func:`vrs_edu.course.checks.check_function`; the reference solutions come from
the package itself. Import them as ``from vrs_edu.course.exercises.ch01 import check_residual_stack``."""
