"""The grader's side of the checks: a check cell runs in the grader's own process, where the learner's code cannot
rebind the checkers, the reference or ``torch``; the learner's names it uses stand for functions in the kernel
(:class:`Remote`), and each call sends the arguments there and reads back what the function returned, with the
references the kernel's monitor saw it reach (:attr:`CheckRunner.reached`).
"""
from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import io
import os
import time
import traceback

import nbformat
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode

from vrs_edu.course.checks import messages
from vrs_edu.course.assignments import integrity
from vrs_edu.course.assignments.kernel import CALL_SOURCE, MONITOR_NAME, TIMEOUT_ENAME, Kernel, read_reports
from vrs_edu.course.assignments.sandbox import read_kernel_file


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


class Remote:
    """The learner's function ``name`` as the grader's checks see it: a call runs it in the kernel."""

    def __init__(self, name: str, session: "CheckRunner"):
        self.__name__ = self.__qualname__ = name
        self._session = session

    def __call__(self, *args, **kwargs):
        return self._session.call("call", self.__name__, args, kwargs)

    def __repr__(self):
        return f"<the learner's {self.__name__}>"


class CheckRunner:
    """Runs the canonical checks in this process, calling into the kernel for the learner's names."""

    def __init__(self, kernel: Kernel, loop: asyncio.AbstractEventLoop):
        self.kernel, self.loop, self.ws = kernel, loop, kernel.ws
        self.limits = kernel.ws.iso.limits
        self.spent = 0.0        # seconds this check has spent in the learner's code (the kernel calls)
        self.stuck = False      # the kernel stopped answering (or died): restart before the next check
        self.dead = False
        self.n = 0
        self.limit = 0.0
        self.reached: dict[str, list[str]] = {}    # this check: graded function -> the references its calls reached
        self.tampered: dict[str, list[str]] = {}   # ... and what it did against the monitor

    def call(self, mode: str, name, args=(), kwargs=None):
        import torch

        remaining = self.limit - self.spent
        if self.stuck or self.dead:
            raise RuntimeError("not run: the kernel stopped answering earlier in this check")
        if remaining <= 0:
            raise TimeoutError(f"the learner's functions used up the check's {self.limit:g} s limit")
        self.n += 1
        token = os.urandom(16).hex()
        # the arguments in the grader's folder (the kernel reads them, cannot change them); the result in the
        # kernel's home, read back without following a link and only up to the size limit
        # (named by the call's token: a link the learner's code planted in advance never lies in its way)
        path_in, path_out = self.ws.inbox / f"call{self.n}.in.pt", self.ws.home / f"result-{token}.pt"
        if mode == "call":
            detach = lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x  # noqa: E731
            torch.save({"args": [detach(a) for a in args], "kwargs": {k: detach(v) for k, v in (kwargs or {}).items()}},
                       path_in)
            os.chmod(path_in, 0o644)
            self.kernel.monitor_calls += 1
        cell = nbformat.v4.new_code_cell(CALL_SOURCE.format(mode=mode, name=name, path_in=str(path_in),
                                                             path_out=str(path_out), monitor=MONITOR_NAME, token=token))
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
            path_in.unlink(missing_ok=True)
        timed_out = reply.get("ename") == TIMEOUT_ENAME and reply.get("traceback") == []
        if mode == "call":   # a call cut short by the time limit may end before the monitor could report
            self._monitor_report(name, token, interrupted=timed_out)
        if timed_out:
            self.stuck = bool(reply.get("stuck"))
            raise TimeoutError(f"{name} ran longer than the check's {self.limit:g} s limit and was interrupted")
        if reply.get("status") != "ok":
            raise RuntimeError(f"the grader could not call {name}: {reply.get('ename')}: {reply.get('evalue')}")
        try:
            data = read_kernel_file(path_out, self.limits.return_bytes)
        except FileNotFoundError:
            raise RuntimeError(f"the grader could not call {name}: it wrote no result") from None
        except ValueError as e:
            raise TypeError(f"{name} returned something the grader does not read back: {e}") from None
        try:
            result = torch.load(io.BytesIO(data), weights_only=True)
        except Exception as e:  # noqa: BLE001 — whatever the kernel wrote, only tensors and plain values are read
            raise TypeError(f"{name} returned something the grader cannot read back ({type(e).__name__})") from None
        if not isinstance(result, dict):
            raise TypeError(f"{name} returned something the grader cannot read back (not the call's result)")
        if not result.get("ok"):
            raise _exception(str(result.get("ename")), str(result.get("evalue")))
        return _unwrap(check_size(result.get("value"), self.limits.return_elements, name, [0]))

    def _monitor_report(self, name: str, token: str, interrupted: bool = False) -> None:
        """What the monitor saw during one call, from its signed report; anything else is counted against it.
        ``interrupted``: the grader interrupted the call at its time limit, so a missing report is not counted, nor
        the monitor's removal — CPython removes a profile function that raises (here the interrupt's
        KeyboardInterrupt, when it lands inside it), which the audit hook sees as a `sys.setprofile`."""
        good, bad = read_reports(self.ws.home, token, self.kernel.key)
        into_reached, into_tampered = self.reached.setdefault(name, []), self.tampered.setdefault(name, [])
        if not (good or bad or not interrupted):
            return
        if bad or len(good) != 1 or good[0][:2] != ("call", self.kernel.monitor_calls):
            why = ("the grader's monitor gave no signed report for the call (it was replaced or bypassed)" if not good
                   and not bad else "the grader's monitor was called outside the grader's calls, or its report "
                   "was altered")
            if why not in into_tampered:
                into_tampered.append(why)
            return
        _, _, reached, tampered, called = good[0]
        if self.kernel.defined.get(name) not in (None, called):
            tampered = [*tampered, "the function the monitor called is not the one the notebook defined (it was "
                        "swapped during the call)"]
        if interrupted:
            tampered = [x for x in tampered if x not in ("sys.setprofile", "the monitor was removed")]
        for x, into in [(x, into_reached) for x in reached] + [(x, into_tampered) for x in tampered]:
            if x not in into:
                into.append(x)

    def run_check(self, cell: NotebookNode, limit: float) -> tuple[bool, str, list]:
        """Execute one check cell here. Returns (passed, message, outputs for the graded notebook)."""
        self.limit, self.spent = limit, 0.0
        self.reached, self.tampered = {}, {}
        tree = integrity.parse_cell(cell.source)
        namespace = {"__name__": "__main__", "__builtins__": builtins}
        out = io.StringIO()
        outputs, value, error = [], None, None
        try:
            free = free_names(tree)
            if free:
                for name, (kind, val) in self.call("names", sorted(free)).items():
                    if kind == "callable":
                        namespace[name] = Remote(name, self)
                    elif kind == "value":
                        namespace[name] = _unwrap(val)
            body = tree.body
            last = body.pop() if body and isinstance(body[-1], ast.Expr) else None
            with contextlib.redirect_stdout(out):
                exec(compile(ast.Module(body, []), f"<check {cell.metadata['check']}>", "exec"),
                     namespace)
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), "<check>", "eval"), namespace)
        except Exception as e:  # noqa: BLE001 — the check's verdict
            error = e
        printed = out.getvalue()
        if printed:
            outputs.append(nbformat.v4.new_output("stream", name="stdout", text=printed))
        if error is not None:
            outputs.append(nbformat.v4.new_output("error", ename=type(error).__name__, evalue=str(error),
                                                  traceback=traceback.format_exception_only(type(error), error)))
            return False, f"{type(error).__name__}: {error}", outputs
        outputs.append(nbformat.v4.new_output("execute_result", data={"text/plain": repr(value)}, execution_count=None))
        if value is True:
            return True, "", outputs
        hints = [m for m in messages(printed) if m.startswith("✗")]   # each wrapped hint joined into one line
        return False, "\n".join(hints) or f"the check evaluated to {value!r}", outputs


def free_names(tree) -> set[str]:
    """Names a check reads but never binds (nor imports): the learner's functions and variables it uses."""
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


def check_size(value, max_elements: int, name: str, total: list[int], _depth: int = 0):
    """``value`` as returned, after checking that its tensors hold at most ``max_elements`` elements *in all*
    (``total``: the running count; a stride-0 view counts its logical size: it is what a check would compute on, and
    what making it contiguous allocates) and that it nests at most 8 deep; tensors come back contiguous. Raises
    TypeError naming the function and the size."""
    import torch

    if isinstance(value, torch.Tensor):
        total[0] += value.numel()
        if total[0] > max_elements:
            raise TypeError(f"{name} returned tensors of {total[0]:,} elements or more (the last of shape "
                            f"{tuple(value.shape)}); the grader reads back at most {max_elements:,} elements")
        return value.contiguous()
    if _depth > 8:
        raise TypeError(f"{name} returned values nested more than 8 deep")
    total[0] += 1   # every item counts, so millions of empty lists are refused too
    if total[0] > max_elements:
        raise TypeError(f"{name} returned more than {max_elements:,} items and elements; the grader reads back no more")
    if isinstance(value, (list, tuple)):
        items = [check_size(v, max_elements, name, total, _depth + 1) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {k: check_size(v, max_elements, name, total, _depth + 1) for k, v in value.items()}
    return value
