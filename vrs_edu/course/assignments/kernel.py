"""The kernel side of grading: the cells the grader adds to a learner's notebook, and a kernel that runs cells
one at a time with a time limit each, tells a slow cell from a stuck kernel, and can be restarted.

* the preload cell (first): imports torch & co. into ``sys.modules`` (not the learner's time) and keeps a private
  snapshot of the watched modules' attributes; the audit cell (after the learner's cells) prints what was rebound;
* the call cell: runs one of the learner's functions on arguments the grader saved, and saves what it returned —
  tensors and plain values only — for the grader to read back with ``torch.load(weights_only=True)``.
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

from . import integrity

KERNEL_ENV = {"VRS_EDU_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
              "MPLBACKEND": "Agg"}
PROBE_TIMEOUT = 5.0       # after an interrupt: how long a kernel has to answer again before it counts as stuck

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

AUDIT_SOURCE = f'print("VRS_EDU_AUDIT", __import__("json").dumps({AUDIT_NAME}()))'

# One call of a learner's function (or a look-up of the learner's names), in the kernel. The arguments come from
# the grader; the result goes back as tensors and plain values only.
CALL_SOURCE = '''\
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


def preload_cell(tests: list[NotebookNode]) -> NotebookNode:
    """The first cell: preload (and watch) the libraries, the course's package and the checks' modules."""
    modules = list(PRELOAD)
    for cell in tests:
        for _, module, _, _ in integrity.imports(integrity.parse_cell(cell.source)):
            if module not in modules:
                modules.append(module)
    return nbformat.v4.new_code_cell(_PRELOAD_SOURCE.format(audit=AUDIT_NAME, modules=modules, watched=list(WATCHED)),
                                     id="grader-preload")


TIMEOUT_ENAME = "TimeoutError"


class Kernel:
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


def audit_names(cell) -> list[str] | None:
    """The names the audit cell found rebound; None when it printed no result."""
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    line = next((ln for ln in text.splitlines() if ln.startswith("VRS_EDU_AUDIT ")), None)
    try:
        names = json.loads(line.split(" ", 1)[1]) if line else None
    except ValueError:
        return None
    return names if isinstance(names, list) else None
