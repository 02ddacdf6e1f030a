"""Grading that a student with a file system cannot fool: the cheats of assignment 02 (9 points) that needed no
`import` of the course, each graded by `vrs-edu assignments grade` as a teacher would, on a copy of the course (so
that a cheat that works changes the copy, never this checkout).

| cheat (answers otherwise as stated)                                   | before        | now                        |
|-----------------------------------------------------------------------|---------------|----------------------------|
| the graded functions find the reference through sys.modules / exec    | 9/9, 0 flags  | 0/9, flagged               |
| a copy of the reference exec'd from its source file (attend honest)   | 9/9, 0 flags  | 4/9 (attend's), flagged    |
| a cell walks the disk for the assignment's source, execs its solution | 5/9, 0 flags  | 0/9: nothing readable      |
| a cell appends `def check_...(): return True` to the checker on disk  | 6/9, 0 flags  | 0/9, flagged, file intact  |
| ... and an honest, all-wrong student graded after it                  | 7/9           | its grade alone (1/9)      |

Isolated (the grader runs as root: each kernel runs in a sandbox of its own) the cheats that touch files fail on the
file permissions; not isolated (VRS_EDU_GRADE_ISOLATION=off, as for a grader that is not root) the checker is
changed on disk, then detected by its hash and put back before the next notebook, and the report says at the top
that the kernels were not isolated. The grader is a subprocess whose PYTHONPATH puts the copy first; its kernels
inherit it. Each run takes a few seconds per notebook, hence `slow`.
"""
import copy
import csv
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOTED = os.name == "posix" and os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOTED, reason="the kernels can only run as another user when the grader is root")
slow = pytest.mark.slow

SYSMOD = '''\
def attention_pattern(q, k):
    # no import, no name of the course: the reference, found among the loaded modules
    mods = [m for n, m in list(__import__("sys").modules.items()) if n.endswith("nn.attention")
            and not n.startswith("torch")]
    return getattr(mods[0], "attention_pattern")(q, k)


def attend(pattern, v):
    g = {}
    exec("import vrs" + "_edu.nn.attention as m", g)
    return g["m"].attend(pattern, v)
'''
COPIER = '''\
def attention_pattern(q, k):
    # a fresh copy of the reference: its module's source file, read and exec'd
    path = __import__("sys").modules["vrs" + "_edu.nn.attention"].__file__
    g = {"__name__": "a_copy", "__package__": "vrs" + "_edu.nn"}   # its relative imports work
    exec(compile(open(path).read(), "a_copy.py", "exec"), g)
    return g["attention_pattern"](q, k)
'''
DISKWALK = '''\
import pathlib
_root = pathlib.Path(seed_everything.__code__.co_filename).parents[2]   # the checkout the course was installed from
_found = []
for _p in _root.rglob("02_causal_attention.py"):
    try:
        _src = _p.read_text()
    except OSError:
        continue
    _body = _src.split("def attention_pattern", 1)[1].split("### END SOLUTION", 1)[0]
    exec("def attention_pattern" + "\\n".join(l for l in _body.splitlines() if "###" not in l), globals())
    _found.append(str(_p))
print("FOUND", _found)
'''
TAMPER = '''\
import pathlib
_f = pathlib.Path(seed_everything.__code__.co_filename).parent / "exercises" / "ch02.py"
try:
    with open(_f, "a") as _fh:
        _fh.write("\\n\\ndef check_attention_pattern(*a, **k):\\n    return True\\n\\n\\n"
                  "def check_attend(*a, **k):\\n    return True\\n")
    print("TAMPERED")
except OSError as _e:
    print("REFUSED", type(_e).__name__)
'''
ZEROS = ("def attention_pattern(q, k):\n    return torch.zeros(*q.shape[:-1], q.shape[-2])\n",
         "def attend(pattern, v):\n    return torch.zeros_like(v)\n")
WRONG = ("def attention_pattern(q, k):  # the scale is missing\n    T = q.size(-2)\n"
         "    scores = q @ k.transpose(-2, -1)\n"
         "    return scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float('-inf')).softmax(-1)\n",
         "def attend(pattern, v):  # the pattern transposed\n    return pattern.transpose(-2, -1) @ v\n")
PROBE = '''\
import json, os
_seen = {"uid": os.getuid()}
for _name, _p in PATHS.items():
    try:
        open(_p).read(1)
        _seen[_name] = "read"
    except OSError as _e:
        _seen[_name] = type(_e).__name__
try:
    open(PATHS["checker"], "a").close()
    _seen["write checker"] = "written"
except OSError as _e:
    _seen["write checker"] = type(_e).__name__
print("PROBE " + json.dumps(_seen))
'''


@pytest.fixture(scope="module")
def course(request):
    """A copy of the course (package, teacher's folder, generated notebooks) in a fresh temporary folder."""
    root = Path(tempfile.mkdtemp(prefix="vrs-edu-course-copy-"))
    root.chmod(0o755)   # on the import path (PYTHONPATH): a sandboxed kernel must be able to list it, as a checkout
    shutil.copytree(ROOT / "vrs_edu", root / "vrs_edu", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "data" / "assignments", root / "data" / "assignments")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")   # stands for the history (old sources)
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    return root


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _student(course: Path) -> nbformat.NotebookNode:
    return nbformat.read(course / "data" / "assignments" / "student" / "02_causal_attention.ipynb", as_version=4)


def _solutions(nb):
    return [c for c in nb.cells if "solution" in c.metadata.get("tags", [])]


def _notebook(course, pattern=None, attend=None, cell=None, after_first=True):
    nb = copy.deepcopy(_student(course))
    sols = _solutions(nb)
    if pattern is not None:
        sols[0].source = pattern
    if attend is not None:
        sols[1].source = attend
    if cell is not None:
        nb.cells.insert(nb.cells.index(sols[0]) + 1 if after_first else 2, nbformat.v4.new_code_cell(cell))
    return nb


def _grade(course, out, *paths, env=None, extra=()):
    run = subprocess.run([sys.executable, "-m", "vrs_edu.cli", "assignments", "grade", *map(str, paths), "--out",
                          str(out), "--timeout", "30", *extra], capture_output=True, text=True, cwd=course,
                         env={**os.environ, "PYTHONPATH": str(course), "OMP_NUM_THREADS": "1", **(env or {})})
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _report(out, student):
    return json.loads((out / "02_causal_attention" / f"{student}.json").read_text())


def _printed(out, student, marker):
    nb = nbformat.read(out / "02_causal_attention" / f"{student}.graded.ipynb", as_version=4)
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            for line in o.get("text", "").splitlines():
                if line.startswith(marker):
                    return line[len(marker):].strip()
    return None


def _write(folder: Path, name: str, nb) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{name}.ipynb")
    return folder / f"{name}.ipynb"


@pytest.fixture(scope="module")
def checker(course):
    path = course / "vrs_edu" / "course" / "exercises" / "ch02.py"
    return path, _sha(path)


# What the honest, all-wrong answers (WRONG: the scale missing, the pattern transposed) earn by themselves, the grade
# they must get whoever is graded before them: only the check that the pattern puts no weight on the future passes,
# 1 point of 9. Graded alone below (test_without_namespaces_...: first in its grading call) and first in
# test_grading_sandbox's hostile class (after an honest student only), each run checking these rows; stated here
# rather than graded once more alone for the comparisons (a grading call costs seconds before its first kernel).
WRONG_ALONE = [("attention_pattern_public", False), ("attention_pattern_hidden", False),
               ("attention_pattern_no_future", True), ("attend_public", False), ("attend_hidden", False),
               ("attention_pattern_on_model", False), ("attend_on_model", False)]


def _checks(report) -> list[tuple[str, bool]]:
    return [(c["check"], c["passed"]) for c in report["checks"]]


@pytest.fixture(scope="module")
def isolated_class(course, checker, tmp_path_factory):
    """Every cheat, then the honest student, graded in one call by a root grader (isolated kernels)."""
    root = tmp_path_factory.mktemp("isolated")
    folder = root / "collected"
    paths = {"checker": str(checker[0]), "sources": str(course / "data/assignments/sources/02_causal_attention.py"),
             "grader copy": str(course / "data/assignments/grader/02_causal_attention.ipynb"),
             "git": str(course / ".git/HEAD"), "report of an earlier notebook": str(root / "grades/summary.csv")}
    _write(folder, "a_tamper", _notebook(course, *ZEROS, cell=TAMPER))
    _write(folder, "b_honest", _notebook(course, *WRONG))
    _write(folder, "c_sysmod", _notebook(course, SYSMOD, ""))
    _write(folder, "d_copier", _notebook(course, COPIER, _solution_attend(course)))
    _write(folder, "e_diskwalk", _notebook(course, cell=DISKWALK))
    _write(folder, "f_probe", _notebook(course, cell=f"PATHS = {paths!r}\n" + PROBE))
    printed = _grade(course, root / "grades", folder)
    return root / "grades", printed


def _solution_attend(course) -> str:
    nb = nbformat.read(course / "data" / "assignments" / "solution" / "02_causal_attention.ipynb", as_version=4)
    return _solutions(nb)[1].source


@slow
@needs_root
def test_the_report_says_at_the_top_that_the_kernels_ran_isolated(isolated_class):
    grades, printed = isolated_class
    assert printed.splitlines()[0].startswith("isolated: each notebook ran in a sandbox of its own")
    report = _report(grades, "c_sysmod")
    assert list(report)[0] == "isolation" and report["isolation"]["isolated"] is True
    rows = list(csv.DictReader(io.StringIO((grades / "summary.csv").read_text())))
    assert {r["isolated"] for r in rows} == {"yes"} and len(rows) == 6


@slow
@needs_root
def test_an_isolated_kernel_can_read_no_teachers_file_and_write_no_course_file(isolated_class, checker):
    grades, _ = isolated_class
    seen = json.loads(_printed(grades, "f_probe", "PROBE"))
    assert seen["uid"] != 0
    assert {k: v for k, v in seen.items() if k != "uid"} == {
        "checker": "read", "sources": "PermissionError", "grader copy": "PermissionError", "git": "PermissionError",
        "report of an earlier notebook": "FileNotFoundError", "write checker": "PermissionError"}
    # (the report folder is not even there: it lies in /tmp, and the kernel's /tmp is its own)
    assert _sha(checker[0]) == checker[1]
    flags = "\n".join(_report(grades, "f_probe")["flags"])
    assert "tried to read the teacher's files or write the course's" in flags and "02_causal_attention.py" in flags


@slow
@needs_root
def test_reaching_the_reference_through_sys_modules_or_exec_earns_nothing(isolated_class):
    # before: 9/9 with no flag (no import of the course, no 'vrs_edu' in the code: the static reading saw nothing)
    r = _report(isolated_class[0], "c_sysmod")
    assert (r["points"], r["max_points"]) == (0, 9)
    for c in r["checks"]:
        assert c["message"].startswith("no points: ") and "(the check itself passed)" in c["message"], c
    flags = "\n".join(r["flags"])
    assert "attention_pattern reached the course's reference implementation (vrs_edu.nn.attention" in flags
    assert "attend reached the course's reference implementation (vrs_edu.nn.attention.attend)" in flags


@slow
@needs_root
def test_a_copy_of_the_reference_made_from_its_source_earns_nothing(isolated_class):
    # before: 9/9 with no flag; now attention_pattern's 5 points go, attend (the student's own) keeps its 4
    r = _report(isolated_class[0], "d_copier")
    earned = {c["check"]: c["points"] for c in r["checks"]}
    assert r["points"] == 4 and all(v == 0 for k, v in earned.items() if k.startswith("attention_pattern"))
    assert "(a copy made at run time)" in "\n".join(r["flags"])


@slow
@needs_root
def test_the_solution_on_disk_is_nowhere_to_be_found(isolated_class):
    # before: the package held course/assignment_sources/02_causal_attention.py: 5/9, every attention_pattern point
    grades, _ = isolated_class
    assert _printed(grades, "e_diskwalk", "FOUND") == "[]"
    assert _report(grades, "e_diskwalk")["points"] == 0


@slow
@needs_root
def test_a_checker_rewritten_on_disk_changes_no_grade_and_the_file_stays(isolated_class, checker):
    # before: 6/9 for answers that are all zeros, and 7/9 for the honest student graded after it (alone: 1/9)
    grades, _ = isolated_class
    assert _printed(grades, "a_tamper", "REFUSED") == "PermissionError"
    tamper = _report(grades, "a_tamper")
    assert tamper["points"] == 0
    assert any("writes " + str(checker[0]) in f for f in tamper["flags"]), tamper["flags"]
    assert _sha(checker[0]) == checker[1]
    honest = _report(grades, "b_honest")
    assert _checks(honest) == WRONG_ALONE and honest["points"] == 1   # its grade alone


@slow
def test_without_isolation_a_rewritten_checker_is_flagged_and_put_back(course, checker, tmp_path):
    folder = tmp_path / "collected"
    _write(folder, "a_tamper", _notebook(course, *ZEROS, cell=TAMPER))
    _write(folder, "b_honest", _notebook(course, *WRONG))
    printed = _grade(course, tmp_path / "grades", folder, env={"VRS_EDU_GRADE_ISOLATION": "off"})
    assert printed.splitlines()[0].startswith("NOT ISOLATED (turned off with --no-isolation or "
                                              "VRS_EDU_GRADE_ISOLATION=off)")
    tamper = _report(tmp_path / "grades", "a_tamper")
    assert list(tamper)[0] == "isolation" and tamper["isolation"]["isolated"] is False
    assert _printed(tmp_path / "grades", "a_tamper", "TAMPERED") == ""   # the write went through ...
    assert tamper["points"] == 0                                        # ... and bought nothing
    assert any(f.startswith("changed the course's files: vrs_edu/course/exercises/ch02.py (changed); put back")
               for f in tamper["flags"]), tamper["flags"]
    assert _sha(checker[0]) == checker[1], "the checker was not put back"
    honest = _report(tmp_path / "grades", "b_honest")
    assert _checks(honest) == WRONG_ALONE and honest["points"] == 1   # its grade alone
    assert not any("changed the course" in f for f in honest["flags"])


@pytest.fixture(scope="module")
def user_only_class(course, tmp_path_factory):
    """Two root-only options in one grading call (each call starts a grader: seconds before its first kernel):
    namespaces turned off (VRS_EDU_GRADE_NAMESPACES=off) and --allow-reference. The honest student first, with a cell
    that leaves a file in /tmp (its answers reach no reference, so --allow-reference changes nothing of its grade),
    then the student who reaches the reference through sys.modules."""
    root = tmp_path_factory.mktemp("user-only")
    left = f"/tmp/vrs-edu-left-{os.getpid()}"
    cell = f"import os\nopen({left!r}, 'w').write('left behind?')\nprint('UID', os.getuid())"
    _write(root / "collected", "b_honest", _notebook(course, *WRONG, cell=cell))
    _write(root / "collected", "c_sysmod", _notebook(course, SYSMOD, ""))
    printed = _grade(course, root / "grades", root / "collected", env={"VRS_EDU_GRADE_NAMESPACES": "off"},
                     extra=["--allow-reference"])
    return root / "grades", printed, left


@slow
@needs_root
def test_allow_reference_keeps_the_points_and_the_flag(user_only_class):
    r = _report(user_only_class[0], "c_sysmod")
    assert r["points"] == 9
    assert any("reached the course's reference implementation" in f and "--allow-reference" in f for f in r["flags"])


# --- without a kernel ---------------------------------------------------------------------------------------

def test_a_grader_that_is_not_root_says_why_it_cannot_isolate(monkeypatch):
    from vrs_edu.course.assignments import sandbox

    monkeypatch.delenv(sandbox.ENV_SWITCH, raising=False)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr("pwd.getpwuid", lambda uid: type("pw", (), {"pw_name": "teacher"})())
    with sandbox.isolate([]) as iso:
        assert not iso.isolated
        assert iso.why_not == ("the grader runs as teacher (uid 1000), not as root, so it cannot start the kernels "
                               "as another user")
        assert iso.describe().startswith("NOT ISOLATED (the grader runs as teacher")
    with sandbox.isolate([], enabled=False) as iso:
        assert not iso.isolated and "--no-isolation" in iso.why_not


def test_names_that_differ_only_in_case_get_two_rows_a_warning_and_files_that_cannot_collide(tmp_path):
    # before: Mia.json and mia.json (one file on macOS or Windows), two rows and no warning
    from vrs_edu.cli import main

    for name in ("Mia", "mia"):
        (tmp_path / "collected").mkdir(exist_ok=True)
        (tmp_path / "collected" / f"{name}.ipynb").write_text("{ not JSON")
    out = tmp_path / "grades"
    assert main(["assignments", "grade", str(tmp_path / "collected"), "--out", str(out),
                 "--assignment", "02_causal_attention"]) == 0
    files = sorted(p.name for p in (out / "02_causal_attention").glob("*.json"))
    assert len({f.lower() for f in files}) == len(files) == 2, files
    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text())))
    assert sorted(r["student"] for r in rows) == ["Mia", "mia"]
    for f in files:
        errors = json.loads((out / "02_causal_attention" / f).read_text())["errors"]
        assert any(e.startswith("warning: students 'Mia', 'mia' differ only in case") for e in errors), errors


@slow
@needs_root
def test_without_namespaces_each_kernel_still_runs_as_a_user_of_its_own_and_leaves_nothing_in_tmp(user_only_class):
    # a machine that forbids namespaces (some containers): the user and the limits still hold, and the report says so
    grades, printed, left = user_only_class
    assert printed.splitlines()[0].startswith("isolated by user only (turned off with VRS_EDU_GRADE_NAMESPACES=off)")
    r = _report(grades, "b_honest")
    assert r["isolation"]["isolated"] is True and r["isolation"]["namespaces"] is False
    assert int(_printed(grades, "b_honest", "UID")) >= 1_900_000_000
    assert not os.path.exists(left)
    assert "note: 1 file(s) the notebook left in /tmp, /var/tmp or /dev/shm were removed" in r["errors"]
    assert _checks(r) == WRONG_ALONE and r["points"] == 1   # the honest answers graded alone: what they earn


def _right_pattern(course) -> str:
    nb = nbformat.read(course / "data" / "assignments" / "solution" / "02_causal_attention.ipynb", as_version=4)
    return _solutions(nb)[0].source


@slow
def test_a_stale_or_empty_bytecode_cache_flags_no_one(course, tmp_path):
    # found by a teacher's trial: after a `git pull` that changed plots.py (its cached bytecode stale) or a run with
    # --no-isolation (caches written by root), every student was flagged "writes .../__pycache__/plots...pyc"
    copy_ = tmp_path / "course"
    shutil.copytree(course, copy_, symlinks=True)
    tag = sys.implementation.cache_tag
    sources = sorted((copy_ / "vrs_edu").rglob("*.py"))
    for i, source in enumerate(sources):
        cache = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
        cache.parent.mkdir(exist_ok=True)
        # every other cache empty, the rest stale: a valid header for an older version of the source
        cache.write_bytes(b"" if i % 2 else importlib.util.MAGIC_NUMBER + b"\0" * 12)
    folder = tmp_path / "collected"
    # a module of the course imported after the kernel's preload (as the course's own lazy imports do)
    late = "import importlib\n_schematics = importlib.import_module('vrs_edu.viz.schematics')"
    _write(folder, "a_right", _notebook(copy_, _right_pattern(copy_), _solution_attend(copy_), cell=late))
    # a grader that writes no bytecode itself (else it would refresh the caches of what it imports before any
    # kernel starts): every kernel meets the stale and empty caches
    _grade(copy_, tmp_path / "grades", folder, env={"PYTHONDONTWRITEBYTECODE": "1"})
    report = _report(tmp_path / "grades", "a_right")
    assert (report["points"], report["max_points"], report["flags"]) == (9, 9, [])
