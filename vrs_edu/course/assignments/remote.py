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
import time
import traceback
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode

from vrs_edu.course.checks import messages
from vrs_edu.course.assignments import integrity
from vrs_edu.course.assignments.kernel import CALL_SOURCE, MONITOR_NAME, TIMEOUT_ENAME, Kernel


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

    def __init__(self, kernel: Kernel, loop: asyncio.AbstractEventLoop, workdir: str):
        self.kernel, self.loop, self.workdir = kernel, loop, Path(workdir)
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
        path_in, path_out = self.workdir / f"call{self.n}.in.pt", self.workdir / f"call{self.n}.out.pt"
        if mode == "call":
            detach = lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x  # noqa: E731
            torch.save({"args": [detach(a) for a in args], "kwargs": {k: detach(v) for k, v in (kwargs or {}).items()}},
                       path_in)
        cell = nbformat.v4.new_code_cell(CALL_SOURCE.format(mode=mode, name=name, path_in=str(path_in),
                                                             path_out=str(path_out), monitor=MONITOR_NAME))
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
        if mode == "call":
            for key, into in (("reached", self.reached), ("tampered", self.tampered)):
                found = [str(x) for x in result.get(key, []) if isinstance(x, str)] if isinstance(
                    result.get(key), list) else ["the call reported nothing the grader can read"]
                for x in found:
                    if x not in into.setdefault(name, []):
                        into[name].append(x)
        if not result.get("ok"):
            raise _exception(str(result.get("ename")), str(result.get("evalue")))
        return _unwrap(result["value"])

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
