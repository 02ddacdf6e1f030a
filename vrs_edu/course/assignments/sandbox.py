"""Where a student's notebook runs while it is graded: as an unprivileged user, when the grader can arrange it.

A grader that runs as root starts every student kernel as the dedicated system user :data:`SANDBOX_USER`
(created with ``useradd --system`` on first use, or the one ``--sandbox-user`` names), with its own group, no
supplementary groups and a fresh home folder per submission. File permissions then do the isolating (otter-grader
uses a container for the same purpose), and they hold whatever the notebook's code does:

* the user can read the course's package and the Python it runs on, but not write them (they are not its files);
* the teacher's files are closed to it: the grader removes the permissions of *others* from the assignment sources
  (solutions and hidden tests), the generated solution and grader notebooks, the repository's ``.git`` (its history
  holds every earlier source), the report folder (graded notebooks hold the hidden tests) and the folders of the
  submitted notebooks (the other students' work). These stay closed after grading: they are the teacher's;
* where a folder on the way to the course's Python is closed to other users (``/root`` when Python lives in root's
  home, a clone in a ``mktemp -d`` folder), the grader opens it for *traversal only* (``o+x``: no listing) while it
  grades, and closes it again at the end (:class:`Grants`; several graders at once share the grant).

Before the first kernel the grader checks that the user can really start the course's Python and import the
package (:func:`isolate`); where it cannot — no root, no ``useradd``, a Python it cannot reach, or isolation turned
off with ``--no-isolation`` / ``VRS_EDU_GRADE_ISOLATION=off`` — the kernels run as the grader's own user and every
report says so at the top, with the reason (:class:`Isolation`).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

SANDBOX_USER = "vrs-edu-sandbox"
ENV_SWITCH = "VRS_EDU_GRADE_ISOLATION"   # "off": run the kernels as the grader's user (what --no-isolation does)
PROBE = "import ipykernel, torch, vrs_edu.course.setup; print(vrs_edu.__file__)"


@dataclass
class Isolation:
    """How the kernels of one grading run are isolated; ``isolated`` False says why not (``why_not``)."""

    isolated: bool
    user: str = ""
    uid: int | None = None
    gid: int | None = None
    why_not: str = ""
    closed: list[str] = field(default_factory=list)   # the teacher's folders closed to the sandbox user
    opened: list[str] = field(default_factory=list)   # folders opened for traversal while grading

    def describe(self) -> str:
        """One line for the top of the reports and of the command's output."""
        if self.isolated:
            return (f"isolated: the notebooks ran as user {self.user} (uid {self.uid}), which cannot write the "
                    "course's files nor read the teacher's sources, hidden tests, reports or other submissions")
        return (f"NOT ISOLATED ({self.why_not}): the notebooks ran as the grader's own user, so a notebook could read "
                "the teacher's sources and hidden tests and write the course's files (a changed file is flagged and "
                "restored after each notebook); grade untrusted notebooks as root (see the teacher's guide)")

    def to_dict(self) -> dict:
        return {"isolated": self.isolated, "summary": self.describe(), **asdict(self)}

    def kernel_user(self) -> tuple[int, int] | None:
        return (self.uid, self.gid) if self.isolated else None


def not_isolated(why: str) -> Isolation:
    return Isolation(False, why_not=why)


def _user(name: str, create: bool) -> tuple[int, int] | str:
    """(uid, gid) of ``name``, creating it as a system user when ``create``; a string says why not."""
    import pwd

    try:
        entry = pwd.getpwnam(name)
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        pass
    if not create:
        return f"there is no user {name!r}"
    useradd = shutil.which("useradd") or next((p for p in ("/usr/sbin/useradd", "/sbin/useradd")
                                              if os.path.exists(p)), None)
    if useradd is None:
        return f"no user {name!r} and no useradd to create it"
    nologin = next((p for p in ("/usr/sbin/nologin", "/sbin/nologin") if os.path.exists(p)), "/bin/false")
    run = subprocess.run([useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                          "--shell", nologin, name], capture_output=True, text=True)
    if run.returncode not in (0, 9):   # 9: created meanwhile by another grader
        return f"useradd could not create {name!r}: {run.stderr.strip()[:200]}"
    entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


def _ancestors(path: Path) -> list[Path]:
    """``path``'s folders from the root down, for its written and its resolved (symlink-free) form."""
    out: list[Path] = []
    for p in (Path(os.path.abspath(path)), Path(path).resolve()):
        for a in reversed(p.parents):
            if a not in out:
                out.append(a)
        if p.is_dir() and p not in out:
            out.append(p)
    return out


def needed_paths() -> list[Path]:
    """What a kernel must reach: this Python (its executable, prefix and base prefix), the course's package and
    every other folder on the import path that exists."""
    import vrs_edu

    paths = [Path(sys.executable), Path(sys.prefix), Path(sys.base_prefix), Path(vrs_edu.__file__).parent]
    paths += [Path(p) for p in sys.path if p and os.path.isdir(p)]
    return paths


class Grants:
    """Folders opened for traversal (``o+x``) while grading, shared by the graders running at once: the first one
    opens a folder, the last one to finish restores its mode. The ledger lives in a root-only folder (a ledger others
    could write would let them choose what root chmods); a grader that died leaves its pid, which the next one
    prunes."""

    def __init__(self, ledger_dir: Path | None = None):
        self.dir = ledger_dir or Path(tempfile.gettempdir()) / f"vrs-edu-grader-{os.geteuid()}"
        self.pid = os.getpid()
        self.mine: list[str] = []

    def _safe_dir(self) -> None:
        with contextlib.suppress(FileExistsError):
            os.mkdir(self.dir, 0o700)
        st = os.lstat(self.dir)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise PermissionError(f"{self.dir} is not a private folder of this user: refusing to use it")

    @contextlib.contextmanager
    def _ledger(self):
        self._safe_dir()
        with open(self.dir / "grants.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            path = self.dir / "grants.json"
            try:
                ledger = json.loads(path.read_text()) if path.exists() else {}
            except ValueError:
                ledger = {}
            for folder, entry in list(ledger.items()):   # graders that died: their grants end with them
                entry["pids"] = [p for p in entry["pids"] if _alive(p)]
                if not entry["pids"]:
                    _restore(folder, entry)
                    del ledger[folder]
            yield ledger
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(ledger))
            os.replace(tmp, path)

    def open(self, folders: list[Path]) -> list[str]:
        """Give others traversal of each folder that denies it; returns the folders this grader holds open."""
        with self._ledger() as ledger:
            for folder in map(str, folders):
                if folder in ledger:
                    if self.pid not in ledger[folder]["pids"]:
                        ledger[folder]["pids"].append(self.pid)
                    self.mine.append(folder)
                    continue
                mode = os.stat(folder).st_mode
                if mode & stat.S_IXOTH:
                    continue
                os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)
                ledger[folder] = {"mode": stat.S_IMODE(mode), "granted": stat.S_IMODE(mode) | stat.S_IXOTH,
                                  "pids": [self.pid]}
                self.mine.append(folder)
        return list(self.mine)

    def close(self) -> None:
        if not self.mine:
            return
        with self._ledger() as ledger:
            for folder in self.mine:
                entry = ledger.get(folder)
                if entry is None:
                    continue
                entry["pids"] = [p for p in entry["pids"] if p != self.pid]
                if not entry["pids"]:
                    _restore(folder, entry)
                    del ledger[folder]
        self.mine = []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _restore(folder: str, entry: dict) -> None:
    """Put a folder's mode back, unless someone changed it since the grant (then theirs stays)."""
    with contextlib.suppress(OSError):
        if stat.S_IMODE(os.stat(folder).st_mode) == entry["granted"]:
            os.chmod(folder, entry["mode"])


def close_to_others(folders: list[Path], keep: list[Path]) -> list[str]:
    """Remove the permissions of *others* from each existing folder (``o-rwx``), except a folder that holds one of
    ``keep`` (what the kernels need). Returns the folders closed."""
    kept = [Path(os.path.abspath(k)) for k in keep]
    closed = []
    for folder in folders:
        folder = Path(os.path.abspath(folder))
        if not folder.is_dir() or any(k == folder or folder in k.parents for k in kept):
            continue
        mode = stat.S_IMODE(os.stat(folder).st_mode)
        if mode & 0o007:
            os.chmod(folder, mode & ~0o007)
        closed.append(str(folder))
    return closed


def kernel_env(home: str | Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a student kernel gets: the grader's PATH, locale and Python path, and a home of its own
    (``home``, the submission's temporary folder) for IPython, matplotlib and caches — nothing else of the grader's
    environment (no tokens, no credentials)."""
    keep = ("PATH", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ",
            "LD_LIBRARY_PATH", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    home = str(home)
    env.update({"HOME": home, "USERPROFILE": home, "IPYTHONDIR": os.path.join(home, ".ipython"),
                "MPLCONFIGDIR": os.path.join(home, ".matplotlib"), "XDG_CACHE_HOME": os.path.join(home, ".cache"),
                "XDG_CONFIG_HOME": os.path.join(home, ".config"), "JUPYTER_RUNTIME_DIR": home,
                "JUPYTER_DATA_DIR": os.path.join(home, ".jupyter-data"), "PYTHONNOUSERSITE": "1", "TMPDIR": home})
    env.update(extra or {})
    return env


def prepare_home(home: str | Path, iso: Isolation) -> None:
    """A submission's temporary folder as its kernel's home: matplotlib's font cache copied in (building it costs
    seconds per kernel), owned by the sandbox user when isolated."""
    home = Path(home)
    with contextlib.suppress(Exception):
        import matplotlib

        cache = Path(matplotlib.get_cachedir())
        (home / ".matplotlib").mkdir(exist_ok=True)
        for f in cache.glob("fontlist-*.json"):
            shutil.copy(f, home / ".matplotlib" / f.name)
    if iso.isolated:
        for p in [home, *home.rglob("*")]:
            os.chown(p, iso.uid, iso.gid, follow_symlinks=False)


def run_as(iso: Isolation) -> dict:
    """``subprocess.Popen`` keywords that start a process as the sandbox user (empty when not isolated)."""
    if not iso.isolated:
        return {}
    return {"user": iso.uid, "group": iso.gid, "extra_groups": [], "umask": 0o077}


def _probe(iso: Isolation) -> str:
    """'' when the sandbox user can start this Python and import the course; else what went wrong."""
    with tempfile.TemporaryDirectory(prefix="vrs-edu-probe-") as home:
        prepare_home(home, iso)
        try:
            run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=home,
                                 env=kernel_env(home), timeout=180, **run_as(iso))
        except (OSError, subprocess.SubprocessError) as e:
            return f"{type(e).__name__}: {e}"
    if run.returncode == 0:
        import vrs_edu

        theirs = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "?"
        if os.path.realpath(theirs) != os.path.realpath(vrs_edu.__file__):   # a folder on the path it cannot list
            return (f"it imports the course from {os.path.dirname(theirs)}, not from "
                    f"{os.path.dirname(vrs_edu.__file__)} (a folder on the import path is closed to other users)")
        return ""
    lines = [ln for ln in run.stderr.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else f"exit status {run.returncode}"


@contextlib.contextmanager
def isolate(secrets: list[Path] = (), *, enabled: bool = True, user: str | None = None):
    """Prepare the isolation of one grading run (see the module docstring); yields an :class:`Isolation`.

    ``secrets``: the teacher's folders to close to the sandbox user. ``enabled`` False (``--no-isolation``), or
    ``VRS_EDU_GRADE_ISOLATION=off`` in the environment, runs the kernels as this process's user. ``user``: an existing
    user to run them as (default :data:`SANDBOX_USER`, created when missing).
    """
    if not enabled or os.environ.get(ENV_SWITCH, "").lower() in ("off", "0", "no", "false"):
        yield not_isolated("turned off with --no-isolation or VRS_EDU_GRADE_ISOLATION=off")
        return
    if os.name != "posix" or not hasattr(os, "geteuid"):
        yield not_isolated("this system has no POSIX users to run the kernels as")
        return
    if os.geteuid() != 0:
        import pwd

        yield not_isolated(f"the grader runs as {pwd.getpwuid(os.geteuid()).pw_name} (uid {os.geteuid()}), not as "
                           "root, so it cannot start the kernels as another user")
        return
    found = _user(user or SANDBOX_USER, create=user is None)
    if isinstance(found, str):
        yield not_isolated(found)
        return
    iso = Isolation(True, user or SANDBOX_USER, *found)
    grants = Grants()
    try:
        needs = needed_paths()
        folders = [a for p in needs for a in _ancestors(p)]
        iso.opened = grants.open(list(dict.fromkeys(folders)))
        iso.closed = close_to_others(list(secrets), keep=needs)
        why = _probe(iso)
        if why:
            grants.close()
            yield not_isolated(f"the user {iso.user} cannot start the course's Python: {why}")
            return
        yield iso
    finally:
        grants.close()


def kill_leftovers(iso: Isolation, token: str) -> int:
    """Kill what a submission's kernel left running: every process of the sandbox user whose environment carries
    this submission's ``token`` (a kernel's children inherit it). Returns how many were killed."""
    if not iso.isolated or not os.path.isdir("/proc"):
        return 0
    killed = 0
    needle = f"VRS_EDU_GRADE_TOKEN={token}".encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != iso.uid:
                continue
            if needle in Path(entry.path, "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), 9)
                killed += 1
        except OSError:
            continue
    return killed
