"""Grade submitted notebooks: run the learner's cells in a fresh, isolated kernel, run the canonical checks in the
grader's own process, write a report per student.

Before the first submission (:func:`grading_session`) the grader runs every canonical check once with stubs, which
imports every module the checks need into its own process and finds the references each graded function is compared
with (:mod:`.references`); it hashes the course's files (:mod:`.course_files`); and, running as root, it prepares the
sandbox each kernel runs in (:mod:`.sandbox`, :mod:`.jail`). For one submission the grader then

1. reads the notebook (an unreadable file gets a report that says so) and decides which assignment it is: the
   notebook's metadata, else its file name, else the teacher's ``--assignment``, else a report that asks for it;
2. reads the learner's code (:mod:`.integrity`): a graded function that is the course's reference implementation
   (imported, or called from the learner's function) is flagged and, by default, earns no points; statements that
   rebind a library's or the course's names (``torch.allclose = ...``) are flagged;
3. runs the learner's cells top to bottom in a fresh kernel (nbclient; ``VRS_EDU_THREADS=1``, a temporary working
   folder that is also its home) without their check cells, in a sandbox of its own when isolated. Each cell has
   ``cell_timeout`` seconds; a cell that runs over is interrupted and the run goes on; a cell that ignores the
   interrupt, or kills the kernel, is skipped: the kernel is restarted and the cells before it run again. All of
   this (kernel start included) must fit in ``total_timeout``;
4. runs every canonical public *and* hidden check, rebuilt from the assignment's source, in **the grader's
   process**, where the learner's code cannot rebind the checkers, the reference or ``torch``. Only the learner's
   functions run in the kernel: each call sends its arguments to the kernel and reads back what the function
   returned (tensors and plain values only: ``torch.load(weights_only=True)``, never an arbitrary pickle; checked
   for size before any check computes on it), and the kernel's monitor says, in a signed report, whether the call
   reached a reference (however: an import, ``sys.modules``, ``getattr``, ``exec``, a copy of its code); such a
   check earns no points (``allow_reference`` gives them) and is flagged, as is a missing or unsigned report. A
   check passes when it raises nothing and its last line evaluates to ``True``. Each check has ``cell_timeout``
   seconds of its own: a function that hangs costs the checks that call it, not the others (a kernel that stops
   answering is restarted and the learner's cells run again before the next check);
5. compares the course's files with their hashes: a changed file flags the submission and is put back, so every
   later submission is graded against the untouched course (isolated, the kernel sees them read-only: a change
   stops the grading); the sandbox is removed with everything the submission started or wrote;
6. writes ``OUT/<assignment>/<student>.json`` (it starts with how the kernel was isolated) and ``.csv`` (checks,
   points, messages, flags), the executed ``<student>.graded.ipynb`` (teacher only: it contains the hidden tests),
   and ``OUT/summary.csv`` with one row per submitted file, rebuilt from every JSON report under ``OUT``. A report
   replaces any earlier report of the same submitted file (a regrade under another assignment name leaves no stale
   row).

Limits. Not isolated (not root, or ``--no-isolation``), the learner's code runs with your permissions: it can read
the teacher's sources and hidden tests (the reports say so at the top). The checks compare values the learner's
functions return, so a function that computes the right values by its own code — including a copy of the reference
pasted in and edited — passes them; the monitor lives in the learner's process and code written against it can
defeat it. Read the flags and the graded notebook of any surprising grade.
"""
from __future__ import annotations

import asyncio
import contextlib
import copy
import csv
import hashlib
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError
from nbconvert.preprocessors import ClearOutputPreprocessor
from nbformat import NotebookNode

from vrs_edu.course.assignments import integrity, sandbox
from vrs_edu.course.assignments.build import DEFAULT_OUT, make_copies, notebook_bytes
from vrs_edu.course.assignments.collection import copy_stem
from vrs_edu.course.assignments.course_files import CourseFiles
from vrs_edu.course.assignments.feedback import feedback_markdown
from vrs_edu.course.assignments.kernel import TIMEOUT_ENAME, Kernel, preload_cell
from vrs_edu.course.assignments.references import find_references, label
from vrs_edu.course.assignments.remote import CheckRunner, free_names
from vrs_edu.course.assignments.source import HIDDEN, PUBLIC, SOLUTION, SOURCES, discover, find, is_test, tags

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_MESSAGE = 500
PRELOAD_TIMEOUT = 180.0   # the first cell imports torch & co.: not the learner's time
MAX_RESTARTS = 2          # kernel restarts per submission (stuck cells, hung or crashing functions)


@dataclass
class CheckResult:
    check: str
    kind: str            # public | hidden
    passed: bool
    points: float
    max_points: float
    message: str = ""    # why it failed: the checker's hint, the error raised, or why it did not run


@dataclass
class Report:
    student: str
    assignment: str
    submission: str
    status: str          # graded | time limit | kernel died | unreadable | unknown assignment | broken assignment |
    #                      grader error
    points: float = 0.0
    max_points: float = 0.0
    checks: list[CheckResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)   # errors raised by the learner's own cells, and notes
    flags: list[str] = field(default_factory=list)    # reference use, rebound names: what a teacher should read
    wall_s: float = 0.0
    key: str = ""        # the reports' file name in OUT/<assignment>/ (the student, or student~2 for a 2nd file)
    version: str = ""    # the assignment's version graded against: a hash of its source (12 hex digits)
    late: bool = False   # handed in after --deadline, or marked late by the platform (the note says which)
    isolation: dict = field(default_factory=dict)   # how the kernel was isolated (sandbox.Isolation.to_dict)
    graded: NotebookNode | None = field(default=None, repr=False)   # the executed notebook (not in the JSON)
    stop: str = field(default="", repr=False)   # why no further notebook may be graded (not in the JSON)

    @property
    def checks_passed(self) -> int:
        return sum(c.passed for c in self.checks)

    def to_dict(self) -> dict:
        d = asdict(replace(self, graded=None))
        del d["graded"], d["stop"]
        d["checks_passed"], d["checks_total"] = self.checks_passed, len(self.checks)
        return {"isolation": d.pop("isolation"), **d}   # how the notebook ran comes first


def _clean(text: str) -> str:
    text = _ANSI.sub("", text).strip()
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def safe_name(text: str) -> str:
    return _SAFE.sub("_", text).strip("_") or "unnamed"


def student_name(path: Path, assignment: str | None = None, known: tuple[str, ...] = ()) -> str:
    """The file's stem, or its folder's name when the file is named after an assignment (``assignment`` or any of
    ``known``) or called ``student``/``submission``: ``collected/alice/01_residual_stream.ipynb`` and
    ``collected/alice.ipynb`` both give ``alice``. (``vrs-edu assignments grade`` names students by the layout of
    the folder it was given; this is the rule for a single file.)"""
    stem = path.stem
    if copy_stem(stem) in {assignment, "student", "submission", *known}:   # "02_causal_attention (1)" too
        stem = path.resolve().parent.name
    return safe_name(stem)


def resolve_assignment(meta_name: str, path: Path, given: str | None, known: list[str]) -> tuple[str, list[str]]:
    """Which assignment a submission is: its metadata, else its file name, else ``given`` (``--assignment``), else
    ``"unknown"``. Returns (name, notes)."""
    notes = []
    if meta_name in known:
        if given and given != meta_name:
            notes.append(f"note: graded as {meta_name} (the notebook's metadata), not {given} (--assignment)")
        return meta_name, notes
    if meta_name:
        notes.append(f"note: the notebook's metadata names an unknown assignment {meta_name!r}")
    if copy_stem(path.stem) in known:
        return copy_stem(path.stem), notes
    if given:
        return given, notes
    return "unknown", notes


# --- the notebook that runs in the kernel ------------------------------------------------------------------------

def grading_notebook(submission: NotebookNode, grader: NotebookNode, preload: NotebookNode | None = None
                     ) -> tuple[NotebookNode, dict[int, int], list[int]]:
    """The graded notebook: a preload cell (default: :func:`.kernel.preload_cell` without a monitor), the learner's
    cells without any test cell, then every canonical test cell (these run in the grader's process; their outputs
    are filled in afterwards).

    Returns (notebook, {notebook index: submission index} of the learner's cells, notebook indices of the tests)."""
    tests = [c for c in grader.cells if is_test(c)]
    test_ids = {c.id for c in tests}
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": grader.metadata["kernelspec"]})
    nb.cells = [preload if preload is not None else preload_cell(tests)]
    origin = {}
    for i, cell in enumerate(submission.cells):
        if is_test(cell) or cell.get("id") in test_ids or cell.get("cell_type") not in ("code", "markdown", "raw"):
            continue
        cell = copy.deepcopy(cell)
        cell.id = f"submitted-{i:03d}"          # unique and valid whatever the learner's notebook held
        cell.metadata = NotebookNode({})        # the learner's tags (raises-exception, skip-execution...) do not count
        origin[len(nb.cells)] = i
        nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_markdown_cell("## Checks run by the grader (in its own process)",
                                                  id="grader-checks"))
    first_test = len(nb.cells)
    nb.cells += [copy.deepcopy(c) for c in tests]
    nb, _ = ClearOutputPreprocessor().preprocess(nb, {})
    return nb, origin, list(range(first_test, len(nb.cells)))


# --- one submission ------------------------------------------------------------------------------------------

def _describe_cell(nb: NotebookNode, index: int) -> str:
    first = next((line for line in nb.cells[index].source.splitlines() if line.strip()), "")
    return f"{first[:60]!r}"


def _kind(cell) -> str:
    return "hidden" if HIDDEN in tags(cell) else "public" if PUBLIC in tags(cell) else "?"


async def _grade_async(nb, origin, test_index, report: Report, cell_timeout: float, total_timeout: float,
                       ws: sandbox.Workspace, t0: float, state: dict, env: dict | None = None,
                       graded: list[str] = ()) -> tuple[dict[int, tuple], list[str]]:
    """Run the learner's cells, then the checks. Returns ({test index: (passed, message, reached, tampered)}, audit
    flags); ``state["not_run"]`` says why checks did not run, if they did not."""
    kernel = Kernel(nb, ws, env)
    limits = ws.iso.limits
    deadline = t0 + total_timeout
    skipped: set[int] = set()
    restarts = 0
    results: dict[int, tuple[bool, str]] = {}
    audits: list[str] = []
    first_run = True

    spent: dict[int, float] = {}   # seconds each of the learner's cells ran, over every run of the kernel

    def where(k: int) -> str:
        return f"cell {origin[k] + 1} of the submission ({_describe_cell(nb, k)})"

    def out_of_time(k: int, ran: bool) -> str:
        """The total limit reached at cell ``k`` (``ran``: while it ran; else before it): the note names the cell
        that used the time, and says that the checks still run."""
        longest = max(spent, key=spent.get) if spent else k
        at = f"in {where(k)}" if ran else f"before {where(k)}"
        most = "" if longest == k else f"; most of it in {where(longest)} ({spent[longest]:.0f} s)"
        left = "the cells after it were not run" if ran else "it and the cells after it were not run"
        report.errors.append(f"the learner's cells hit the {total_timeout:g} s limit {at}{most}: {left}; the checks "
                             "still run, each within its own limit")
        return "time limit"

    async def learner_cells() -> str:
        """Start a kernel and run preload + the learner's cells. Returns graded | time limit | kernel died."""
        nonlocal restarts
        while True:
            await kernel.start()
            stuck_at, k = None, None
            try:
                reply = await kernel.run(nb.cells[0], 0, max(PRELOAD_TIMEOUT, cell_timeout))
                if first_run and reply.get("status") != "ok":
                    report.errors.append(_clean(f"the grader could not import the course's packages: "
                                                f"{reply.get('ename')}: {reply.get('evalue')}"))
                for k in origin:
                    if nb.cells[k].cell_type != "code" or k in skipped:
                        continue
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return out_of_time(k, ran=False)
                    started = time.monotonic()
                    reply = await kernel.run(nb.cells[k], k, min(cell_timeout, remaining))
                    spent[k] = spent.get(k, 0.0) + time.monotonic() - started
                    if reply.get("stuck"):
                        stuck_at = k
                        break
                    if first_run and reply.get("status") != "ok":
                        report.errors.append(_clean(f"{where(k)}: {reply.get('ename', 'Error')}: "
                                                    f"{reply.get('evalue', '')}"
                                                    + limit_note(reply.get("ename"), reply.get("evalue"), limits)))
                    if reply.get("ename") == TIMEOUT_ENAME and time.monotonic() >= deadline:
                        return out_of_time(k, ran=True)
            except DeadKernelError:
                if k is None:   # the kernel cannot even import the course: nothing of the learner's to skip
                    report.errors.append("the kernel died in the kernel start and imports")
                    state["not_run"] = "not run: the kernel died in the kernel start and imports"
                    return "kernel died"
                died_at = k
            else:
                died_at = None
            if stuck_at is None and died_at is None:
                return "graded"
            await kernel.stop()
            bad = stuck_at if stuck_at is not None else died_at
            why = (f"ignored the interrupt after {cell_timeout:g} s" if stuck_at is not None else
                   "the kernel died (the cell exited or crashed the Python process)")
            report.errors.append(f"{where(bad)}: {why}; skipped (the kernel was restarted and the cells before it "
                                 "run again)")
            skipped.add(bad)
            restarts += 1
            if restarts > MAX_RESTARTS or time.monotonic() >= deadline:
                if stuck_at is None:
                    report.errors.append(f"the kernel died too often (last in {where(bad)})")
                    state["not_run"] = f"not run: the kernel died in {where(bad)}"
                    return "kernel died"
                report.errors.append(f"the learner's cells hit the {total_timeout:g} s limit in {where(stuck_at)}, "
                                     "which ignored every interrupt")
                state["not_run"] = f"not run: the learner's cells hit the {total_timeout:g} s limit"
                state["stopped"] = True
                return "time limit"

    try:
        status = await learner_cells()
        first_run = False
        report.status = status
        # out of time with the kernel answering: what the cells defined is checked, each check in its own limit
        # (a function that hangs costs the checks that call it, not the others)
        if status != "graded" and not (status == "time limit" and not state.get("stopped")):
            return results, audits
        found = await kernel.audit(graded)
        before = None if found is None else found["rebound"]
        audits.append(_audit_flag(before, "by the learner's cells"))
        audits += _monitor_flags(found, "the learner's cells")
        checks = CheckRunner(kernel, asyncio.get_running_loop())
        for i in test_index:
            if checks.stuck or checks.dead:
                await kernel.stop()
                restarts += 1
                state["not_run"] = "not run: the kernel stopped answering in an earlier check, too often"
                if restarts > MAX_RESTARTS:
                    break
                checks.stuck = checks.dead = False
                state["not_run"] = "not run: the kernel stopped answering in an earlier check"
                deadline = time.monotonic() + total_timeout   # the re-run of the learner's cells: a budget of its own
                if await learner_cells() not in ("graded", "time limit") or state.get("stopped"):
                    break
                await kernel.audit(graded)   # what the restarted kernel defined (the calls are checked against it)
            passed, message, outputs = await asyncio.to_thread(checks.run_check, nb.cells[i], cell_timeout)
            nb.cells[i].outputs = outputs
            results[i] = (passed, message, dict(checks.reached), dict(checks.tampered))
        if not (checks.stuck or checks.dead):
            later = await kernel.audit(graded)
            after = None if later is None else later["rebound"]
            new = [n for n in after if n not in (before or [])] if after is not None else None
            audits.append(_audit_flag(new, "by the learner's functions while the checks called them"))
            if later is not None and found is not None:
                later = {k: [x for x in later[k] if x not in found[k]] for k in ("copies", "opened")}
                audits += _monitor_flags(later, "the learner's functions while the checks called them")
        return results, audits
    finally:
        await kernel.stop()
        for k, sent in sorted(kernel.cut.items()):
            report.errors.append(f"{where(k) if k in origin else 'updates of displayed outputs' if k == -1 else 'a check call'}: printed {sent / (1 << 20):.1f} MiB; "
                                 f"the graded notebook keeps the first {limits.output_bytes / (1 << 20):g} MiB "
                                 "(the grader's output limit per cell)")


def _monitor_flags(found: dict | None, who: str) -> list[str]:
    """Flags for what the kernel's monitor saw: references copied at run time, the teacher's folders read, the
    course's files written (attempts included: an isolated kernel is refused)."""
    if not found:
        return []
    out = [f"{who} made a copy of the course's reference {c} at run time (from its source or its code object)"
           for c in found.get("copies", [])]
    opened = found.get("opened", [])
    if opened:
        shown = "; ".join(opened[:6]) + (f" and {len(opened) - 6} more" if len(opened) > 6 else "")
        out.append(f"{who} tried to read the teacher's files or write the course's: {shown}")
    return out


def _audit_flag(names: list[str] | None, when: str) -> str:
    """'' when nothing was rebound, else a flag naming what was."""
    if names is None:
        return (f"the grader's audit of rebound names gave no result {when}: the notebook removed or replaced "
                "something the audit relies on")
    if not names:
        return ""
    shown = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
    return f"rebound {when}: {shown} (cannot change the grade: the checks run in the grader's process)"


@dataclass
class Session:
    """What the grader prepares once, before any student kernel starts (see :func:`grading_session`)."""

    sources: Path | None
    isolation: sandbox.Isolation
    course: CourseFiles
    secret: list[Path] = field(default_factory=list)         # the teacher's folders (their opening is flagged)
    assignments: dict[str, dict] = field(default_factory=dict)   # name -> {"copies", "references"}
    broken: dict[str, str] = field(default_factory=dict)          # name -> why its source is refused

    def assignment(self, name: str) -> dict:
        """The assignment's copies and references, built (and its checks' modules imported) on first use."""
        if name not in self.assignments:
            assignment = find(name, self.sources)
            copies = make_copies(assignment)
            self.assignments[name] = {"copies": copies,
                                      "references": find_references(copies["grader"], copies["student"]),
                                      "version": hashlib.sha256(assignment.path.read_bytes()).hexdigest()[:12]}
        return self.assignments[name]


def course_roots(sources: str | Path | None = SOURCES) -> list[Path]:
    """The course's files that a notebook must not change: the package, the teacher's sources and the generated
    notebooks (``data/assignments`` in a checkout)."""
    import vrs_edu

    roots = [Path(vrs_edu.__file__).resolve().parent]
    roots += [Path(sources).resolve()] if sources is not None else []
    roots += [DEFAULT_OUT.resolve()] if Path(DEFAULT_OUT).is_dir() else []
    return roots


def teacher_folders(sources: str | Path | None, out_dir: str | Path | None) -> list[Path]:
    """The folders a student's kernel must not read: the sources, the generated solution and grader copies (the
    Korean solution copies too), the checkout's ``.git`` (its history holds every earlier source) and the report
    folder."""
    import vrs_edu

    folders = [Path(sources)] if sources is not None else []
    folders += [Path(DEFAULT_OUT) / "solution", Path(DEFAULT_OUT) / "grader", Path(DEFAULT_OUT) / "ko" / "solution",
                Path(vrs_edu.__file__).resolve().parents[1] / ".git"]
    folders += [Path(out_dir)] if out_dir is not None else []
    return [f.resolve() for f in folders if f.exists()]


@contextlib.contextmanager
def grading_session(sources: str | Path | None = SOURCES, *, out_dir: str | Path | None = None,
                    submissions: list[str | Path] = (), isolate: bool = True, limits: sandbox.Limits | None = None):
    """Prepare everything before the first kernel: import every check's modules and find the references of every
    assignment in ``sources``, hash the course's files, and prepare the sandbox (:func:`.sandbox.isolate`; the
    report folder ``out_dir`` is created first, then hidden from the kernels with the teacher's folders and the
    folders among ``submissions``; the course's files are read-only to them). Yields a :class:`Session` for
    :func:`grade_submission`."""
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    secret = teacher_folders(sources, out_dir)
    # the folders of collected notebooks (a file given alone leaves its folder as it is: it may be anyone's)
    session_folders = [Path(p).resolve() for p in submissions if Path(p).is_dir()]
    course = CourseFiles(course_roots(sources))
    with sandbox.isolate(secret + session_folders, enabled=isolate, readonly=course.roots,
                         limits=limits) as iso:
        session = Session(Path(sources) if sources is not None else None, iso, course, secret)
        for a in discover(sources):   # before any student kernel: the checkers are in sys.modules from now on
            try:
                session.assignment(a.name)
            except ValueError as e:   # a broken draft: its submissions are reported, the others graded
                session.broken[a.name] = str(e)
                print(f"warning: {e}; its submissions are not graded", file=sys.stderr)
        yield session


def grade_submission(path: str | Path, assignment: str | None = None, student: str | None = None,
                     sources: str | Path | None = SOURCES, cell_timeout: float = 60, total_timeout: float = 300,
                     out_dir: str | Path | None = None, allow_reference: bool = False,
                     session: Session | None = None, isolate: bool = True) -> Report:
    """Grade one submitted notebook; never raises for anything the submission contains.

    Args:
        assignment: used when neither the notebook's metadata nor its file name names a known assignment.
        student: default: see :func:`student_name`.
        cell_timeout: seconds one learner's cell, and one check, may run before it is interrupted.
        total_timeout: seconds the learner's cells may run in all (kernel start included); the checks each have
            ``cell_timeout`` of their own on top.
        out_dir: where to write the reports (see the module docstring); None writes nothing.
        allow_reference: give points to a function that uses or reaches the course's reference implementation (it
            is flagged either way).
        session: what :func:`grading_session` prepared (a class graded in a row shares one); None prepares one for
            this notebook alone (``isolate`` False: without the sandbox).

    Raises:
        ValueError: ``assignment`` names no assignment in ``sources``.
    """
    if session is None:
        with grading_session(sources, out_dir=out_dir, submissions=[path], isolate=isolate) as session:
            return grade_submission(path, assignment, student, sources, cell_timeout, total_timeout, out_dir,
                                    allow_reference, session)
    sources = session.sources
    path = Path(path)
    t0 = time.perf_counter()
    known = [a.name for a in discover(sources)]
    if assignment is not None and assignment not in known:
        raise ValueError(f"--assignment: no assignment named {assignment!r}; known: {', '.join(known) or 'none'}")
    report = Report(student or "", assignment or "", str(path), "graded", isolation=session.isolation.to_dict())
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as e:  # not JSON, not a notebook, a folder, missing, not readable: the report says so
        submission = None
        report.status, report.errors = "unreadable", [_clean(f"could not read the notebook: {type(e).__name__}: {e}")]
    meta = (submission.metadata.get("vrs_edu", {}) if submission is not None else {}) or {}
    report.assignment, notes = resolve_assignment(str(meta.get("assignment", "") or ""), path, assignment, known)
    report.errors += notes
    report.student = student or student_name(path, report.assignment, tuple(known))
    if report.assignment == "unknown":
        if submission is not None:
            report.status = "unknown assignment"
            report.errors.append("the notebook does not say which assignment it is (no metadata, and its file name "
                                 f"is none of {', '.join(known)}): pass --assignment")
        return _finish(report, t0, out_dir, None)
    if report.assignment in session.broken:
        report.status = "broken assignment"
        report.errors.append(f"not graded: the assignment's source is broken ({session.broken[report.assignment]}); "
                             "fix it and grade again")
        return _finish(report, t0, out_dir, None)
    prepared = session.assignment(report.assignment)
    copies, references, report.version = prepared["copies"], prepared["references"], prepared["version"]
    grader = copies["grader"]
    tests = [c for c in grader.cells if is_test(c)]
    report.max_points = float(sum(c.metadata["points"] for c in tests))
    if submission is None:
        report.checks = [CheckResult(c.metadata["check"], _kind(c), False, 0.0, float(c.metadata["points"]),
                                     "not run: the notebook could not be read") for c in tests]
        return _finish(report, t0, out_dir, None)
    if meta.get("copy") not in (None, "student"):
        report.errors.append(f"note: this file is the {meta['copy']} copy of the assignment, not the student copy")

    monitored = sorted({(*w, label(w)) for ws in references.values() for w in ws})
    preload = preload_cell(tests, monitored, [str(p) for p in session.secret],
                           [str(p) for p in session.course.roots], learner=submission.cells)
    nb, origin, test_index = grading_notebook(submission, grader, preload)
    graded = integrity.graded_names(c for c in grader.cells if SOLUTION in tags(c))
    found = integrity.inspect([(origin[k] + 1, nb.cells[k].source) for k in origin if nb.cells[k].cell_type == "code"],
                              integrity.baseline(copies["student"].cells), graded)
    for name, where in found.reference.items():
        report.flags.append(f"{name} uses the course's reference implementation: {'; '.join(where)}")
    reference_imports = [w for w in found.imports if not any(w in x for xs in found.reference.values() for x in xs)]
    report.flags += [f"imports the course's code: {w}" for w in reference_imports]
    report.flags += [f"rebinds a library's or the course's name: {w}" for w in found.rebinds]

    results: dict[int, tuple] = {}
    state = {"not_run": ""}
    try:
        ws = sandbox.Workspace(session.isolation)
        try:
            results, audits = asyncio.run(_grade_async(nb, origin, test_index, report, cell_timeout, total_timeout,
                                                       ws, time.monotonic(), state, sandbox.kernel_env(ws.home),
                                                       sorted(graded)))
            if ws.disk_full():
                report.errors.append(f"note: the notebook filled its {ws.iso.limits.disk_bytes / (1 << 30):g} GiB "
                                     "of disk (the grader's limit): writes past it failed")
        finally:
            report.errors += ws.close()
        report.flags += [a for a in audits if a]
    except Exception as e:  # the grader's own machinery failed on this submission: report it, go on to the next
        report.status = "grader error"
        report.errors.append(_clean(f"{type(e).__name__}: {e}"))
    flagged, noted, report.stop = _check_course(session)
    report.flags += flagged
    report.errors += noted
    not_run = state["not_run"] or f"not run ({report.status})"
    reached_by: dict[str, list[str]] = {}
    for i in test_index:
        cell = nb.cells[i]
        passed, message, reached, tampered = results.get(i, (False, not_run, {}, {}))
        check = cell.metadata["check"]
        pts = float(cell.metadata["points"])
        uses = free_names(integrity.parse_cell(cell.source)) & set(found.reference)
        dynamic = {n: r for n, r in {**reached}.items() if r}
        against = {n: t for n, t in tampered.items() if t}
        for n in dynamic:
            reached_by.setdefault(n, []).append(check)
        if uses and not allow_reference:
            message = (f"no points: {', '.join(sorted(uses))} uses the course's reference implementation"
                       + (" (the check itself passed)" if passed else f" (and the check failed: {message})"))
            passed = False
        elif (dynamic and not allow_reference) or against:
            what = "; ".join([f"{n} reached the course's reference implementation {', '.join(r)}"
                              for n, r in dynamic.items() if not allow_reference]
                             + [f"{n} worked against the grader's monitor ({', '.join(t)})" for n, t in against.items()])
            message = (f"no points: {what} while the check called it"
                       + (" (the check itself passed)" if passed else f" (and the check failed: {message})"))
            passed = False
        message += limit_note("", message, session.isolation.limits) if not passed else ""
        report.checks.append(CheckResult(check, _kind(cell), passed, pts if passed else 0.0, pts, _clean(message)))
    for name, checks_ in reached_by.items():
        refs = sorted({r for i in test_index for r in results.get(i, (0, 0, {}, {}))[2].get(name, [])})
        report.flags.append(f"{name} reached the course's reference implementation ({', '.join(refs)}) when the "
                            f"checks called it: {', '.join(checks_)}"
                            + (" (points given: --allow-reference)" if allow_reference else ""))
    for name, t in {n: t for i in test_index for n, t in results.get(i, (0, 0, {}, {}))[3].items() if t}.items():
        report.flags.append(f"{name} worked against the grader's monitor while the checks called it: {', '.join(t)}")
    report.points = sum(c.points for c in report.checks)
    return _finish(report, t0, out_dir, nb)


def _check_course(session: Session) -> tuple[list[str], list[str], str]:
    """Compare the course's files with their hashes after a submission: (flags, notes, why grading must stop).

    Not isolated, a notebook can write the course's files: a change is flagged and put back, and grading goes on
    against the untouched course. Isolated, the kernel sees the course read-only, so a change means the sandbox did
    not hold (or someone else changed the files): it is put back, flagged on this submission, and grading stops."""
    changes = session.course.changes()
    touched = [p for kind in ("changed", "added", "removed") for p in changes[kind]]
    session.course.restore()   # caches too, even when no source changed
    if not touched:
        return [], [], ""
    shown = ", ".join(f"{session.course.relative(p)} ({kind})" for kind in ("changed", "added", "removed")
                      for p in changes[kind][:8])
    left = session.course.changes()
    still = [p for kind in left for p in left[kind]]
    put_back = ("put back as they were before this notebook" if not still else
                f"could not put back {', '.join(map(str, still[:4]))}: check the course before trusting any grade")
    if session.isolation.isolated:
        why = f"the course's files changed while this notebook was graded in its sandbox: {shown}; {put_back}"
        return [why + "; grading stopped"], [], why
    return [f"changed the course's files: {shown}; " + (put_back + ", so later notebooks are graded against the "
            "untouched course" if not still else put_back)], [], ""


# What a limit looks like from inside the kernel: the error a cell or a graded function raised when it met it.
_LIMIT_SIGNS = (("MemoryError", "can't allocate memory", "Cannot allocate memory", "DefaultCPUAllocator"), "memory"), \
    (("No space left on device",), "disk"), (("File too large",), "file"), \
    (("Resource temporarily unavailable", "can't start new thread"), "processes")


def limit_note(ename, evalue, limits: sandbox.Limits) -> str:
    """'' or a note saying which of the sandbox's limits an error (``ename``: ``evalue``) is the sign of."""
    text = f"{ename}: {evalue}"
    for signs, which in _LIMIT_SIGNS:
        if any(sign in text for sign in signs):
            return {"memory": f" (the sandbox's limit: {limits.memory_bytes / (1 << 30):g} GiB of memory per process)",
                    "disk": f" (the sandbox's limits: {limits.disk_bytes / (1 << 30):g} GiB of disk in its home, "
                            f"{limits.tmp_bytes / (1 << 20):g} MiB in each of its /tmp, /var/tmp, /dev/shm)",
                    "file": f" (the sandbox's limit: {limits.file_bytes / (1 << 20):g} MiB per file)",
                    "processes": f" (the sandbox's limit: {limits.max_processes} processes and threads)"}[which]
    return ""


def _finish(report: Report, t0: float, out_dir, nb: NotebookNode | None) -> Report:
    report.wall_s = round(time.perf_counter() - t0, 2)
    report.key = report.key or safe_name(report.student)
    report.graded = nb
    if out_dir is not None:
        write_report(report, Path(out_dir), nb)
    return report


# --- reports -------------------------------------------------------------------------------------------------

CSV_FIELDS = ("student", "assignment", "check", "kind", "passed", "points", "max_points", "message")
SUMMARY_FIELDS = ("student", "assignment", "status", "points", "max_points", "checks_passed", "checks_total",
                  "errors", "flags", "isolated", "submission", "report")


def write_report(report: Report, out_dir: Path, graded: NotebookNode | None = None) -> Path:
    """Write ``<assignment>/<key>.json``, ``.csv`` (one row per check) and, if given, the executed notebook
    ``.graded.ipynb``; remove any other report of the same submitted file (a regrade replaces, never adds); then
    rebuild ``summary.csv``. Returns the JSON path."""
    out_dir = Path(out_dir)
    key = report.key or safe_name(report.student)
    folder = out_dir / safe_name(report.assignment)
    folder.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = folder / f"{key}.json", folder / f"{key}.csv"
    mine = _same_file(report.submission)
    for old in out_dir.glob("*/*.json"):
        if old != json_path and _submission_of(old) == mine:
            for suffix in (".json", ".csv", ".graded.ipynb", ".feedback.md"):
                old.with_name(old.name[: -len(".json")] + suffix).unlink(missing_ok=True)
    json_path.write_text(json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n")
    with csv_path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for c in report.checks:
            w.writerow([report.student, report.assignment, c.check, c.kind, c.passed, c.points, c.max_points,
                        c.message])
    # what the student may read (no hidden test's code)
    (folder / f"{key}.feedback.md").write_text(feedback_markdown(report.to_dict()) + "\n")
    graded_path = folder / f"{key}.graded.ipynb"
    if graded is not None:
        graded_path.write_bytes(notebook_bytes(graded))
    else:
        graded_path.unlink(missing_ok=True)
    write_summary(out_dir)
    return json_path


def _same_file(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except OSError:
        return path


def _submission_of(json_path: Path) -> str | None:
    try:
        return _same_file(json.loads(json_path.read_text())["submission"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_summary(out_dir: Path) -> Path:
    """``summary.csv``: one row per JSON report found under ``out_dir``, sorted by assignment then student."""
    rows = []
    for p in sorted(Path(out_dir).glob("*/*.json")):
        try:
            r = json.loads(p.read_text())
            rows.append([r["student"], r["assignment"], r["status"], r["points"], r["max_points"],
                         r["checks_passed"], r["checks_total"], len(r["errors"]), len(r.get("flags", [])),
                         "yes" if r.get("isolation", {}).get("isolated") else "no", r["submission"],
                         str(p.relative_to(out_dir))])
        except (ValueError, KeyError):
            continue  # not one of ours
    rows.sort(key=lambda r: (r[1], r[0], r[-1]))
    path = Path(out_dir) / "summary.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SUMMARY_FIELDS)
        w.writerows(rows)
    return path
