"""The kernel side of grading: the cells the grader adds to a learner's notebook, and a kernel that runs cells
one at a time with a time limit each, tells a slow cell from a stuck kernel, and can be restarted.

* the preload cell (first): imports torch & co. into ``sys.modules`` (not the learner's time), keeps a private
  snapshot of the watched modules' attributes and installs the reference monitor (see ``_PRELOAD_SOURCE``); the audit
  cell (after the learner's cells) prints what was rebound, copied or opened;
* the call cell: runs one of the learner's functions through the monitor on arguments the grader saved, and saves
  what it returned — tensors and plain values only — for the grader to read back with
  ``torch.load(weights_only=True)``, with the references the call reached.

An isolated kernel (:mod:`.sandbox`) runs as the sandbox user, with a home of its own and none of the grader's
environment but its paths and locale.
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbformat import NotebookNode

from vrs_edu.course.assignments import integrity

KERNEL_ENV = {"VRS_EDU_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
              "MPLBACKEND": "Agg"}
PROBE_TIMEOUT = 5.0       # after an interrupt: how long a kernel has to answer again before it counts as stuck

PRELOAD = ("torch", "numpy", "matplotlib.pyplot", "seaborn", "vrs_edu.nn", "vrs_edu.course.setup",
           "vrs_edu.course.checks")
WATCHED = ("torch", "torch.nn", "torch.nn.functional", "torch.linalg", "math", "builtins", "numpy")
AUDIT_NAME = "_vrs_edu_grader_audit"
MONITOR_NAME = "_vrs_edu_grader_monitor"

# Runs before the learner's cells: imports the heavy libraries into sys.modules without binding a name (so the
# per-cell limit measures the learner's code, and a learner who deleted the import cell still finds `torch`
# undefined), keeps a private snapshot of the watched modules' attributes for the audit after the learner's code,
# and installs the reference monitor:
#
# * an audit hook (PEP 578: it cannot be removed) that, on every `exec` of code (a cell, `exec`/`eval`, an import,
#   `types.FunctionType`), looks for code objects equal to a reference's (same bytecode, constants, names; any
#   function name): a copy of the reference made at run time, from its source file or its code object; that records
#   attempts to open the teacher's folders or to write the course's; and that, while a graded function runs, refuses
#   what would hide a call from the monitor (`sys.setprofile`, `sys.settrace`, child processes);
# * `call(fn, args, kwargs)`, through which the grader's call cell runs a graded function with a profile hook that
#   notes every call of a reference's code (or of a copy), however the function reached it: an import, `sys.modules`,
#   `getattr`, `exec`, `__import__`.
#
# It lives in the learner's process, so code written against it (editing its state through `gc`, ctypes) can still
# defeat it; the file permissions of an isolated kernel (sandbox.py) do not depend on it.
_PRELOAD_SOURCE = '''\
def _vrs_edu_grader_preload(config):
    import importlib, os, sys, types
    for m in config["modules"]:
        importlib.import_module(m)
    import torch
    watched = config["watched"]
    objects = {n: sys.modules[n] for n in sys.modules if n in watched or n == "vrs_edu" or n.startswith("vrs_edu.")}
    objects.update({"torch.Tensor": torch.Tensor, "torch.nn.Module": torch.nn.Module})
    before = {n: (o, dict(vars(o))) for n, o in objects.items() if o is not None}
    skip = {"_", "__", "___", "input", "__warningregistry__", "__loader__", "__spec__", "__cached__", "__builtins__"}
    missing = object()

    def fingerprint(code):
        consts = tuple(fingerprint(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                       for c in code.co_consts)
        return (code.co_code, code.co_names, code.co_varnames, code.co_argcount, code.co_kwonlyargcount, consts)

    codes = {}           # id(code) -> (code, label): the references' code objects and copies found since
    for module, qualname, label in config["monitored"]:
        try:
            obj = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            codes[id(obj.__code__)] = (obj.__code__, label)
        except Exception:
            continue
    prints = {fingerprint(c): label for c, label in codes.values()}
    sizes = {(len(c.co_code), c.co_argcount) for c, _ in codes.values()}
    state = {"active": False, "own": False, "reached": [], "tampered": [], "copies": [], "opened": []}
    secret = tuple(config["secret"])
    course = tuple(config["course"])
    spawn = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
             "pty.spawn")

    def scan(code, depth=0):
        if depth > 20 or not isinstance(code, types.CodeType):
            return
        if (len(code.co_code), code.co_argcount) in sizes and id(code) not in codes:
            label = prints.get(fingerprint(code))
            if label is not None:
                codes[id(code)] = (code, label + " (a copy made at run time)")
                if label not in state["copies"]:
                    state["copies"].append(label)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                scan(c, depth + 1)

    def inside(path, roots):
        try:
            path = os.path.realpath(os.fsdecode(path))
        except Exception:
            return False
        return any(path == r or path.startswith(r + os.sep) for r in roots)

    def hook(event, args):
        if event == "exec" and args:
            scan(args[0])
        elif event == "function.__new__" and args:
            scan(args[0])
        elif event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writes = any(ch in mode for ch in "wax+") or flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC)
            if inside(args[0], secret) or (writes and inside(args[0], course)):
                note = ("writes " if writes else "reads ") + os.fsdecode(args[0])
                if note not in state["opened"] and len(state["opened"]) < 50:
                    state["opened"].append(note)
        if state["active"] and not state["own"]:
            if event in ("sys.setprofile", "sys.settrace") or event.startswith(spawn):
                state["tampered"].append(event)
                raise RuntimeError(f"the grader does not allow {event} while it calls a graded function")

    def profile(frame, event, arg):
        if event == "call":
            entry = codes.get(id(frame.f_code))
            if entry is not None and entry[0] is frame.f_code and entry[1] not in state["reached"]:
                state["reached"].append(entry[1])

    def call(fn, args, kwargs):
        state["reached"], state["tampered"] = [], []
        state["own"] = True
        sys.setprofile(profile)
        state["own"], state["active"] = False, True
        try:
            return fn(*args, **kwargs)
        finally:
            state["active"] = False
            intact = sys.getprofile() is profile
            state["own"] = True
            sys.setprofile(None)
            state["own"] = False
            if not intact:
                state["tampered"].append("the monitor was removed")

    def report():
        return {"reached": list(state["reached"]), "tampered": list(state["tampered"])}

    def audit():
        return {"rebound": sorted(f"{n}.{k}" for n, (o, attrs) in before.items() for k, v in attrs.items()
                                  if k not in skip and vars(o).get(k, missing) is not v),
                "copies": list(state["copies"]), "opened": list(state["opened"])}

    sys.addaudithook(hook)
    return audit, {"call": call, "report": report}
'''

AUDIT_SOURCE = f'print("VRS_EDU_AUDIT", __import__("json").dumps({AUDIT_NAME}()))'

# One call of a learner's function (or a look-up of the learner's names), in the kernel. The arguments come from
# the grader; the result goes back as tensors and plain values only, with what the monitor saw.
CALL_SOURCE = '''\
def _vrs_edu_grader_call(mode, name, path_in, path_out, monitor):
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
    seen = {{"reached": [], "tampered": []}}
    try:
        if mode == "names":
            value = {{n: ("missing", None) if n not in ns else ("callable", None) if callable(ns[n])
                     else ("value", plain(ns[n])) for n in name}}
        else:
            spec = torch.load(path_in, weights_only=True)
            if not isinstance(monitor, dict) or "call" not in monitor:
                seen["tampered"].append("the grader's monitor is missing")
                value = plain(ns[name](*spec["args"], **spec["kwargs"]))
            else:
                try:
                    value = plain(monitor["call"](ns[name], spec["args"], spec["kwargs"]))
                finally:
                    seen = monitor["report"]()
        result = {{"ok": True, "value": value, **seen}}
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        result = {{"ok": False, "ename": type(e).__name__, "evalue": str(e)[:2000], **seen}}
    torch.save(result, path_out)
_vrs_edu_grader_call({mode!r}, {name!r}, {path_in!r}, {path_out!r}, globals().get({monitor!r}))
del _vrs_edu_grader_call
'''


def preload_cell(tests: list[NotebookNode], monitored: list[tuple[str, str, str]] = (),
                 secret: list[str] = (), course: list[str] = ()) -> NotebookNode:
    """The first cell: preload (and watch) the libraries, the course's package and the checks' modules, and install
    the reference monitor for ``monitored`` ((module, qualname, label) of each reference); ``secret``: folders whose
    opening is flagged, ``course``: folders whose writing is flagged."""
    modules = list(PRELOAD)
    for cell in tests:
        for _, module, _, _ in integrity.imports(integrity.parse_cell(cell.source)):
            if module not in modules:
                modules.append(module)
    config = {"modules": modules, "watched": list(WATCHED), "monitored": [list(m) for m in monitored],
              "secret": [os.path.realpath(p) for p in secret], "course": [os.path.realpath(p) for p in course]}
    source = (_PRELOAD_SOURCE + f"{AUDIT_NAME}, {MONITOR_NAME} = _vrs_edu_grader_preload({config!r})\n"
              "del _vrs_edu_grader_preload\n")
    return nbformat.v4.new_code_cell(source, id="grader-preload")


TIMEOUT_ENAME = "TimeoutError"


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel process runs as another user (``run_as``: :func:`.sandbox.run_as` keywords for
    ``subprocess.Popen``), reading a connection file made over to that user."""

    run_as: dict = {}

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        if self.run_as:
            os.chown(self.connection_file, self.run_as["user"], self.run_as["group"])
            kw.update(self.run_as)
        return await super()._async_launch_kernel(kernel_cmd, **kw)


class Kernel:
    """A kernel that runs cells with a per-cell limit, tells a stuck kernel from a slow cell, and can be
    restarted. ``isolation`` (:class:`.sandbox.Isolation`) None or not isolated: the kernel runs as this process's
    user; ``env``: its environment (:func:`.sandbox.kernel_env`)."""

    def __init__(self, nb: NotebookNode, workdir: str, isolation=None, env: dict | None = None):
        self.nb, self.workdir = nb, workdir
        self.isolation, self.env = isolation, env
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
        from vrs_edu.course.assignments.sandbox import run_as

        if os.name == "posix":
            km = SandboxKernelManager(kernel_name="python3", transport="ipc",
                                      ip=str(Path(self.workdir) / f"kernel{self.calls}"),
                                      connection_file=str(Path(self.workdir) / f"kernel{self.calls}.json"))
            km.run_as = run_as(self.isolation) if self.isolation is not None else {}
        else:
            km = AsyncKernelManager(kernel_name="python3")
        self.calls += 1
        self.client = NotebookClient(
            self.cells, km=km, allow_errors=True, interrupt_on_timeout=True,
            timeout_func=lambda cell: cell.metadata.get("vrs_edu_timeout"),
            error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "the time limit was reached and the cell was "
                              "interrupted", "traceback": []},
            shutdown_kernel="immediate", startup_timeout=120, resources={"metadata": {"path": self.workdir}})
        self.client.on_cell_executed = lambda cell, cell_index, execute_reply: self.replies.__setitem__(
            id(cell), (execute_reply or {}).get("content", {}))
        self._ctx = self.client.async_setup_kernel(env={**(self.env or os.environ), **KERNEL_ENV}, cleanup_kc=True)
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


def audit_result(cell) -> dict | None:
    """What the audit cell found: ``rebound`` (names), ``copies`` (references copied at run time), ``opened`` (the
    teacher's folders read, the course's files written); None when it printed no result."""
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    line = next((ln for ln in text.splitlines() if ln.startswith("VRS_EDU_AUDIT ")), None)
    try:
        found = json.loads(line.split(" ", 1)[1]) if line else None
    except ValueError:
        return None
    if not isinstance(found, dict) or not all(isinstance(found.get(k), list) for k in ("rebound", "copies", "opened")):
        return None
    return found
