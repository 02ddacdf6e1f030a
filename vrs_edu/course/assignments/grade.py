"""Grade submitted notebooks: run the learner's cells in a fresh kernel, run the canonical checks in the grader's
own process, write a report per student.

For one submission the grader

1. reads the notebook (an unreadable file gets a report that says so) and decides which assignment it is: the
   notebook's metadata, else its file name, else the teacher's ``--assignment``, else a report that asks for it;
2. reads the learner's code (:mod:`.integrity`): a graded function that is the course's reference implementation
   (imported, or called from the learner's function) is flagged and, by default, earns no points; statements that
   rebind a library's or the course's names (``torch.allclose = ...``) are flagged;
3. runs the learner's cells top to bottom in a fresh kernel (nbclient; ``VRS_EDU_THREADS=1``, a temporary working
   folder) without their check cells. Each cell has ``cell_timeout`` seconds; a cell that runs over is
   interrupted and the run goes on; a cell that ignores the interrupt is skipped: the kernel is restarted and the
   cells before it run again. All of this (kernel start included) must fit in ``total_timeout``;
4. runs every canonical public *and* hidden check, rebuilt from the assignment's source, in **the grader's
   process**, where the learner's code cannot rebind the checkers, the reference or ``torch``. Only the learner's
   functions run in the kernel: each call sends its arguments to the kernel and reads back what the function
   returned (tensors and plain values only: ``torch.load(weights_only=True)``, never an arbitrary pickle). A check
   passes when it raises nothing and its last line evaluates to ``True``. Each check has ``cell_timeout`` seconds of
   its own: a function that hangs costs the checks that call it, not the others (a kernel that stops answering
   is restarted and the learner's cells run again before the next check);
5. writes ``OUT/<assignment>/<student>.json`` and ``.csv`` (checks, points, messages, flags), the executed
   ``<student>.graded.ipynb`` (teacher only: it contains the hidden tests), and ``OUT/summary.csv`` with one row per
   submitted file, rebuilt from every JSON report under ``OUT``. A report replaces any earlier report of the same
   submitted file (a regrade under another assignment name leaves no stale row).

Limits. The learner's code runs with your permissions: grade untrusted work in a container or VM. The checks
compare values the learner's functions return, so a function that computes the right values by any means —
including a copy of the reference pasted in, or code hidden from the static reading (``exec`` of an assembled
string) — passes them. Read the flags and the graded notebook of any surprising grade.
"""
from __future__ import annotations

import asyncio
import builtins
import contextlib
import copy
import csv
import io
import json
import os
import re
import tempfile
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbconvert.preprocessors import ClearOutputPreprocessor
from nbformat import NotebookNode

from . import integrity
from .build import make_copies, notebook_bytes
from .source import HIDDEN, PUBLIC, SOLUTION, SOURCES, discover, find, is_test, tags

KERNEL_ENV = {"VRS_EDU_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
              "MPLBACKEND": "Agg"}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_MESSAGE = 500
PRELOAD_TIMEOUT = 180.0   # the first cell imports torch & co.: not the learner's time
PROBE_TIMEOUT = 5.0       # after an interrupt: how long a kernel has to answer again before it counts as stuck
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
    status: str          # graded | time limit | kernel died | unreadable | unknown assignment | grader error
    points: float = 0.0
    max_points: float = 0.0
    checks: list[CheckResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)   # errors raised by the learner's own cells, and notes
    flags: list[str] = field(default_factory=list)    # reference use, rebound names: what a teacher should read
    wall_s: float = 0.0
    key: str = ""        # the reports' file name in OUT/<assignment>/ (the student, or student~2 for a 2nd file)
    graded: NotebookNode | None = field(default=None, repr=False)   # the executed notebook (not in the JSON)

    @property
    def checks_passed(self) -> int:
        return sum(c.passed for c in self.checks)

    def to_dict(self) -> dict:
        d = asdict(replace(self, graded=None))
        del d["graded"]
        d["checks_passed"], d["checks_total"] = self.checks_passed, len(self.checks)
        return d


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
    if stem in {assignment, "student", "submission", *known}:
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
    if path.stem in known:
        return path.stem, notes
    if given:
        return given, notes
    return "unknown", notes


# --- the notebook that runs in the kernel ------------------------------------------------------------------------

PRELOAD = ("torch", "numpy", "matplotlib.pyplot", "seaborn", "vrs_edu.nn", "vrs_edu.course.setup",
           "vrs_edu.course.checks")
WATCHED = ("torch", "torch.nn", "torch.nn.functional", "torch.linalg", "math", "builtins", "numpy")
AUDIT_NAME = "_vrs_edu_grader_audit"

# Runs before the learner's cells: imports the heavy libraries into sys.modules without binding a name (so the
# per-cell limit measures the learner's code, and a learner who deleted the import cell still finds `torch`
# undefined) and keeps a private snapshot of the watched modules' attributes, for the audit after the learner's code.
_PRELOAD_SOURCE = '''\
def _vrs_edu_grader_preload(modules, watched):
    import importlib, sys
    for m in modules:
        importlib.import_module(m)
    import torch
    objects = {{n: sys.modules[n] for n in sys.modules if n in watched or n == "vrs_edu" or n.startswith("vrs_edu.")}}
    objects.update({{"torch.Tensor": torch.Tensor, "torch.nn.Module": torch.nn.Module}})
    before = {{n: (o, dict(vars(o))) for n, o in objects.items() if o is not None}}
    skip = {{"_", "__", "___", "input", "__warningregistry__", "__loader__", "__spec__", "__cached__", "__builtins__"}}
    missing = object()

    def audit():
        return sorted(f"{{n}}.{{k}}" for n, (o, attrs) in before.items() for k, v in attrs.items()
                      if k not in skip and vars(o).get(k, missing) is not v)
    return audit
{audit} = _vrs_edu_grader_preload({modules!r}, {watched!r})
del _vrs_edu_grader_preload
'''

_AUDIT_SOURCE = f'print("VRS_EDU_AUDIT", __import__("json").dumps({AUDIT_NAME}()))'

# One call of a learner's function (or a look-up of the learner's names), in the kernel. The arguments come from
# the grader; the result goes back as tensors and plain values only.
_CALL_SOURCE = '''\
def _vrs_edu_grader_call(mode, name, path_in, path_out):
    import torch
    def plain(x, depth=0):
        if isinstance(x, torch.Tensor):
            return x.detach().as_subclass(torch.Tensor).clone()
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, (list, tuple)) and depth < 8:
            items = [plain(y, depth + 1) for y in x]
            return tuple(items) if isinstance(x, tuple) else items
        if isinstance(x, dict) and depth < 8 and all(isinstance(k, str) for k in x):
            return {{k: plain(v, depth + 1) for k, v in x.items()}}
        return {{"__vrs_edu_opaque__": type(x).__name__}}
    ns = globals()
    try:
        if mode == "names":
            value = {{n: ("missing", None) if n not in ns else ("callable", None) if callable(ns[n])
                     else ("value", plain(ns[n])) for n in name}}
        else:
            spec = torch.load(path_in, weights_only=True)
            value = plain(ns[name](*spec["args"], **spec["kwargs"]))
        result = {{"ok": True, "value": value}}
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        result = {{"ok": False, "ename": type(e).__name__, "evalue": str(e)[:2000]}}
    torch.save(result, path_out)
_vrs_edu_grader_call({mode!r}, {name!r}, {path_in!r}, {path_out!r})
del _vrs_edu_grader_call
'''


def _preload_cell(tests: list[NotebookNode]) -> NotebookNode:
    """The first cell: preload (and watch) the libraries, the course's package and the checks' modules."""
    modules = list(PRELOAD)
    for cell in tests:
        for _, module, _, _ in integrity.imports(integrity.parse_cell(cell.source)):
            if module not in modules:
                modules.append(module)
    return nbformat.v4.new_code_cell(_PRELOAD_SOURCE.format(audit=AUDIT_NAME, modules=modules, watched=list(WATCHED)),
                                     id="grader-preload")


def grading_notebook(submission: NotebookNode, grader: NotebookNode) -> tuple[NotebookNode, dict[int, int], list[int]]:
    """The graded notebook: a preload cell, the learner's cells without any test cell, then every canonical test
    cell (these run in the grader's process; their outputs are filled in afterwards).

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
    nb.cells.append(nbformat.v4.new_markdown_cell("## Checks run by the grader (in its own process)",
                                                  id="grader-checks"))
    first_test = len(nb.cells)
    nb.cells += [copy.deepcopy(c) for c in tests]
    nb, _ = ClearOutputPreprocessor().preprocess(nb, {})
    return nb, origin, list(range(first_test, len(nb.cells)))


# --- the kernel ----------------------------------------------------------------------------------------------

TIMEOUT_ENAME = "TimeoutError"


class _Kernel:
    """A kernel that runs cells with a per-cell limit, tells a stuck kernel from a slow cell, and can be
    restarted."""

    def __init__(self, nb: NotebookNode, workdir: str):
        self.nb, self.workdir = nb, workdir
        # nbclient stores each executed cell back at its index: the grader's own cells (calls, probes, audits) use
        # a spare slot at the end of a list of its own, so they never replace a cell of the graded notebook.
        self.cells = nbformat.v4.new_notebook(metadata=nb.metadata)
        self.cells.cells = list(nb.cells) + [nbformat.v4.new_code_cell("")]
        self.slot = len(self.cells.cells) - 1
        self.client: NotebookClient | None = None
        self._ctx = None
        self.replies: dict[int, dict] = {}
        self.calls = 0

    async def start(self) -> None:
        # IPC sockets in the temporary folder, not TCP ports, where the OS has them (POSIX): no other user on the
        # machine can talk to this kernel.
        km = (AsyncKernelManager(kernel_name="python3", transport="ipc",
                                 ip=str(Path(self.workdir) / f"kernel{self.calls}"))
              if os.name == "posix" else AsyncKernelManager(kernel_name="python3"))
        self.calls += 1
        self.client = NotebookClient(
            self.cells, km=km, allow_errors=True, interrupt_on_timeout=True,
            timeout_func=lambda cell: cell.metadata.get("vrs_edu_timeout"),
            error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "the time limit was reached and the cell was "
                              "interrupted", "traceback": []},
            shutdown_kernel="immediate", startup_timeout=120, resources={"metadata": {"path": self.workdir}})
        self.client.on_cell_executed = lambda cell, cell_index, execute_reply: self.replies.__setitem__(
            id(cell), (execute_reply or {}).get("content", {}))
        self._ctx = self.client.async_setup_kernel(env={**os.environ, **KERNEL_ENV}, cleanup_kc=True)
        await self._ctx.__aenter__()

    async def stop(self) -> None:
        if self._ctx is not None:
            ctx, self._ctx = self._ctx, None
            with contextlib.suppress(Exception):
                await ctx.__aexit__(None, None, None)
        if self.client is not None and self.client.km is not None and self.client.km.has_kernel:
            with contextlib.suppress(Exception):
                await self.client.km.shutdown_kernel(now=True)

    async def run(self, cell: NotebookNode, index: int | None, timeout: float) -> dict:
        """Execute one cell; returns the reply (``status`` ok/error, ``ename``...) plus ``stuck: True`` when the
        cell ran over and the kernel did not answer again after the interrupt. Raises DeadKernelError."""
        index = self.slot if index is None else index
        cell.metadata["vrs_edu_timeout"] = max(1.0, timeout)
        try:
            await self.client.async_execute_cell(cell, index)
        finally:
            cell.metadata.pop("vrs_edu_timeout", None)
        reply = dict(self.replies.pop(id(cell), {"status": "ok"}))
        if reply.get("ename") == TIMEOUT_ENAME and reply.get("traceback") == []:
            probe = nbformat.v4.new_code_cell("None")
            probe.metadata["vrs_edu_timeout"] = PROBE_TIMEOUT
            await self.client.async_execute_cell(probe, self.slot)
            answered = self.replies.pop(id(probe), {})
            reply["stuck"] = answered.get("ename") == TIMEOUT_ENAME and answered.get("traceback") == []
        return reply


# --- the checks, in the grader's process ---------------------------------------------------------------------

def _opaque(type_name: str):
    """Stands for a returned object that is neither a tensor nor a plain value: it compares equal to nothing and
    is described by the learner's type name."""
    return type(type_name, (), {"__repr__": lambda self: f"<{type_name} object>"})()


def _unwrap(x):
    if isinstance(x, dict):
        if set(x) == {"__vrs_edu_opaque__"}:
            return _opaque(str(x["__vrs_edu_opaque__"]))
        return {k: _unwrap(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_unwrap(v) for v in x]
        return tuple(items) if isinstance(x, tuple) else items
    return x


def _exception(ename: str, evalue: str) -> BaseException:
    """The learner's exception, re-raised in the grader under its own name (the checkers special-case
    NotImplementedError: "not implemented yet")."""
    known = getattr(builtins, ename, None)
    if isinstance(known, type) and issubclass(known, Exception) and known.__module__ == "builtins":
        try:
            return known(evalue)
        except Exception:  # noqa: BLE001 — an exception type with another signature
            pass
    return type(ename, (Exception,), {})(evalue)


class _Remote:
    """The learner's function ``name`` as the grader's checks see it: a call runs it in the kernel."""

    def __init__(self, name: str, session: "_Checks"):
        self.__name__ = self.__qualname__ = name
        self._session = session

    def __call__(self, *args, **kwargs):
        return self._session.call("call", self.__name__, args, kwargs)

    def __repr__(self):
        return f"<the learner's {self.__name__}>"


class _Checks:
    """Runs the canonical checks in this process, calling into the kernel for the learner's names."""

    def __init__(self, kernel: _Kernel, loop: asyncio.AbstractEventLoop, workdir: str):
        self.kernel, self.loop, self.workdir = kernel, loop, Path(workdir)
        self.spent = 0.0        # seconds this check has spent in the learner's code (the kernel calls)
        self.stuck = False      # the kernel stopped answering (or died): restart before the next check
        self.dead = False
        self.n = 0
        self.limit = 0.0

    def call(self, mode: str, name, args=(), kwargs=None):
        import torch

        remaining = self.limit - self.spent
        if self.stuck or self.dead:
            raise RuntimeError("not run: the kernel stopped answering earlier in this check")
        if remaining <= 0:
            raise TimeoutError(f"the learner's functions used up the check's {self.limit:g} s limit")
        self.n += 1
        path_in, path_out = self.workdir / f"call{self.n}.in.pt", self.workdir / f"call{self.n}.out.pt"
        if mode == "call":
            detach = lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x  # noqa: E731
            torch.save({"args": [detach(a) for a in args], "kwargs": {k: detach(v) for k, v in (kwargs or {}).items()}},
                       path_in)
        cell = nbformat.v4.new_code_cell(_CALL_SOURCE.format(mode=mode, name=name, path_in=str(path_in),
                                                             path_out=str(path_out)))
        future = asyncio.run_coroutine_threadsafe(self.kernel.run(cell, None, remaining),
                                                  self.loop)
        started = time.monotonic()
        try:
            reply = future.result()
        except DeadKernelError:
            self.dead = True
            raise RuntimeError(f"the kernel died while running {name}") from None
        finally:
            self.spent += time.monotonic() - started
        if reply.get("ename") == TIMEOUT_ENAME and reply.get("traceback") == []:
            self.stuck = bool(reply.get("stuck"))
            raise TimeoutError(f"{name} ran longer than the check's {self.limit:g} s limit and was interrupted")
        if reply.get("status") != "ok" or not path_out.exists():
            raise RuntimeError(f"the grader could not call {name}: {reply.get('ename')}: {reply.get('evalue')}")
        try:
            result = torch.load(path_out, weights_only=True)
        except Exception as e:  # noqa: BLE001 — whatever the kernel wrote, only tensors and plain values are read
            raise TypeError(f"{name} returned something the grader cannot read back ({type(e).__name__})") from None
        finally:
            for p in (path_in, path_out):
                p.unlink(missing_ok=True)
        if not result.get("ok"):
            raise _exception(str(result.get("ename")), str(result.get("evalue")))
        return _unwrap(result["value"])

    def run_check(self, cell: NotebookNode, limit: float) -> tuple[bool, str, list]:
        """Execute one check cell here. Returns (passed, message, outputs for the graded notebook)."""
        self.limit, self.spent = limit, 0.0
        tree = integrity.parse_cell(cell.source)
        namespace = {"__name__": "__main__", "__builtins__": builtins}
        out = io.StringIO()
        outputs, value, error = [], None, None
        try:
            free = _free_names(tree)
            if free:
                for name, (kind, val) in self.call("names", sorted(free)).items():
                    if kind == "callable":
                        namespace[name] = _Remote(name, self)
                    elif kind == "value":
                        namespace[name] = _unwrap(val)
            body = tree.body
            last = body.pop() if body and isinstance(body[-1], __import__("ast").Expr) else None
            with contextlib.redirect_stdout(out):
                exec(compile(__import__("ast").Module(body, []), f"<check {cell.metadata['check']}>", "exec"),
                     namespace)
                if last is not None:
                    value = eval(compile(__import__("ast").Expression(last.value), "<check>", "eval"), namespace)
        except Exception as e:  # noqa: BLE001 — the check's verdict
            error = e
        printed = out.getvalue()
        if printed:
            outputs.append(nbformat.v4.new_output("stream", name="stdout", text=printed))
        if error is not None:
            outputs.append(nbformat.v4.new_output("error", ename=type(error).__name__, evalue=str(error),
                                                  traceback=traceback.format_exception_only(type(error), error)))
            return False, _clean(f"{type(error).__name__}: {error}"), outputs
        outputs.append(nbformat.v4.new_output("execute_result", data={"text/plain": repr(value)}, execution_count=None))
        if value is True:
            return True, "", outputs
        hints = [line for line in printed.splitlines() if line.startswith("✗")]
        return False, _clean("\n".join(hints) or f"the check evaluated to {value!r}"), outputs


def _free_names(tree) -> set[str]:
    """Names a check reads but never binds (nor imports): the learner's functions and variables it uses."""
    import ast

    bound, used = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            bound |= {a.arg for a in node.args.args}
        elif isinstance(node, ast.comprehension):
            bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return used - bound


# --- one submission ------------------------------------------------------------------------------------------

def _describe_cell(nb: NotebookNode, index: int) -> str:
    first = next((line for line in nb.cells[index].source.splitlines() if line.strip()), "")
    return f"{first[:60]!r}"


def _kind(cell) -> str:
    return "hidden" if HIDDEN in tags(cell) else "public" if PUBLIC in tags(cell) else "?"


async def _grade_async(nb, origin, test_index, report: Report, cell_timeout: float, total_timeout: float,
                       workdir: str, t0: float, state: dict) -> tuple[dict[int, tuple[bool, str]], list[str]]:
    """Run the learner's cells, then the checks. Returns ({test index: (passed, message)}, audit results);
    ``state["not_run"]`` says why checks did not run, if they did not."""
    kernel = _Kernel(nb, workdir)
    deadline = t0 + total_timeout
    skipped: set[int] = set()
    restarts = 0
    results: dict[int, tuple[bool, str]] = {}
    audits: list[str] = []
    first_run = True

    def where(k: int) -> str:
        return f"cell {origin[k] + 1} of the submission ({_describe_cell(nb, k)})"

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
                        report.errors.append(f"the learner's cells hit the {total_timeout:g} s limit in {where(k)}")
                        state["not_run"] = f"not run: the learner's cells hit the {total_timeout:g} s limit"
                        return "time limit"
                    reply = await kernel.run(nb.cells[k], k, min(cell_timeout, remaining))
                    if reply.get("stuck"):
                        stuck_at = k
                        break
                    if first_run and reply.get("status") != "ok":
                        report.errors.append(_clean(f"{where(k)}: {reply.get('ename', 'Error')}: "
                                                    f"{reply.get('evalue', '')}"))
                    if reply.get("ename") == TIMEOUT_ENAME and time.monotonic() >= deadline:
                        report.errors.append(f"the learner's cells hit the {total_timeout:g} s limit in {where(k)}")
                        state["not_run"] = f"not run: the learner's cells hit the {total_timeout:g} s limit"
                        return "time limit"
            except DeadKernelError:
                place = where(k) if k is not None else "the kernel start and imports"
                report.errors.append(f"the kernel died in {place}")
                state["not_run"] = f"not run: the kernel died in {place}"
                return "kernel died"
            if stuck_at is None:
                return "graded"
            await kernel.stop()
            if first_run:
                report.errors.append(f"{where(stuck_at)}: ignored the interrupt after {cell_timeout:g} s; skipped "
                                     "(the kernel was restarted and the cells before it run again)")
            skipped.add(stuck_at)
            restarts += 1
            if restarts > MAX_RESTARTS or time.monotonic() >= deadline:
                report.errors.append(f"the learner's cells hit the {total_timeout:g} s limit in {where(stuck_at)}")
                state["not_run"] = f"not run: the learner's cells hit the {total_timeout:g} s limit"
                return "time limit"

    try:
        status = await learner_cells()
        first_run = False
        report.status = status
        if status != "graded":
            return results, audits
        audit = nbformat.v4.new_code_cell(_AUDIT_SOURCE)
        await kernel.run(audit, None, PROBE_TIMEOUT)
        before = _audit_names(audit)
        audits.append(_audit_flag(before, "by the learner's cells"))
        checks = _Checks(kernel, asyncio.get_running_loop(), workdir)
        for i in test_index:
            if checks.stuck or checks.dead:
                await kernel.stop()
                restarts += 1
                state["not_run"] = "not run: the kernel stopped answering in an earlier check, too often"
                if restarts > MAX_RESTARTS:
                    break
                checks.stuck = checks.dead = False
                state["not_run"] = "not run: the kernel stopped answering in an earlier check"
                if await learner_cells() != "graded":
                    break
            passed, message, outputs = await asyncio.to_thread(checks.run_check, nb.cells[i], cell_timeout)
            nb.cells[i].outputs = outputs
            results[i] = (passed, message)
        if not (checks.stuck or checks.dead):
            audit = nbformat.v4.new_code_cell(_AUDIT_SOURCE)
            await kernel.run(audit, None, PROBE_TIMEOUT)
            after = _audit_names(audit)
            new = [n for n in after if n not in (before or [])] if after is not None else None
            audits.append(_audit_flag(new, "by the learner's functions while the checks called them"))
        return results, audits
    finally:
        await kernel.stop()


def _audit_names(cell) -> list[str] | None:
    """The names the audit cell found rebound; None when it printed no result."""
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    line = next((ln for ln in text.splitlines() if ln.startswith("VRS_EDU_AUDIT ")), None)
    try:
        names = json.loads(line.split(" ", 1)[1]) if line else None
    except ValueError:
        return None
    return names if isinstance(names, list) else None


def _audit_flag(names: list[str] | None, when: str) -> str:
    """'' when nothing was rebound, else a flag naming what was."""
    if names is None:
        return (f"the grader's audit of rebound names gave no result {when}: the notebook removed or replaced "
                "something the audit relies on")
    if not names:
        return ""
    shown = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
    return f"rebound {when}: {shown} (cannot change the grade: the checks run in the grader's process)"


def grade_submission(path: str | Path, assignment: str | None = None, student: str | None = None,
                     sources: str | Path = SOURCES, cell_timeout: float = 60, total_timeout: float = 300,
                     out_dir: str | Path | None = None, allow_reference: bool = False) -> Report:
    """Grade one submitted notebook; never raises for anything the submission contains.

    Args:
        assignment: used when neither the notebook's metadata nor its file name names a known assignment.
        student: default: see :func:`student_name`.
        cell_timeout: seconds one learner's cell, and one check, may run before it is interrupted.
        total_timeout: seconds the learner's cells may run in all (kernel start included); the checks each have
            ``cell_timeout`` of their own on top.
        out_dir: where to write the reports (see the module docstring); None writes nothing.
        allow_reference: give points to a function that uses the course's reference implementation (it is
            flagged either way).

    Raises:
        ValueError: ``assignment`` names no assignment in ``sources``.
    """
    path = Path(path)
    t0 = time.perf_counter()
    known = [a.name for a in discover(sources)]
    if assignment is not None and assignment not in known:
        raise ValueError(f"--assignment: no assignment named {assignment!r}; known: {', '.join(known) or 'none'}")
    report = Report(student or "", assignment or "", str(path), "graded")
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
    copies = make_copies(find(report.assignment, sources))
    grader = copies["grader"]
    tests = [c for c in grader.cells if is_test(c)]
    report.max_points = float(sum(c.metadata["points"] for c in tests))
    if submission is None:
        report.checks = [CheckResult(c.metadata["check"], _kind(c), False, 0.0, float(c.metadata["points"]),
                                     "not run: the notebook could not be read") for c in tests]
        return _finish(report, t0, out_dir, None)
    if meta.get("copy") not in (None, "student"):
        report.errors.append(f"note: this file is the {meta['copy']} copy of the assignment, not the student copy")

    nb, origin, test_index = grading_notebook(submission, grader)
    graded = integrity.graded_names(c for c in grader.cells if SOLUTION in tags(c))
    found = integrity.inspect([(origin[k] + 1, nb.cells[k].source) for k in origin if nb.cells[k].cell_type == "code"],
                              integrity.baseline(copies["student"].cells), graded)
    for name, where in found.reference.items():
        report.flags.append(f"{name} uses the course's reference implementation: {'; '.join(where)}")
    reference_imports = [w for w in found.imports if not any(w in x for xs in found.reference.values() for x in xs)]
    report.flags += [f"imports the course's code: {w}" for w in reference_imports]
    report.flags += [f"rebinds a library's or the course's name: {w}" for w in found.rebinds]

    results: dict[int, tuple[bool, str]] = {}
    state = {"not_run": ""}
    try:
        with tempfile.TemporaryDirectory(prefix="vrs-edu-grade-") as workdir:
            results, audits = asyncio.run(_grade_async(nb, origin, test_index, report, cell_timeout, total_timeout,
                                                       workdir, time.monotonic(), state))
            report.flags += [a for a in audits if a]
    except Exception as e:  # the grader's own machinery failed on this submission: report it, go on to the next
        report.status = "grader error"
        report.errors.append(_clean(f"{type(e).__name__}: {e}"))
    not_run = state["not_run"] or f"not run ({report.status})"
    for i in test_index:
        cell = nb.cells[i]
        passed, message = results.get(i, (False, not_run))
        pts = float(cell.metadata["points"])
        uses = _free_names(integrity.parse_cell(cell.source)) & set(found.reference)
        if uses and not allow_reference:
            message = (f"no points: {', '.join(sorted(uses))} uses the course's reference implementation"
                       + (" (the check itself passed)" if passed else f" (and the check failed: {message})"))
            passed = False
        report.checks.append(CheckResult(cell.metadata["check"], _kind(cell), passed, pts if passed else 0.0, pts,
                                         _clean(message)))
    report.points = sum(c.points for c in report.checks)
    return _finish(report, t0, out_dir, nb)


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
                  "errors", "flags", "submission", "report")


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
            for suffix in (".json", ".csv", ".graded.ipynb"):
                old.with_name(old.name[: -len(".json")] + suffix).unlink(missing_ok=True)
    json_path.write_text(json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n")
    with csv_path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for c in report.checks:
            w.writerow([report.student, report.assignment, c.check, c.kind, c.passed, c.points, c.max_points,
                        c.message])
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
                         r["submission"], str(p.relative_to(out_dir))])
        except (ValueError, KeyError):
            continue  # not one of ours
    rows.sort(key=lambda r: (r[1], r[0], r[-1]))
    path = Path(out_dir) / "summary.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SUMMARY_FIELDS)
        w.writerows(rows)
    return path
