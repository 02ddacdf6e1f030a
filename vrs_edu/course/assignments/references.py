"""Which of the course's functions a graded function must not reach: the references its checks compare it with.

Before any student kernel starts, the grader runs every canonical check of an assignment once in its own process,
with each graded function replaced by a stub, and watches (``sys.setprofile``) what the checker
:func:`vrs_edu.course.checks.check_function` is given as ``reference`` — ``attention_pattern`` of
``vrs_edu.nn.attention`` for the attention exercise — and which of the course's functions run inside that reference
(``mix_values`` and ``attend`` inside chapter 03's). Those are the functions a graded function may not call: the
kernel-side monitor (:mod:`.kernel`) flags any call of them, however it is reached. A function the handed-out copy
imports itself (``rms_norm`` in assignments 04 and 05) is the learner's to use, and so is everything that runs inside
it. This run also imports every module the checks need, so a checker changed on disk later cannot change a grade.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import sys
import types
from pathlib import Path

from nbformat import NotebookNode

from vrs_edu.course.assignments import integrity
from vrs_edu.course.assignments.source import SOLUTION, is_test, tags


def _package_dir() -> Path:
    import vrs_edu

    return Path(vrs_edu.__file__).resolve().parent


def _where(code: types.CodeType) -> tuple[str, str] | None:
    """(module, qualified name) of a function of the course's package, from its code object."""
    path = str(Path(code.co_filename).resolve())
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and name.startswith("vrs_edu") and str(Path(file).resolve()) == path:
            return name, getattr(code, "co_qualname", code.co_name)
    return None


def _baseline_codes(student: NotebookNode) -> set[types.CodeType]:
    """Code objects of the course's functions the handed-out copy imports itself."""
    out = set()
    for module, name in integrity.baseline(student.cells):
        with contextlib.suppress(Exception):
            obj = getattr(importlib.import_module(module), name) if name else None
            code = getattr(obj, "__code__", None)
            if isinstance(code, types.CodeType):
                out.add(code)
    return out


def find_references(grader: NotebookNode, student: NotebookNode) -> dict[str, list[tuple[str, str]]]:
    """``{graded function: [(module, qualname), ...]}``: each graded function's references and the course's
    functions that run inside them (see the module docstring). Runs the assignment's checks with stubs."""
    from vrs_edu.course.checks import check_function

    graded = integrity.graded_names(c for c in grader.cells if SOLUTION in tags(c))
    package = str(_package_dir())
    allowed = _baseline_codes(student)
    found: dict[str, list[types.CodeType]] = {}
    refs: dict[types.CodeType, str] = {}      # reference code -> graded name
    stack: list[tuple[types.FrameType, str | None]] = []   # open frames of references / allowed functions

    def profile(frame, event, arg):
        code = frame.f_code
        if event == "call":
            if code is check_function.__code__:
                student_fn, reference = frame.f_locals.get("student"), frame.f_locals.get("reference")
                name = getattr(student_fn, "__name__", None)
                rcode = getattr(reference, "__code__", None)
                if name in graded and isinstance(rcode, types.CodeType):
                    refs[rcode] = name
                    found.setdefault(name, [])
                    if rcode not in found[name]:
                        found[name].append(rcode)
            elif code in refs and not stack:
                stack.append((frame, refs[code]))
            elif stack and code in allowed:
                stack.append((frame, None))
            elif stack and stack[-1][1] is not None and code.co_filename.startswith(package):
                if code not in found[stack[-1][1]]:
                    found[stack[-1][1]].append(code)
        elif event == "return" and stack and stack[-1][0] is frame:
            stack.pop()

    def stub(name):
        def fn(*args, **kwargs):
            raise NotImplementedError("the grader's look-up of the references")
        fn.__name__ = fn.__qualname__ = name
        return fn

    for cell in (c for c in grader.cells if is_test(c)):
        namespace = {"__name__": "__main__", **{n: stub(n) for n in graded}}
        old = sys.getprofile()
        sys.setprofile(profile)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell.source, f"<check {cell.metadata.get('check')}>", "exec"), namespace)
        except Exception:  # noqa: BLE001 — a check fails on stubs; only what it called matters here
            pass
        finally:
            sys.setprofile(old)
            stack.clear()
    out = {}
    for name, codes in found.items():
        out[name] = [w for w in (_where(c) for c in codes if c not in allowed) if w is not None]
    return out


def label(where: tuple[str, str]) -> str:
    return f"{where[0]}.{where[1]}"
