"""Grade submitted notebooks: run each in a fresh kernel with the canonical checks, write a report per student.

For one submission the grader

1. reads the notebook (an unreadable file gets a report that says so);
2. drops every cell that is a test — tagged ``public-test``/``hidden-test`` or carrying a test's cell id — and
   appends the canonical public *and* hidden test cells rebuilt from the assignment's source, so a deleted or edited
   check cell cannot change the grade (the learner's notebook runs top to bottom first, then the checks);
3. executes that notebook with nbclient in a fresh kernel (``VRS_EDU_THREADS=1``, a temporary working folder), with
   a per-cell time limit — a cell that runs over is interrupted and recorded as an error, and the run goes on — and
   a limit for the whole notebook, after which the kernel is killed. Errors in the learner's cells do not stop the
   run; a dead kernel ends it;
4. scores each test cell: it passes when it raised nothing and its last line evaluated to ``True``;
5. writes ``OUT/<assignment>/<student>.json`` and ``.csv`` (checks, points, messages), the executed
   ``<student>.graded.ipynb`` (teacher only: it contains the hidden tests), and ``OUT/summary.csv`` with one row
   per student and assignment, rebuilt from every JSON report under ``OUT``.

Limits. The learner's code runs with your permissions (grade untrusted work in a container or VM), and it shares
the kernel with the checks: code written to fool them (e.g. replacing a checker) can. Read the graded notebook of
any surprising grade.
"""
from __future__ import annotations

import ast
import asyncio
import copy
import csv
import json
import os
import re
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbconvert.preprocessors import ClearOutputPreprocessor
from nbformat import NotebookNode

from .build import make_copies, notebook_bytes
from .source import HIDDEN, PUBLIC, SOURCES, find, is_test, tags

KERNEL_ENV = {"VRS_EDU_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
              "MPLBACKEND": "Agg"}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_MESSAGE = 500


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
    status: str          # graded | time limit | kernel died | unreadable | unknown assignment | grader error
    points: float = 0.0
    max_points: float = 0.0
    checks: list[CheckResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)   # errors raised by the learner's own cells, and notes
    wall_s: float = 0.0

    @property
    def checks_passed(self) -> int:
        return sum(c.passed for c in self.checks)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["checks_passed"], d["checks_total"] = self.checks_passed, len(self.checks)
        return d


def _clean(text: str) -> str:
    text = _ANSI.sub("", text).strip()
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def student_name(path: Path, assignment: str | None) -> str:
    """The file's stem, or its folder's name when the file is just called after the assignment (or ``student``):
    ``collected/alice/01_residual_stream.ipynb`` and ``collected/alice.ipynb`` both give ``alice``."""
    stem = path.stem
    if stem in {assignment, "student", "submission"}:
        stem = path.resolve().parent.name
    return _SAFE.sub("_", stem).strip("_") or "unnamed"


PRELOAD = ("torch", "numpy", "matplotlib.pyplot", "seaborn", "vrs_edu.nn", "vrs_edu.course.setup",
           "vrs_edu.course.checks")
PRELOAD_TIMEOUT = 180.0


def _preload_cell(tests: list[NotebookNode]) -> NotebookNode:
    """A first cell that imports the heavy libraries and the checkers' modules into ``sys.modules`` without binding
    any name, so that the per-cell limit measures the learner's code and not a cold ``import torch`` on a busy
    machine, and so that a learner who deleted an import cell still finds ``torch`` undefined."""
    modules = list(PRELOAD)
    for cell in tests:
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module not in modules:
                modules.append(node.module)
    source = ("import importlib as _vrs_edu_importlib\n"
              f"for _vrs_edu_module in {modules!r}:\n"
              "    _vrs_edu_importlib.import_module(_vrs_edu_module)\n"
              "del _vrs_edu_importlib, _vrs_edu_module")
    return nbformat.v4.new_code_cell(source, id="grader-preload")


def grading_notebook(submission: NotebookNode, grader: NotebookNode) -> tuple[NotebookNode, dict[int, int], list[int]]:
    """The notebook that is executed: a preload cell, the learner's cells without any test cell, then every
    canonical test cell.

    Returns (notebook, {notebook index: submission index} of the learner's cells, notebook indices of the tests)."""
    tests = [c for c in grader.cells if is_test(c)]
    test_ids = {c.id for c in tests}
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": grader.metadata["kernelspec"]})
    nb.cells = [_preload_cell(tests)]
    origin = {}
    for i, cell in enumerate(submission.cells):
        if is_test(cell) or cell.get("id") in test_ids or cell.get("cell_type") not in ("code", "markdown", "raw"):
            continue
        cell = copy.deepcopy(cell)
        cell.id = f"submitted-{i:03d}"          # unique and valid whatever the learner's notebook held
        cell.metadata = NotebookNode({})        # the learner's tags (raises-exception, skip-execution...) do not count
        origin[len(nb.cells)] = i
        nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_markdown_cell("## Checks inserted by the grader", id="grader-checks"))
    first_test = len(nb.cells)
    nb.cells += [copy.deepcopy(c) for c in tests]
    nb, _ = ClearOutputPreprocessor().preprocess(nb, {})
    return nb, origin, list(range(first_test, len(nb.cells)))


async def _execute(nb: NotebookNode, cell_timeout: float, total_timeout: float, workdir: str,
                   replies: dict[int, dict], running: list[int]) -> str:
    """Run ``nb`` in place. Fills ``replies[cell_index]`` (execute_reply contents) and ``running`` (the cells
    started, in order). Returns "graded", "time limit" or "kernel died"."""
    # IPC sockets in the temporary folder, not TCP ports, where the OS has them (POSIX): no other user on the
    # machine can talk to this kernel.
    km = (AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(Path(workdir) / "kernel"))
          if os.name == "posix" else AsyncKernelManager(kernel_name="python3"))
    client = NotebookClient(
        nb, km=km, timeout=cell_timeout, allow_errors=True, interrupt_on_timeout=True,
        timeout_func=lambda cell: max(cell_timeout, PRELOAD_TIMEOUT) if cell.get("id") == "grader-preload"
        else cell_timeout,
        error_on_timeout={"ename": "TimeoutError", "evalue": f"the cell ran longer than {cell_timeout:g} s and was "
                          "interrupted", "traceback": []},
        shutdown_kernel="immediate", startup_timeout=120, resources={"metadata": {"path": workdir}})
    client.on_cell_start = lambda cell, cell_index: running.append(cell_index)
    client.on_cell_executed = lambda cell, cell_index, execute_reply: replies.__setitem__(
        cell_index, (execute_reply or {}).get("content", {}))
    env = {**os.environ, **KERNEL_ENV}
    task = asyncio.ensure_future(client.async_execute(env=env, cleanup_kc=True))
    try:
        # Our own deadline rather than asyncio.wait_for: nbclient turns the cancellation into DeadKernelError.
        done, _ = await asyncio.wait({task}, timeout=total_timeout)
        if not done:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return "time limit"
        task.result()
        return "graded"
    except DeadKernelError:
        return "kernel died"
    finally:  # never leave a kernel behind, whatever happened above
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


def _outputs_text(cell, stream: str = "stdout") -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == stream)


def _value(cell) -> str | None:
    for o in reversed(cell.get("outputs", [])):
        if o.get("output_type") == "execute_result":
            return o.get("data", {}).get("text/plain")
    return None


def _score(cell, reply: dict | None, not_run: str) -> tuple[bool, str]:
    if reply is None:
        return False, not_run
    if reply.get("status") != "ok":
        return False, _clean(f"{reply.get('ename', 'Error')}: {reply.get('evalue', '')}")
    value = _value(cell)
    if value == "True":
        return True, ""
    printed = [line for line in _outputs_text(cell).splitlines() if line.startswith("✗")]
    return False, _clean("\n".join(printed) or f"the check evaluated to {value}")


def _describe_cell(nb: NotebookNode, index: int) -> str:
    first = next((line for line in nb.cells[index].source.splitlines() if line.strip()), "")
    return f"{first[:60]!r}"


def grade_submission(path: str | Path, assignment: str | None = None, student: str | None = None,
                     sources: str | Path = SOURCES, cell_timeout: float = 60, total_timeout: float = 300,
                     out_dir: str | Path | None = None) -> Report:
    """Grade one submitted notebook; never raises for anything the submission contains.

    Args:
        assignment: its name; default: read from the notebook's metadata (``vrs_edu.assignment``).
        student: default: see :func:`student_name`.
        cell_timeout: seconds one cell may run before it is interrupted.
        total_timeout: seconds the whole notebook may run (kernel start included) before the kernel is killed.
        out_dir: where to write the reports (see the module docstring); None writes nothing.
    """
    path = Path(path)
    t0 = time.perf_counter()
    report = Report(student or "", assignment or "", str(path), "graded")
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as e:  # not JSON, not a notebook, a folder, missing...: the report says so
        submission = None
        report.status, report.errors = "unreadable", [_clean(f"could not read the notebook: {type(e).__name__}: {e}")]
    meta = (submission.metadata.get("vrs_edu", {}) if submission is not None else {}) or {}
    report.assignment = assignment or str(meta.get("assignment", "")) or "unknown"
    report.student = student or student_name(path, report.assignment)
    try:
        grader = make_copies(find(report.assignment, sources))["grader"]
    except ValueError as e:
        if assignment is not None:
            raise  # the teacher named an assignment that does not exist: that is the teacher's error
        if submission is not None:
            report.status = "unknown assignment"
            report.errors.append(_clean(f"the notebook does not say which assignment it is ({e}): pass --assignment"))
        return _finish(report, t0, out_dir, None)
    tests = [c for c in grader.cells if is_test(c)]
    report.max_points = float(sum(c.metadata["points"] for c in tests))
    if submission is None:
        report.checks = [CheckResult(c.metadata["check"], _kind(c), False, 0.0, float(c.metadata["points"]),
                                     "not run: the notebook could not be read") for c in tests]
        return _finish(report, t0, out_dir, None)
    if meta.get("copy") not in (None, "student"):
        report.errors.append(f"note: this file is the {meta['copy']} copy of the assignment, not the student copy")

    nb, origin, test_index = grading_notebook(submission, grader)
    replies: dict[int, dict] = {}
    running: list[int] = []
    try:
        with tempfile.TemporaryDirectory(prefix="vrs-edu-grade-") as workdir:
            report.status = asyncio.run(_execute(nb, cell_timeout, total_timeout, workdir, replies, running))
    except Exception as e:  # the grader's own machinery failed on this submission: report it, go on to the next
        report.status = "grader error"
        report.errors.append(_clean(f"{type(e).__name__}: {e}"))
    last = running[-1] if running else None
    where = (f"cell {origin[last] + 1} of the submission ({_describe_cell(nb, last)})" if last in origin
             else "a check cell" if last is not None and last > max(origin, default=0)
             else "the kernel start and imports")
    not_run = {"time limit": f"not run: the notebook hit the {total_timeout:g} s limit in {where}",
               "kernel died": f"not run: the kernel died in {where}"}.get(report.status, f"not run ({report.status})")
    preload = replies.get(0)
    if preload is not None and preload.get("status") != "ok":
        report.errors.append(_clean(f"the grader could not import the course's packages: {preload.get('ename')}: "
                                    f"{preload.get('evalue')}"))
    for k, i in origin.items():
        reply = replies.get(k)
        if nb.cells[k].cell_type == "code" and reply is not None and reply.get("status") != "ok":
            report.errors.append(_clean(f"cell {i + 1} ({_describe_cell(nb, k)}): {reply.get('ename', 'Error')}: "
                                        f"{reply.get('evalue', '')}"))
    if report.status in ("time limit", "kernel died"):
        report.errors.append(not_run.replace("not run: ", ""))
    for i in test_index:
        cell = nb.cells[i]
        passed, message = _score(cell, replies.get(i), not_run)
        pts = float(cell.metadata["points"])
        report.checks.append(CheckResult(cell.metadata["check"], _kind(cell), passed, pts if passed else 0.0, pts,
                                         message))
    report.points = sum(c.points for c in report.checks)
    return _finish(report, t0, out_dir, nb)


def _kind(cell) -> str:
    return "hidden" if HIDDEN in tags(cell) else "public" if PUBLIC in tags(cell) else "?"


def _finish(report: Report, t0: float, out_dir, nb: NotebookNode | None) -> Report:
    report.wall_s = round(time.perf_counter() - t0, 2)
    if out_dir is not None:
        write_report(report, Path(out_dir), nb)
    return report


CSV_FIELDS = ("student", "assignment", "check", "kind", "passed", "points", "max_points", "message")
SUMMARY_FIELDS = ("student", "assignment", "status", "points", "max_points", "checks_passed", "checks_total",
                  "errors", "report")


def write_report(report: Report, out_dir: Path, graded: NotebookNode | None = None) -> Path:
    """Write ``<assignment>/<student>.json``, ``.csv`` (one row per check) and, if given, the executed notebook
    ``.graded.ipynb``; then rebuild ``summary.csv``. Returns the JSON path."""
    folder = out_dir / _SAFE.sub("_", report.assignment)
    folder.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = folder / f"{report.student}.json", folder / f"{report.student}.csv"
    json_path.write_text(json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n")
    with csv_path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for c in report.checks:
            w.writerow([report.student, report.assignment, c.check, c.kind, c.passed, c.points, c.max_points,
                        c.message])
    if graded is not None:
        (folder / f"{report.student}.graded.ipynb").write_bytes(notebook_bytes(graded))
    write_summary(out_dir)
    return json_path


def write_summary(out_dir: Path) -> Path:
    """``summary.csv``: one row per JSON report found under ``out_dir``, sorted by assignment then student."""
    rows = []
    for p in sorted(Path(out_dir).glob("*/*.json")):
        try:
            r = json.loads(p.read_text())
            rows.append([r["student"], r["assignment"], r["status"], r["points"], r["max_points"],
                         r["checks_passed"], r["checks_total"], len(r["errors"]), str(p.relative_to(out_dir))])
        except (ValueError, KeyError):
            continue  # not one of ours
    rows.sort(key=lambda r: (r[1], r[0]))
    path = Path(out_dir) / "summary.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SUMMARY_FIELDS)
        w.writerows(rows)
    return path
