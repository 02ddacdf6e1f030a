"""Grading that no student can turn against the class: a hostile class of assignment 02 (9 points), graded by root
with isolation on, as a teacher would, on a copy of the course (a sandbox that failed would change the copy, never
this checkout). Each hostile student tries one fault that the review found, beside two honest students:

| student    | what the notebook does                                          | before                     | now         |
|------------|-----------------------------------------------------------------|----------------------------|-------------|
| c_link     | links `call<n>.in.pt`... in its folder to a checker, a          | root overwrote them: 4/4   | nothing     |
|            | classmate's notebook and a root-only file                       | -> 0/4 for the honest one  | followed    |
| d_spawn    | starts a process in a new session that outlives its kernel and  | 150 of 300 survived;       | none        |
|            | looks for the other kernels and the grader                      | 0/4 -> 4/4 for a classmate | survives; 0 |
| e_monitor  | calls the reference, and replaces the grader's monitor by a     | 4/4, no flag               | 0/9, flagged|
|            | global assignment                                               |                            |             |
| f_audit    | rebinds torch.allclose and replaces the audit by a fake line    | no flag                    | flagged     |
| g_limits   | 6 GiB, a full disk and /dev/shm, 3 MiB printed, 300 threads,    | 20 GiB used, 9 GiB left in | each limit  |
|            | and a stride-0 tensor of 1e10 elements returned                 | /tmp, 4 GB in the grader   | named       |
| h..k       | later trials: a wrapped monitor entry, a thread pool, views of one storage, output in metadata   |
| l, m       | the reference run between the grader's cells (a wrapper of the  | 9/9, no flag               | 0 for those,|
|            | monitor by global assignment; an IPython pre_run_cell hook)     |                            | flagged     |

The honest students (a_right: every answer right; b_wrong: the scale missing and the pattern transposed) keep the
grades they get alone. Needs root and Linux namespaces (skipped, saying why, elsewhere); slow (a kernel each).
"""
import hashlib
import json
import os
import uuid
from pathlib import Path

import nbformat
import pytest

from test_grading_isolation import course  # noqa: F401  (a fixture)
from test_grading_isolation import (ROOTED, WRONG, WRONG_ALONE, _grade, _notebook, _printed, _report, _solution_attend,
                                    _solutions, _write)

slow = pytest.mark.slow


def _why_no_sandbox() -> str | None:
    if not ROOTED:
        return "the kernels can only run in a sandbox of their own when the grader is root"
    from vrs_edu.course.assignments.sandbox import _namespaces_work

    why = _namespaces_work()
    return f"this machine cannot make the sandbox's namespaces: {why}" if why else None


pytestmark = [slow, pytest.mark.skipif(_why_no_sandbox() is not None, reason=_why_no_sandbox() or "")]
MARKER = f"vrs-edu-survivor-{uuid.uuid4().hex[:8]}"

LINKS = '''\
import os
for _n in range(1, 40):
    for _name, _target in TARGETS.items():
        for _kind in ("in", "out"):
            try:
                os.symlink(_target, f"call{_n}.{_kind}.pt" if _name == "checker" else f"call{_n}.{_kind}.{_name}.pt")
            except OSError:
                pass
'''
SPAWN = f'''\
import glob, json, os, subprocess, sys
_child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "{MARKER}"],
                          start_new_session=True)
_seen = {{"processes": len([p for p in os.listdir("/proc") if p.isdigit()]),
         "grader_seen": any(b"assignments" in open(f"/proc/{{p}}/cmdline", "rb").read()
                            for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{{p}}/cmdline")),
         "connection_files": glob.glob("/tmp/vrs-edu-grade-*/conn/*.json") + glob.glob("/tmp/**/kernel*.json",
                                                                                       recursive=True)}}
print("SPAWN " + json.dumps(_seen))
'''
MONITOR = '''\
def attention_pattern(q, k):
    mods = [m for n, m in list(__import__("sys").modules.items()) if n.endswith("nn.attention")
            and not n.startswith("torch")]
    return getattr(mods[0], "attention_pattern")(q, k)


_vrs_edu_grader_monitor = {"call": lambda fn, args, kwargs, token: fn(*args, **kwargs)}
'''
AUDIT = '''\
import torch
torch.allclose = lambda *a, **k: True
_vrs_edu_grader_audit = lambda *a: print('VRS_EDU_AUDIT {"rebound": [], "copies": [], "opened": []}')
'''
FILL = '''\
def _fill(path, mib):
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(b"x" * (1 << 20))
'''
LIMIT_CELLS = [
    "_big = torch.ones(int(1.6e9))   # 6.4 GB",
    FILL + "try:\n    _fill('fill.bin', 100)   # the home: a 50 MiB disk in this test\nfinally:\n"
           "    __import__('os').remove('fill.bin')   # (the grader's calls need room for their results)",
    FILL + "_fill('/dev/shm/g-fill', 300)",          # 256 MiB
    "print('x' * (3 << 20))",
    "import threading, time\n_threads = [threading.Thread(target=time.sleep, args=(3,)) for _ in range(300)]\n"
    "[t.start() for t in _threads]",
    "open('/tmp/g-fill', 'w').write('left behind?')\nopen('/var/tmp/g-fill', 'w').write('left behind?')",
]
HUGE = '''\
import torch
torch.Tensor.clone = lambda self, *a, **k: self   # the grader's call cell clones what it sends back


def attention_pattern(q, k):
    if q.size(-2) == 9:   # the hidden causality check: a stride-0 tensor of 1e10 elements
        return torch.zeros(1).expand(10 ** 10)
''' + "\n".join("    " + line for line in """T, Dh = q.size(-2), q.size(-1)
scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)
return scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float('-inf')).softmax(-1)""".splitlines())


REF = ("import sys\n"
       "def _ref(n):  # the reference, never named: no import, no 'vrs_edu' in the code\n"
       "    return getattr(sys.modules[seed_everything.__module__.split('.')[0] + '.nn.attention'], n)\n")
WRAPPER = REF + '''\
_mon = globals().get('_vrs_edu_grader_monitor')
if _mon is not None:   # not a global assignment: the monitor's own dict, its entry wrapped
    _real = _mon['call']
    def _wrap(fn, args, kwargs, token):
        r = _ref('attention_' + 'pattern')(*args, **kwargs)
        return _real(lambda *a, **k: r, args, kwargs, token)
    _mon['call'] = _wrap


def attention_pattern(q, k):
    return _ref('attention_' + 'pattern')(q, k)
'''
STASH = REF + """\
_stash = []


def attention_pattern(q, k):   # what something else computed with the reference, before the monitor's call
    return _stash.pop() if _stash else q
"""
REASSIGNED = STASH + """\
_real = _vrs_edu_grader_monitor


def _wrap(name, args, kwargs, token):
    if name == 'attention_pattern':
        _stash.append(_ref('attention_' + 'pattern')(*args, **kwargs))
    return _real['call'](name, args, kwargs, token)


_vrs_edu_grader_monitor = {'call': _wrap}   # a global assignment: the real monitor is still called, with clean hands
"""
EVENT = STASH + """\
import re


def _before_cell(info):   # IPython runs it before each cell: the grader's call cell names its input file
    found = re.search(r"'([^']+[.]in[.]pt)'", info.raw_cell or '')
    if found and "'attention_pattern'" in info.raw_cell:
        spec = torch.load(found.group(1), weights_only=True)
        _stash.append(_ref('attention_' + 'pattern')(*spec['args'], **spec['kwargs']))


get_ipython().events.register('pre_run_cell', _before_cell)
"""
PROGRESS_BAR = "from tqdm import tqdm\n_bar = tqdm(total=10)   # an honest progress bar, never closed: tqdm's thread\n"
POOL = REF + '''\
import concurrent.futures
_pool = concurrent.futures.ThreadPoolExecutor(1)
_pool.submit(int).result()   # its thread started before any call


def attention_pattern(q, k):
    return _pool.submit(_ref('attention_' + 'pattern'), q, k).result()
'''
VIEWS = '''\
class _Big:
    def as_subclass(self, cls):
        return self

    def clone(self):
        return torch.zeros(1, dtype=torch.complex128).expand(16_000_000)


class _Evil(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "detach":
            return _Big()
        return super().__torch_function__(func, types, args, kwargs or {})


def attention_pattern(q, k):   # 12 views of one 16-byte storage: 3 GB once made contiguous in the grader
    return [torch.zeros(1).as_subclass(_Evil)] * 12
'''
METADATA = ("from IPython.display import display, update_display\n"
            "for _i in range(10):\n"
            "    display({'text/plain': 'x'}, raw=True, metadata={'pad': 'y' * 1_000_000})\n"
            "for _i in range(10):\n"
            "    display({'text/plain': 'x'}, raw=True, display_id=f'd{_i}')\n"
            "for _i in range(10):   # updates of earlier outputs: counted too\n"
            "    update_display({'text/plain': 'x'}, raw=True, metadata={'pad': 'y' * 1_000_000}, display_id=f'd{_i}')\n"
            "open('/run/lock/h-left', 'w').write('left behind?')\n")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _right(course):
    sol = nbformat.read(course / "data" / "assignments" / "solution" / "02_causal_attention.ipynb", as_version=4)
    return _solutions(sol)[0].source, _solution_attend(course)


def _with_cells(nb, cells):
    at = nb.cells.index(_solutions(nb)[0])
    for i, source in enumerate(cells):
        nb.cells.insert(at + 1 + i, nbformat.v4.new_code_cell(source))
    return nb


@pytest.fixture(scope="module")
def hostile_class(course, tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "collected"
    secret = root / "root-only.txt"
    secret.write_text("the teacher's\n")
    secret.chmod(0o600)
    right = _right(course)
    a_right = _write(folder, "a_right", _notebook(course, *right))
    _write(folder, "b_wrong", _notebook(course, *WRONG))
    checker = course / "vrs_edu" / "course" / "exercises" / "ch02.py"
    targets = {"checker": str(checker), "classmate": str(a_right), "secret": str(secret)}
    _write(folder, "c_link", _notebook(course, *right, cell=f"TARGETS = {targets!r}\n" + LINKS))
    _write(folder, "d_spawn", _notebook(course, *right, cell=SPAWN))
    _write(folder, "e_monitor", _notebook(course, MONITOR, right[1]))
    _write(folder, "f_audit", _notebook(course, *right, cell=AUDIT))
    _write(folder, "g_limits", _with_cells(_notebook(course, HUGE, right[1]), LIMIT_CELLS))
    _write(folder, "h_wrapper", _notebook(course, WRAPPER, right[1]))
    _write(folder, "i_pool", _notebook(course, POOL, right[1]))
    _write(folder, "j_views", _notebook(course, VIEWS, right[1]))
    _write(folder, "k_metadata", _notebook(course, *right, cell=METADATA))
    _write(folder, "l_reassigned", _notebook(course, REASSIGNED, right[1]))
    _write(folder, "m_event", _notebook(course, EVENT, right[1]))
    _write(folder, "o_progress", _notebook(course, *right, cell=PROGRESS_BAR))
    before = {p: _sha(p) for p in (checker, a_right, secret)}
    printed = _grade(course, root / "grades", folder, extra=["--disk-limit", "0.05"])
    return root / "grades", printed, before


def test_the_report_says_each_notebook_ran_in_a_sandbox_of_its_own(hostile_class):
    grades, printed, _ = hostile_class
    assert printed.splitlines()[0].startswith("isolated: each notebook ran in a sandbox of its own")
    iso = _report(grades, "a_right")["isolation"]
    assert iso["isolated"] and iso["namespaces"] and iso["limits"]["disk_bytes"] == int(0.05 * (1 << 30))


# What b_wrong's answers earn by themselves (its scale missing and its pattern transposed): WRONG_ALONE, 1 point of 9
# (test_grading_isolation grades the same answers alone).


def test_the_honest_students_keep_the_grades_they_get_alone(hostile_class):
    grades, _, _ = hostile_class
    right = _report(grades, "a_right")
    assert (right["points"], right["max_points"], right["flags"]) == (9, 9, [])
    wrong = _report(grades, "b_wrong")
    assert [(c["check"], c["passed"]) for c in wrong["checks"]] == WRONG_ALONE
    assert (wrong["points"], wrong["flags"]) == (1, [])


def test_root_follows_no_link_a_student_made(hostile_class):
    # before: root wrote call<n>.in.pt through the links: a checker, a classmate's notebook and a root-only file
    grades, _, before = hostile_class
    assert {p: _sha(p) for p in before} == before
    r = _report(grades, "c_link")
    assert r["points"] == 9
    assert any("symbolic link(s) in its folder" in e and "follows none" in e for e in r["errors"]), r["errors"]


def test_nothing_a_notebook_starts_survives_it_nor_sees_the_others(hostile_class):
    # before: 150 of 300 detached processes survived, found the next kernel's connection file and rewrote its function
    grades, _, _ = hostile_class
    seen = json.loads(_printed(grades, "d_spawn", "SPAWN"))
    assert seen["grader_seen"] is False and seen["connection_files"] == []
    assert seen["processes"] <= 4, seen   # the kernel, its child, and what `ps` would be: its own namespace only
    survivors = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            if MARKER.encode() in Path(f"/proc/{p}/cmdline").read_bytes():
                survivors.append(p)
        except OSError:
            continue
    assert survivors == []
    # its process was running while the grader called its functions: it could have answered for them
    spawn = _report(grades, "d_spawn")
    assert spawn["points"] == 0
    assert any("processes the notebook started were running (a process escapes the monitor)" in f
               for f in spawn["flags"]), spawn["flags"]


def test_a_replaced_monitor_gives_a_flag_not_a_clean_call(hostile_class):
    # before: a global assignment of the monitor hid the reference: 9/9 (here), no flag
    r = _report(hostile_class[0], "e_monitor")
    pattern_checks = [c for c in r["checks"] if c["check"].startswith("attention_pattern")]
    assert pattern_checks and all(c["points"] == 0 for c in pattern_checks)
    assert any("monitor gave no signed report" in f for f in r["flags"]), r["flags"]


def test_a_fake_audit_line_hides_no_rebinding(hostile_class):
    # before: the fake line printed first was read as the audit: torch.allclose rebound, no flag
    r = _report(hostile_class[0], "f_audit")
    assert any("the grader's audit of rebound names gave no result" in f for f in r["flags"]), r["flags"]


def test_every_limit_is_held_and_named_in_the_students_report(hostile_class):
    grades, _, _ = hostile_class
    r = _report(grades, "g_limits")
    errors = "\n".join(r["errors"])
    assert "the sandbox's limit: 4 GiB of memory per process" in errors
    assert errors.count("No space left on device (the sandbox's limits: 0.05 GiB of disk in its home, 256 MiB in "
                        "each of its /tmp, /var/tmp, /dev/shm)") == 2
    assert "printed 3.0 MiB; the graded notebook keeps the first 1 MiB" in errors
    assert "the sandbox's limit: 256 processes and threads" in errors
    huge = [c for c in r["checks"] if "elements or more (the last of shape (10000000000,)); the grader reads back at "
            "most 16,000,000 elements" in c["message"]]
    assert huge and all(not c["passed"] for c in huge), [c["message"] for c in r["checks"]]
    assert (grades / "02_causal_attention" / "g_limits.graded.ipynb").stat().st_size < 3 << 20
    for left in ("/tmp/g-fill", "/var/tmp/g-fill", "/dev/shm/g-fill"):
        assert not os.path.exists(left), f"{left} was left on the machine"


# --- without a kernel ---------------------------------------------------------------------------------------

def test_a_changed_course_stops_an_isolated_grading_and_is_put_back(tmp_path):
    from vrs_edu.course.assignments.course_files import CourseFiles
    from vrs_edu.course.assignments.grade import Session, _check_course
    from vrs_edu.course.assignments.sandbox import Isolation

    (tmp_path / "course").mkdir()
    checker = tmp_path / "course" / "ch02.py"
    checker.write_text("def check(): ...\n")
    session = Session(None, Isolation(True, namespaces=True), CourseFiles([tmp_path / "course"]))
    checker.write_text("def check(): return True\n")
    flags, _, stop = _check_course(session)
    assert checker.read_text() == "def check(): ...\n"
    assert stop.startswith("the course's files changed while this notebook was graded in its sandbox: course/ch02.py "
                           "(changed); put back")
    assert flags == [stop + "; grading stopped"]


def _pattern_points(report) -> list[float]:
    return [c["points"] for c in report["checks"] if c["check"].startswith("attention_pattern")]


def test_a_wrapped_monitor_entry_or_a_thread_does_not_hide_the_reference(hostile_class):
    # found by a hostile trial of the first sandbox: 9/9 and no flag for both
    grades = hostile_class[0]
    wrapper, pool = _report(grades, "h_wrapper"), _report(grades, "i_pool")
    assert _pattern_points(wrapper) and set(_pattern_points(wrapper)) == {0}
    # the monitor is read-only: the cell that wraps its entry fails there (and defines nothing after it)
    assert any("'mappingproxy' object does not support item assignment" in e for e in wrapper["errors"]), \
        wrapper["errors"]
    assert _pattern_points(pool) and set(_pattern_points(pool)) == {0}
    assert any("thread(s) the notebook started were running" in f for f in pool["flags"]), pool["flags"]


def test_many_small_views_and_output_in_metadata_stay_within_the_limits(hostile_class):
    # found by the same trial: 6.4 GB in the grader for 12 views of one storage; a 120 MB graded notebook
    grades = hostile_class[0]
    views = _report(grades, "j_views")
    assert any("elements or more (the last of shape (16000000,)); the grader reads back at most 16,000,000" in
               c["message"] for c in views["checks"]), [c["message"] for c in views["checks"]]
    assert (grades / "02_causal_attention" / "k_metadata.graded.ipynb").stat().st_size < 2 << 20
    errors = _report(grades, "k_metadata")["errors"]
    assert any("the graded notebook keeps the first 1 MiB" in e for e in errors), errors
    assert any(e.startswith("updates of displayed outputs: printed") for e in errors), errors
    assert not os.path.exists("/run/lock/h-left")


def test_a_reference_run_between_the_graders_cells_is_flagged(hostile_class):
    # found by a second hostile trial: 9/9 and no flag. The notebook's function only hands back what a wrapper of
    # the monitor (a global assignment) or an IPython hook (before the call cell) computed with the reference.
    grades = hostile_class[0]
    for student in ("l_reassigned", "m_event"):
        report = _report(grades, student)
        assert _pattern_points(report) and set(_pattern_points(report)) == {0}, (student, report["checks"])
        assert any("attention_pattern" in f and "ran outside a graded call, after the learner's cells" in f
                   for f in report["flags"]), (student, report["flags"])


def test_a_progress_bar_is_no_thread_of_the_notebook(hostile_class):
    # found by a third hostile trial: an honest notebook with an open tqdm bar got 0/9 ("1 thread(s) the notebook
    # started were running"): tqdm's monitor thread runs tqdm's code only
    progress = _report(hostile_class[0], "o_progress")
    assert (progress["points"], progress["flags"]) == (9, []), (progress["flags"], progress["checks"])
