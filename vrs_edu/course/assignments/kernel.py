"""The kernel side of grading: the cells the grader adds to a learner's notebook, and a kernel that runs cells
one at a time with a time limit each, tells a slow cell from a stuck kernel, and can be restarted.

* the preload cell (first): imports torch & co. into ``sys.modules`` (not the learner's time), keeps a private
  snapshot of the watched modules' attributes and installs the reference monitor (see ``_PRELOAD_SOURCE``); the audit
  cell (after the learner's cells) has the monitor report, signed, what was rebound, copied or opened;
* the call cell: runs one of the learner's functions through the monitor on arguments the grader saved, and saves
  what it returned — tensors and plain values only — for the grader to read back with
  ``torch.load(weights_only=True)``; the monitor reports, signed, the references the call reached.

An isolated kernel starts through :mod:`.jail` in the submission's sandbox (:class:`.sandbox.Workspace`): a user,
namespaces and limits of its own, a home of its own, and none of the grader's environment but its paths and locale.
"""
from __future__ import annotations

import ast
import contextlib
import hmac
import os
import subprocess
from pathlib import Path

import nbformat
import zmq
import zmq.asyncio
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbformat import NotebookNode

from vrs_edu.course.assignments import integrity
from vrs_edu.course.assignments.sandbox import jail_command, read_kernel_file

# PYTHONDONTWRITEBYTECODE: a kernel never writes the course's bytecode caches. It reads a valid one, and compiles
# from the source where a cache is stale or empty (after a `git pull`, or a run as another user), where it would
# otherwise try to rewrite it: a write into the course, which the monitor counts against the student.
KERNEL_ENV = {"VRS_EDU_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
              "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
PROBE_TIMEOUT = 5.0       # after an interrupt: how long a kernel has to answer again before it counts as stuck

PRELOAD = ("torch", "numpy", "vrs_edu.nn", "vrs_edu.course.seeds", "vrs_edu.course.checks")
# ... and, when the learner's cells import them, these libraries and the course's own modules (matplotlib and
# seaborn alone take 2 s of a kernel's start: preloaded only for a notebook that uses them)
PRELOAD_IF_IMPORTED = ("matplotlib", "seaborn", "numpy", "torch", "vrs_edu")
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
# * after the learner's cells (from the audit on), a watch between the grader's cells: a reference that runs
#   outside a graded call — in a wrapper that stands between the call cell and the monitor, an IPython event hook
#   that reads the call's inputs first, a patched `torch.load` — is noted and reported with the next call, and
#   removing the watch or starting a thread there is refused;
# * `call(fn, args, kwargs, token)`, through which the grader's call cell runs a graded function with a profile
#   hook that notes every call of a reference's code (or of a copy), however the function reached it: an import,
#   `sys.modules`, `getattr`, `exec`, `__import__`.
#
# What decides a flag leaves the kernel *signed*: each call, and the audit, appends one line to `report-<token>` in
# the kernel's home, an HMAC-SHA256 (with a key that the grader wrote for this kernel alone and that the preload
# reads and deletes before the learner's first cell) of the call's token and what the monitor saw. The grader counts
# a report only with a valid signature, the token it chose for that call, and the next call number: a monitor that
# the learner replaced (a global assignment), an audit that printed a fake line, a `json` rebound, or a call of the
# monitor outside the grader's cells, all give a missing, unsigned, or out-of-order report — a flag, never a clean
# one. The source runs in a namespace of its own with a private copy of the builtins, and keeps its own references
# to every function it uses, so rebinding a name (in the notebook, in `builtins`, `sys` or `os`) changes nothing
# here. It lives in the learner's process all the same: code written against it (reading its closure through `gc`,
# ctypes) can still defeat it; the sandbox (sandbox.py, jail.py) does not depend on it.
_PRELOAD_SOURCE = '''\
def _vrs_edu_grader_preload(config, user_ns):
    import importlib, os, sys, threading, types
    from _hashlib import hmac_digest
    key_path = os.environ.pop(config["key_env"])
    with open(key_path, "rb") as f:
        key = f.read()
    os.unlink(key_path)
    _open, _write, _close = os.open, os.write, os.close
    _setprofile, _getprofile = sys.setprofile, sys.getprofile
    _realpath, _fsdecode, _sep, _CodeType = os.path.realpath, os.fsdecode, os.sep, types.CodeType
    _threads = threading.enumerate
    baseline = {t.ident for t in _threads()}   # the kernel's own threads: a later one could run code unmonitored
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC
    home = os.environ["HOME"]   # the submission's own folder (sandbox.kernel_env)

    def signed(token, *fields):
        payload = repr((token,) + fields).encode()
        line = hmac_digest(key, payload, "sha256").hex().encode() + b" " + payload + b"\\n"
        fd = _open(home + "/report-" + token, flags, 0o600)
        try:
            _write(fd, line)
        finally:
            _close(fd)

    for m in config["modules"]:
        importlib.import_module(m)
    for m in config["optional"]:
        try:
            importlib.import_module(m)
        except Exception:
            pass   # the learner's cell raises it again, in its own time and report
    import torch
    watched = config["watched"]
    objects = {n: sys.modules[n] for n in sys.modules if n in watched or n == "vrs_edu" or n.startswith("vrs_edu.")}
    objects.update({"torch.Tensor": torch.Tensor, "torch.nn.Module": torch.nn.Module})
    before = {n: (o, dict(vars(o))) for n, o in objects.items() if o is not None}
    skip = {"_", "__", "___", "input", "__warningregistry__", "__loader__", "__spec__", "__cached__", "__builtins__"}
    missing = object()

    def fingerprint(code):
        consts = tuple(fingerprint(c) if isinstance(c, _CodeType) else (type(c).__name__, repr(c))
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
    state = {"active": False, "own": False, "armed": False, "reached": [], "tampered": [], "outside": [],
             "copies": [], "opened": [], "calls": 0}
    secret = tuple(config["secret"])
    course = tuple(config["course"])
    spawn = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
             "pty.spawn", "_thread.start_new_thread")

    def scan(code, depth=0):
        if depth > 20 or not isinstance(code, _CodeType):
            return
        if (len(code.co_code), code.co_argcount) in sizes and id(code) not in codes:
            label = prints.get(fingerprint(code))
            if label is not None:
                codes[id(code)] = (code, label + " (a copy made at run time)")
                if label not in state["copies"]:
                    state["copies"].append(label)
        for c in code.co_consts:
            if isinstance(c, _CodeType):
                scan(c, depth + 1)

    def inside(path, roots):
        try:
            path = _realpath(_fsdecode(path))
        except Exception:
            return False
        return any(path == r or path.startswith(r + _sep) for r in roots)

    def hook(event, args):
        if event == "exec" and args:
            scan(args[0])
        elif event == "function.__new__" and args:
            scan(args[0])
        elif event == "open" and args and isinstance(args[0], (str, bytes)):
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            flags_ = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writes = any(ch in mode for ch in "wax+") or flags_ & write_flags
            if inside(args[0], secret) or (writes and inside(args[0], course)):
                note = ("writes " if writes else "reads ") + _fsdecode(args[0])
                if note not in state["opened"] and len(state["opened"]) < 50:
                    state["opened"].append(note)
        if state["active"] and not state["own"]:
            if event in ("sys.setprofile", "sys.settrace") or event.startswith(spawn):
                state["tampered"].append(event)
                raise RuntimeError(f"the grader does not allow {event} while it calls a graded function")
        elif state["armed"] and not state["own"]:
            # between the grader's cells: removing the watch, or a thread that runs without it, would let code
            # compute with a reference unseen before the next call
            thread = event == "_thread.start_new_thread" and not (
                args and isinstance(getattr(args[0], "__self__", None), threading.Thread)
                and kernel_thread(args[0].__self__))
            if event in ("sys.setprofile", "sys.settrace") or thread:
                note = f"{event} outside a graded call, after the learner's cells"
                if note not in state["outside"]:
                    state["outside"].append(note)
                raise RuntimeError(f"the grader does not allow {event} between its calls")

    def profile(frame, event, arg):
        if event == "call":
            entry = codes.get(id(frame.f_code))
            if entry is not None and entry[0] is frame.f_code and entry[1] not in state["reached"]:
                state["reached"].append(entry[1])

    def gap(frame, event, arg):
        # the watch between the grader's cells (after the learner's): a reference that runs here, outside a graded
        # call, computes for the notebook (a wrapper of the monitor, an IPython event hook, a patched torch.load)
        if event == "call":
            entry = codes.get(id(frame.f_code))
            if entry is not None and entry[0] is frame.f_code:
                note = f"{entry[1]} ran outside a graded call, after the learner's cells"
                if note not in state["outside"]:
                    state["outside"].append(note)

    def arm():
        if not state["armed"]:
            state["own"] = True
            _setprofile(gap)
            state["own"], state["armed"] = False, True

    def kernel_thread(t):
        # a thread the kernel itself starts later (its output and comm machinery), not the notebook's
        target = getattr(t, "_target", None)
        module = getattr(target, "__module__", None) or type(t).__module__ or ""
        # ... or tqdm's monitor, which any progress bar starts and keeps (it runs tqdm's code only)
        return module.split(".")[0] in ("ipykernel", "zmq", "IPython", "jupyter_client", "tornado", "comm", "traitlets",
                                        "tqdm")

    def children():
        try:
            return sum(len(open(f"/proc/self/task/{t}/children").read().split()) for t in os.listdir("/proc/self/task"))
        except OSError:
            return 0

    def identity(fn):
        code = getattr(fn, "__code__", None)
        return "not a function" if not isinstance(code, _CodeType) else f"{code.co_filename}:{code.co_firstlineno}:{id(code)}"

    def call(name, args, kwargs, token):
        # the monitor looks the function up itself: whatever stands between the grader's cell and it cannot hand it
        # another one without the grader seeing that the function called is not the one the notebook defined
        fn = user_ns[name]
        arm()
        state["calls"] += 1
        state["reached"], state["tampered"], state["outside"] = [], state["outside"], []
        extra = [t for t in _threads() if t.ident not in baseline and not kernel_thread(t)]
        if extra:
            state["tampered"].append(f"{len(extra)} thread(s) the notebook started were running (a thread escapes the "
                                     "monitor)")
        if children():
            state["tampered"].append("processes the notebook started were running (a process escapes the monitor)")
        state["own"] = True
        _setprofile(profile)
        state["own"], state["active"] = False, True
        try:
            return fn(*args, **kwargs)
        finally:
            state["active"] = False
            intact = _getprofile() is profile
            state["own"] = True
            _setprofile(gap)
            state["own"] = False
            if not intact:
                state["tampered"].append("the monitor was removed")
            signed(token, "call", state["calls"], [str(x) for x in state["reached"]],
                   [str(x) for x in state["tampered"]], identity(fn))

    def audit(token, names):
        rebound = sorted(f"{n}.{k}" for n, (o, attrs) in before.items() for k, v in attrs.items()
                         if k not in skip and vars(o).get(k, missing) is not v)
        signed(token, "audit", state["calls"], rebound, [str(x) for x in state["copies"]],
               [str(x) for x in state["opened"]], {str(n): identity(user_ns.get(n)) for n in names})
        arm()   # the learner's cells are done: from here on, a reference runs only inside a graded call

    sys.addaudithook(hook)
    return audit, types.MappingProxyType({"call": call})   # read-only: its entry cannot be wrapped
'''

# One call of a learner's function (or a look-up of the learner's names), in the kernel. The arguments come from
# the grader (a file in a folder the kernel cannot change); the result goes back as tensors and plain values only.
# What the monitor saw goes back signed, in the report file (see above), not here.
CALL_SOURCE = '''\
def _vrs_edu_grader_call(mode, name, path_in, path_out, monitor, token):
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
            value = plain(monitor["call"](name, spec["args"], spec["kwargs"], token))
        result = {{"ok": True, "value": value}}
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        result = {{"ok": False, "ename": type(e).__name__, "evalue": str(e)[:2000]}}
    torch.save(result, path_out)
_vrs_edu_grader_call({mode!r}, {name!r}, {path_in!r}, {path_out!r}, globals().get({monitor!r}), {token!r})
del _vrs_edu_grader_call
'''

AUDIT_SOURCE = '{audit}({token!r}, {names!r})'
KEY_ENV = "VRS_EDU_GRADER_KEY_FILE"


def audit_cell(token: str, names: list[str] = ()) -> NotebookNode:
    """The audit: the monitor appends its signed summary (names rebound, references copied, files opened) to the
    report file of ``token``."""
    return nbformat.v4.new_code_cell(AUDIT_SOURCE.format(audit=AUDIT_NAME, token=token, names=sorted(names)))


def read_reports(home: Path, token: str, key: bytes, limit: int = 1 << 20) -> tuple[list[tuple], int]:
    """The signed lines of ``report-<token>`` in a kernel's home: (their fields after the token, how many lines
    were not validly signed for this token). An absent file gives ([], 0)."""
    try:
        data = read_kernel_file(Path(home) / f"report-{token}", limit)
    except FileNotFoundError:
        return [], 0
    except ValueError:
        return [], 1
    good, bad = [], 0
    for line in data.splitlines():
        mac, _, payload = line.partition(b" ")
        expected = hmac.new(key, payload, "sha256").hexdigest().encode()
        try:
            fields = ast.literal_eval(payload.decode()) if hmac.compare_digest(mac, expected) else None
        except (ValueError, SyntaxError, UnicodeDecodeError):
            fields = None
        if isinstance(fields, tuple) and fields and fields[0] == token:
            good.append(fields[1:])
        else:
            bad += 1
    return good, bad


def preload_cell(tests: list[NotebookNode], monitored: list[tuple[str, str, str]] = (),
                 secret: list[str] = (), course: list[str] = (), learner: list[NotebookNode] = ()) -> NotebookNode:
    """The first cell: preload (and watch) the libraries, the course's package, the checks' modules and the
    libraries of :data:`PRELOAD_IF_IMPORTED` that the ``learner``'s cells import, and install the reference monitor
    for ``monitored`` ((module, qualname, label) of each reference); ``secret``: folders whose opening is flagged,
    ``course``: folders whose writing is flagged. A module the learner names that does not import is left to the
    learner's cell (and its error)."""
    modules = list(PRELOAD)
    for cell in tests:
        for _, module, _, _ in integrity.imports(integrity.parse_cell(cell.source)):
            if module not in modules:
                modules.append(module)
    optional = []
    for cell in learner:
        tree = integrity.parse_cell(cell.source) if cell.get("cell_type") == "code" else None
        for _, module, _, _ in integrity.imports(tree) if tree else ():
            if module.split(".")[0] in PRELOAD_IF_IMPORTED and module not in modules + optional:
                optional.append(module)
    config = {"modules": modules, "optional": optional, "watched": list(WATCHED),
              "monitored": [list(m) for m in monitored],
              "secret": [os.path.realpath(p) for p in secret], "course": [os.path.realpath(p) for p in course],
              "key_env": KEY_ENV}
    # in a namespace of its own, with a private copy of the builtins: nothing the learner rebinds later reaches it
    source = ("_vrs_edu_grader_ns = {'__builtins__': dict(vars(__import__('builtins')))}\n"
              f"exec({_PRELOAD_SOURCE!r}, _vrs_edu_grader_ns)\n"
              f"{AUDIT_NAME}, {MONITOR_NAME} = _vrs_edu_grader_ns['_vrs_edu_grader_preload']({config!r}, globals())\n"
              "del _vrs_edu_grader_ns\n")
    return nbformat.v4.new_code_cell(source, id="grader-preload")


TIMEOUT_ENAME = "TimeoutError"


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager that starts its kernel through :mod:`.jail` (``jail``: the jail's configuration, None to
    start it as this process's user), reading a connection file made over to the kernel's user."""

    jail: dict | None = None

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # The kernel's own start-up lines ("To connect another client to this kernel…") would reach the teacher's
        # terminal once per submission; what the notebook prints travels over the kernel's sockets, not stdout.
        kw.setdefault("stdout", subprocess.DEVNULL)
        if self.jail is not None:
            os.chown(self.connection_file, self.jail["uid"], self.jail["gid"])
            kernel_cmd = jail_command(self.jail, kernel_cmd)
        return await super()._async_launch_kernel(kernel_cmd, **kw)


class LimitedClient(NotebookClient):
    """nbclient's client, keeping at most ``output_bytes`` of each cell's outputs: past it, one note, and the rest
    is dropped as it arrives (``cut``: cell index -> bytes the cell sent in all)."""

    output_bytes: int = 1 << 20
    # After the interrupt at a cell's time limit, nbclient waits iopub_timeout (4 s) for the cell's last outputs: a
    # kernel that obeys the interrupt sends them within milliseconds, one that ignores it sends none (the probe after
    # it tells which). One second, not four, there: a stuck cell cost 3 + 4 + 5 + 4 s before its kernel was restarted
    # (its limit, this wait, the probe's limit, this wait again), now 3 + 1 + 5 + 1 s.
    interrupted_iopub_timeout: int = 1

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.sent: dict[int, int] = {}
        self.cut: dict[int, int] = {}   # cell index (-1: updates of displayed outputs) -> bytes sent in all
        self.updates = 0

    async def _async_handle_timeout(self, timeout, cell=None):
        reply = await super()._async_handle_timeout(timeout, cell)
        self.iopub_timeout = min(self.iopub_timeout, self.interrupted_iopub_timeout)   # for this cell only
        return reply

    async def async_execute_cell(self, *args, **kw):
        default = self.iopub_timeout
        try:
            return await super().async_execute_cell(*args, **kw)
        finally:
            self.iopub_timeout = default

    def _update_display_id(self, display_id, msg):
        # an update of an earlier output counts toward the limit of the cell that is running now
        size = 256 + sum(len(str(k)) + len(str(v)) for k, v in msg.get("content", {}).items())
        self.updates += size
        if self.updates <= self.output_bytes:
            return super()._update_display_id(display_id, msg)
        self.cut[-1] = self.updates
        return None

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        # everything the message carries (data and its keys, metadata, text, traceback), and a floor per message so
        # that many small outputs count too
        size = 256 + sum(len(str(k)) + len(str(v)) for k, v in content.items())
        self.sent[cell_index] = self.sent.get(cell_index, 0) + size
        if self.sent[cell_index] <= self.output_bytes:
            return super().output(outs, msg, display_id, cell_index)
        if cell_index not in self.cut:
            outs.append(nbformat.v4.new_output("stream", name="stderr", text=(
                f"\n[the grader cut this cell's output here: it keeps {self.output_bytes / (1 << 20):g} MiB of output "
                "per cell]\n")))
        self.cut[cell_index] = self.sent[cell_index]
        return None


class Kernel:
    """A kernel that runs cells with a per-cell limit, tells a stuck kernel from a slow cell, and can be
    restarted. ``workspace`` (:class:`.sandbox.Workspace`): the submission's folders and user; each start gets a
    fresh socket folder and a fresh key for the monitor's signed reports (:attr:`key`)."""

    def __init__(self, nb: NotebookNode, workspace, env: dict | None = None):
        self.nb, self.ws, self.env = nb, workspace, env
        self.workdir = str(workspace.home)
        # nbclient stores each executed cell back at its index: the grader's own cells (calls, probes, audits) use
        # a spare slot at the end of a list of its own, so they never replace a cell of the graded notebook.
        self.cells = nbformat.v4.new_notebook(metadata=nb.metadata)
        self.cells.cells = list(nb.cells) + [nbformat.v4.new_code_cell("")]
        self.slot = len(self.cells.cells) - 1
        self.client: LimitedClient | None = None
        self._ctx = None
        self.replies: dict[int, dict] = {}
        self.starts = 0
        self.key = b""
        self.monitor_calls = 0   # the grader's calls through the monitor since this start (the signed reports count)
        self.defined: dict[str, str] = {}   # graded name -> the function the notebook defined (the last audit)
        self.cut: dict[int, int] = {}

    async def start(self) -> None:
        iso = self.ws.iso
        key_path, self.key = self.ws.write_secret()
        self.monitor_calls = 0
        # IPC sockets in a folder of their own, not TCP ports: the kernel has no network, and no other user on the
        # machine can talk to it. Messages over 4x the output limit are refused by the socket, never read.
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, 4 * iso.limits.output_bytes + (1 << 20))
        sockets = self.ws.socket_dir()
        km = SandboxKernelManager(kernel_name="python3", transport="ipc", ip=str(sockets / "kernel"),
                                  connection_file=str(self.ws.conn / f"kernel{self.starts}.json"), context=context)
        km.jail = self.ws.jail_config() if iso.isolated else None
        self.starts += 1
        self.client = LimitedClient(
            self.cells, km=km, allow_errors=True, interrupt_on_timeout=True,
            timeout_func=lambda cell: cell.metadata.get("vrs_edu_timeout"),
            error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "the time limit was reached and the cell was "
                              "interrupted", "traceback": []},
            shutdown_kernel="immediate", startup_timeout=120, resources={"metadata": {"path": self.workdir}})
        self.client.output_bytes = iso.limits.output_bytes
        self.client.on_cell_executed = lambda cell, cell_index, execute_reply: self.replies.__setitem__(
            id(cell), (execute_reply or {}).get("content", {}))
        env = {**(self.env or os.environ), **KERNEL_ENV, KEY_ENV: key_path}
        self._ctx = self.client.async_setup_kernel(env=env, cleanup_kc=True)
        await self._ctx.__aenter__()
        self.ws.seal(sockets)

    async def stop(self) -> None:
        if self.client is not None:
            self.cut.update(self.client.cut)
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

    async def audit(self, names: list[str] = ()) -> dict | None:
        """Run the audit cell; what the monitor found (``rebound``, ``copies``, ``opened``) from its signed report,
        or None when there is no valid one, when the monitor counted other calls than the grader's, or when more
        than one report came for the token (the learner's code replaced, bypassed or called the monitor)."""
        token = os.urandom(16).hex()
        await self.run(audit_cell(token, names), None, PROBE_TIMEOUT)
        good, bad = read_reports(self.ws.home, token, self.key)
        if bad or len(good) != 1 or good[0][0] != "audit" or good[0][1] != self.monitor_calls:
            return None
        _, _, rebound, copies, opened, defined = good[0]
        self.defined = dict(defined)
        return {"rebound": list(rebound), "copies": list(copies), "opened": list(opened), "defined": dict(defined)}
