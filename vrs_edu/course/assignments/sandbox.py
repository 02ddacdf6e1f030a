"""Where a student's notebook runs while it is graded: a disposable sandbox of its own, when the grader is root.

How trusted graders do it: otter-grader runs each submission in a fresh container, removed afterwards (its own
process, IPC and file-system views, ``--no-network``); CodeGrade starts a container from a snapshot per submission;
nbgrader's FAQ says it does not protect against unsafe code. This grader builds the same from the kernel's own
namespaces, per submission (:class:`Workspace`, :mod:`.jail`):

* **a user of its own**: a fresh user id, reserved for this submission alone (no account needed; two graders at
  once never share one); its files, its processes and its limits are its own. When the submission ends, every
  process of that user is killed and its folders removed;
* **its own namespaces** (PID, IPC, mount, network, UTS: :mod:`.jail`): the kernel is process 1 of its PID
  namespace, so everything it started ends with it; it sees no other process (not the grader's command line), has
  no network, and gets a private /tmp, /var/tmp and /dev/shm; the course's files are read-only and the teacher's
  folders (sources, solution and grader copies, the repository's ``.git``, the report folder, the folders of the
  submitted notebooks) are absent from its view. Its home is a tmpfs of the disk limit;
* **root never opens a path the student controls**: the grader writes only into its own folders (connection files,
  call inputs) and reads what the kernel wrote with :func:`read_kernel_file` (no links followed, regular files of a
  bounded size); the kernel's socket folder becomes the grader's once it is connected;
* **limits** (:class:`Limits`), each hit reported in that student's report.

Where the namespaces cannot be made (a container that forbids them, or ``VRS_EDU_GRADE_NAMESPACES=off``), the
kernels still run as a user of their own with the limits, the teacher's folders closed to other users
(``o-rwx``) and what the user left in /tmp removed afterwards; the reports say so. Where the grader is not root,
or isolation is off (``--no-isolation``, ``VRS_EDU_GRADE_ISOLATION=off``), the kernels run as the grader's own user
and every report says so at the top, with the reason (:class:`Isolation`). Folders on the way to the course's
Python that are closed to other users (``/root`` when Python lives in root's home) are opened for traversal only
(``o+x``) while grading, and closed again at the end (:class:`Grants`).
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ENV_SWITCH = "VRS_EDU_GRADE_ISOLATION"   # "off": run the kernels as the grader's user (what --no-isolation does)
PROBE = "import ipykernel, torch, vrs_edu.course.seeds; print(vrs_edu.__file__)"
UID_BASE, UID_SPAN = 1_900_000_000, 1_000_000   # fresh uids, far above any account's (no /etc/passwd entry needed)
STUDENT_NAME = "vrs-edu-student"                # $USER and $LOGNAME of a kernel whose uid has no account
GiB, MiB = 1 << 30, 1 << 20


@dataclass(frozen=True)
class Limits:
    """What one submission may use (each limit hit gives a line in that student's report).

    ``memory_bytes``: address space of each of its processes (``RLIMIT_AS``; torch and the kernel take ≈ 0.9 GiB of
    it); ``disk_bytes``: its home folder, a tmpfs of that size (isolated); ``tmp_bytes``: each of its private /tmp,
    /var/tmp and /dev/shm; ``file_bytes``: one file; ``max_processes``: processes and threads of its user;
    ``output_bytes``: what one cell's outputs (and the updates of displayed outputs, in all) keep (the rest is cut, with a note); ``return_bytes`` and
    ``return_elements``: what a graded function's return value may weigh on disk and hold in one tensor before the
    grader reads it back."""

    memory_bytes: int = 4 * GiB
    disk_bytes: int = 1 * GiB
    tmp_bytes: int = 256 * MiB
    file_bytes: int = 512 * MiB
    max_processes: int = 256
    output_bytes: int = 1 * MiB
    return_bytes: int = 4 * MiB      # unpickling millions of small items costs ≈ 5 s per MiB
    return_elements: int = 16_000_000

    def describe(self) -> str:
        return (f"{self.memory_bytes / GiB:g} GiB of memory per process, {self.disk_bytes / GiB:g} GiB of disk, "
                f"{self.max_processes} processes, {self.output_bytes / MiB:g} MiB of output per cell")


@dataclass
class Isolation:
    """How the kernels of one grading run are isolated; ``isolated`` False says why not (``why_not``).
    ``namespaces`` False (isolated by a user of its own only) says why in ``why_no_namespaces``."""

    isolated: bool
    namespaces: bool = False
    why_not: str = ""
    why_no_namespaces: str = ""
    limits: Limits = field(default_factory=Limits)
    closed: list[str] = field(default_factory=list)   # the teacher's folders closed to other users
    opened: list[str] = field(default_factory=list)   # folders opened for traversal while grading
    hidden: list[str] = field(default_factory=list)   # folders absent from a kernel's view (namespaces)
    readonly: list[str] = field(default_factory=list)  # the course's folders, read-only in a kernel's view
    keep: list[str] = field(default_factory=list)      # folders a kernel must reach (its Python, the course)

    def describe(self) -> str:
        """One line for the top of the reports and of the command's output."""
        if self.isolated and self.namespaces:
            return ("isolated: each notebook ran in a sandbox of its own (its own user, processes, network, /tmp; "
                    "the course read-only, the teacher's folders absent), removed afterwards; limits: "
                    + self.limits.describe())
        if self.isolated:
            return (f"isolated by user only ({self.why_no_namespaces}): each notebook ran as a user of its own, which "
                    "cannot write the course's files nor read the teacher's; no private /tmp or network (what it "
                    "leaves there is removed); limits: " + self.limits.describe())
        return (f"NOT ISOLATED ({self.why_not}): the notebooks ran as the grader's own user, so a notebook could read "
                "the teacher's sources and hidden tests and write the course's files (a changed file is flagged and "
                "restored after each notebook); grade untrusted notebooks as root (see the teacher's guide)")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["limits"] = asdict(self.limits)
        return {"isolated": self.isolated, "summary": self.describe(), **d}


def not_isolated(why: str, limits: Limits | None = None) -> Isolation:
    return Isolation(False, why_not=why, limits=limits or Limits())


def private_dir(path: Path | None = None) -> Path:
    """The grader's root-only folder for its ledgers (default: ``<tmp>/vrs-edu-grader-<euid>``), created if missing.
    Raises PermissionError when it exists but is not a private folder of this user (others could choose what it
    records)."""
    path = path or Path(tempfile.gettempdir()) / f"vrs-edu-grader-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise PermissionError(f"{path} is not a private folder of this user: refusing to use it")
    return path


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
        self.dir = ledger_dir or private_dir()
        self.pid = os.getpid()
        self.mine: list[str] = []

    @contextlib.contextmanager
    def _ledger(self):
        private_dir(self.dir)
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
    (``home``) for IPython, matplotlib and caches — nothing else of the grader's environment (no tokens, no
    credentials)."""
    keep = ("PATH", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ",
            "LD_LIBRARY_PATH", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    home = str(home)
    env.update({"HOME": home, "USERPROFILE": home, "IPYTHONDIR": os.path.join(home, ".ipython"),
                "MPLCONFIGDIR": os.path.join(home, ".matplotlib"), "XDG_CACHE_HOME": os.path.join(home, ".cache"),
                "XDG_CONFIG_HOME": os.path.join(home, ".config"), "JUPYTER_RUNTIME_DIR": home,
                "JUPYTER_DATA_DIR": os.path.join(home, ".jupyter-data"), "PYTHONNOUSERSITE": "1", "TMPDIR": home,
                "USER": STUDENT_NAME, "LOGNAME": STUDENT_NAME})
    env.update(extra or {})
    return env


def _copy_font_cache(home: Path) -> None:
    """matplotlib's font cache into a kernel's home (building it costs seconds per kernel)."""
    with contextlib.suppress(Exception):
        import matplotlib

        cache = Path(matplotlib.get_cachedir())
        (home / ".matplotlib").mkdir(exist_ok=True)
        for f in cache.glob("fontlist-*.json"):
            shutil.copy(f, home / ".matplotlib" / f.name)


def _mounted(path: Path) -> bool:
    target = os.path.realpath(path)
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == target for line in f)
    return False


class Workspace:
    """One submission's folders and user, created before its first kernel and removed after its last.

    ``base`` (the grader's: mode 0711, so the kernel can pass through but not list it or change an entry):

    * ``conn/`` — the kernels' connection files, written by the grader, handed to the kernel's user (0400);
    * ``in/`` — the arguments of each call of a graded function, written by the grader; the kernel only reads;
    * ``sock<n>/`` — a kernel's IPC sockets: the kernel's while it starts, the grader's once it is connected (the
      kernel cannot then replace a socket by a link to someone else's);
    * ``home/`` — the kernel's: its working folder, $HOME and $TMPDIR, where it writes what a call returned. When
      isolated, a tmpfs of ``limits.disk_bytes`` owned by the kernel's user: the disk limit, and nothing left after.

    The grader reads what the kernel wrote only through :func:`read_kernel_file` (no links followed, regular files
    of a bounded size), so root never opens a path the student controls. ``uid``/``gid``: a fresh user id for this
    submission alone (isolated), reserved in a root-only ledger so that two graders at once never share one.
    """

    def __init__(self, iso: Isolation):
        self.iso = iso
        self.base = Path(tempfile.mkdtemp(prefix=f"vrs-edu-grade-{os.getpid()}-"))
        self.uid = self.gid = None
        self._lock: Path | None = None
        self.conn, self.inbox, self.home = self.base / "conn", self.base / "in", self.base / "home"
        for d in (self.conn, self.inbox, self.home):
            d.mkdir()
        if iso.isolated:
            self.uid = self.gid = self._reserve_uid()
            os.chmod(self.base, 0o711)
            os.chmod(self.conn, 0o711)
            os.chmod(self.inbox, 0o755)
            if iso.namespaces:
                run = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={iso.limits.disk_bytes},nr_inodes=100000,mode=0700,"
                                      f"uid={self.uid},gid={self.gid},nosuid,nodev", "tmpfs", str(self.home)],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    raise OSError(f"could not mount the submission's home: {run.stderr.strip()[:200]}")
        _copy_font_cache(self.home)
        if iso.isolated:
            for p in [self.home, *self.home.rglob("*")]:
                os.chown(p, self.uid, self.gid, follow_symlinks=False)
        self.sockets = 0

    def _reserve_uid(self) -> int:
        import pwd
        import random

        ledger = private_dir() / "uids"
        ledger.mkdir(mode=0o700, exist_ok=True)
        rng = random.SystemRandom()
        for _ in range(1000):
            uid = UID_BASE + rng.randrange(UID_SPAN)
            with contextlib.suppress(KeyError):
                pwd.getpwuid(uid)
                continue
            try:
                fd = os.open(ledger / str(uid), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                continue
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            self._lock = ledger / str(uid)
            return uid
        raise OSError("no free user id for the submission's sandbox")

    def socket_dir(self) -> Path:
        """A fresh folder for one kernel's IPC sockets, the kernel's until :meth:`seal`."""
        self.sockets += 1
        d = self.base / f"sock{self.sockets}"
        d.mkdir(mode=0o700)
        if self.iso.isolated:
            os.chown(d, self.uid, self.gid)
        return d

    def seal(self, d: Path) -> None:
        """The kernel is connected: its socket folder becomes the grader's (the kernel keeps its open sockets)."""
        if self.iso.isolated:
            os.chown(d, os.geteuid(), os.getegid())
            os.chmod(d, 0o711)

    def write_secret(self) -> tuple[str, bytes]:
        """A fresh key for a kernel's signed reports: a file of random name in its home (created here, never
        opened through a link), which the kernel reads and deletes before any of the learner's code runs."""
        key = os.urandom(32)
        path = self.home / f".grader-key-{os.urandom(8).hex()}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
        try:
            os.write(fd, key)
            if self.iso.isolated:
                os.fchown(fd, self.uid, self.gid)
        finally:
            os.close(fd)
        return str(path), key

    def jail_config(self) -> dict:
        """What :mod:`.jail` needs to start one kernel of this submission."""
        lim = self.iso.limits
        return {"uid": self.uid, "gid": self.gid, "home": str(self.home), "namespaces": self.iso.namespaces,
                "keep": [str(self.base), *self.iso.keep], "readonly": self.iso.readonly, "hidden": self.iso.hidden,
                "tmp_bytes": lim.tmp_bytes, "memory_bytes": lim.memory_bytes, "file_bytes": lim.file_bytes,
                "max_processes": lim.max_processes}

    def disk_full(self) -> bool:
        """Whether the home's tmpfs is (nearly) full: the notebook met its disk limit."""
        if not (self.iso.isolated and self.iso.namespaces):
            return False
        st = os.statvfs(self.home)
        return st.f_bavail * st.f_frsize < 0.02 * st.f_blocks * st.f_frsize

    def close(self) -> list[str]:
        """End everything the submission left: its processes (all of its user's), its home and folders, and (without
        namespaces) what its user left in /tmp, /var/tmp and /dev/shm. Returns notes for the report."""
        notes = []
        links = sum(1 for d, dirs, files in os.walk(self.home) for n in dirs + files if os.path.islink(os.path.join(d, n)))
        if links:
            notes.append(f"note: the notebook left {links} symbolic link(s) in its folder; the grader follows none")
        if self.iso.isolated:
            killed = kill_user(self.uid)
            if killed:
                notes.append(f"note: {killed} process(es) the notebook left running were killed")
            if not self.iso.namespaces:
                removed = remove_files_of(self.uid)
                if removed:
                    notes.append(f"note: {removed} file(s) the notebook left in /tmp, /var/tmp or /dev/shm were removed")
            if _mounted(self.home):
                subprocess.run(["umount", "-l", str(self.home)], capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)   # never follows a link
        if self._lock is not None:
            self._lock.unlink(missing_ok=True)
        return notes


def read_kernel_file(path: Path, limit: int) -> bytes:
    """The bytes of a file the kernel wrote, read without following a link, only if it is a regular file of at most
    ``limit`` bytes. Raises FileNotFoundError (absent), or ValueError (a link, not a regular file, too large)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ELOOP:   # the name is a symbolic link
            raise ValueError(f"{path.name} is a link, not a file the kernel wrote") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path.name} is not a regular file")
        if st.st_size > limit:
            raise ValueError(f"{path.name} holds {st.st_size:,} bytes, over the grader's limit of {limit:,}")
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise ValueError(f"{path.name} grew over the grader's limit of {limit:,} bytes")
        return data
    finally:
        os.close(fd)


def jail_command(config: dict, kernel_cmd: list[str]) -> list[str]:
    """The command that starts ``kernel_cmd`` through :mod:`.jail` (isolated, standard library only: ``-I -S``)."""
    from vrs_edu.course.assignments import jail

    return [sys.executable, "-I", "-S", jail.__file__, json.dumps(config), "--", *kernel_cmd]


def _probe(iso: Isolation) -> str:
    """'' when a kernel's sandbox can start this Python and import the course; else what went wrong."""
    ws = Workspace(iso)
    try:
        run = subprocess.run(jail_command(ws.jail_config(), [sys.executable, "-c", PROBE]), capture_output=True,
                             text=True, cwd=ws.home, env=kernel_env(ws.home), timeout=180)
    except (OSError, subprocess.SubprocessError) as e:
        return f"{type(e).__name__}: {e}"
    finally:
        ws.close()
    if run.returncode == 0:
        import vrs_edu

        theirs = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "?"
        if os.path.realpath(theirs) != os.path.realpath(vrs_edu.__file__):   # a folder on the path it cannot list
            return (f"it imports the course from {os.path.dirname(theirs)}, not from "
                    f"{os.path.dirname(vrs_edu.__file__)} (a folder on the import path is closed to other users)")
        return ""
    lines = [ln for ln in run.stderr.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else f"exit status {run.returncode}"


def _namespaces_work() -> str:
    """'' when this machine lets root make the namespaces and mounts a sandbox needs; else why not."""
    if not (shutil.which("mount") and shutil.which("umount")):
        return "no mount command"
    try:
        run = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--ipc", "--net", "--uts", "--mount-proc",
                              "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return f"unshare failed: {e}"
    return "" if run.returncode == 0 else f"unshare failed: {run.stderr.strip()[:200]}"


@contextlib.contextmanager
def isolate(secrets: list[Path] = (), *, enabled: bool = True, readonly: list[Path] = (),
            limits: Limits | None = None):
    """Prepare the isolation of one grading run (see the module docstring); yields an :class:`Isolation`.

    ``secrets``: the teacher's folders, absent from a kernel's view (and closed to other users); ``readonly``: the
    course's folders, read-only in a kernel's view. ``enabled`` False (``--no-isolation``), or
    ``VRS_EDU_GRADE_ISOLATION=off`` in the environment, runs the kernels as this process's user.
    """
    limits = limits or Limits()
    if not enabled or os.environ.get(ENV_SWITCH, "").lower() in ("off", "0", "no", "false"):
        yield not_isolated("turned off with --no-isolation or VRS_EDU_GRADE_ISOLATION=off", limits)
        return
    if os.name != "posix" or not hasattr(os, "geteuid"):
        yield not_isolated("this system has no POSIX users to run the kernels as", limits)
        return
    if os.geteuid() != 0:
        import pwd

        yield not_isolated(f"the grader runs as {pwd.getpwuid(os.geteuid()).pw_name} (uid {os.geteuid()}), not as "
                           "root, so it cannot start the kernels as another user", limits)
        return
    sweep_stale()
    why = "" if os.environ.get("VRS_EDU_GRADE_NAMESPACES", "").lower() != "off" else "turned off with " \
        "VRS_EDU_GRADE_NAMESPACES=off"
    why = why or _namespaces_work()
    iso = Isolation(True, namespaces=not why, why_no_namespaces=why, limits=limits,
                    hidden=[str(Path(p).resolve()) for p in secrets],
                    readonly=[str(Path(p).resolve()) for p in readonly])
    grants = Grants()
    try:
        needs = needed_paths()
        folders = [a for p in needs for a in _ancestors(p)]
        iso.opened = grants.open(list(dict.fromkeys(folders)))
        iso.closed = close_to_others(list(secrets), keep=needs)
        iso.keep = sorted({str(Path(p).resolve()) for p in needs if Path(p).is_dir()})
        why = _probe(iso)
        if why:
            grants.close()
            yield not_isolated(f"a sandboxed kernel cannot start the course's Python: {why}", limits)
            return
        yield iso
    finally:
        grants.close()


def _pids_of(uid: int) -> list[int]:
    """The live processes of ``uid`` (zombies, already dead, are left to whoever reaps them)."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if entry.stat().st_uid == uid and Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    pids.append(int(entry.name))
    return pids


def kill_user(uid: int | None, grace_s: float = 2.0) -> int:
    """Kill every process of ``uid`` (a submission's own user: whatever it started, in any session) that is still
    alive ``grace_s`` after its kernel was stopped (a kernel takes a moment to exit). Returns how many were killed."""
    if uid is None or not os.path.isdir("/proc"):
        return 0
    deadline = time.monotonic() + grace_s
    while _pids_of(uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    killed: set[int] = set()
    for _ in range(5):   # a process may fork while the first ones die
        pids = _pids_of(uid)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
                killed.add(pid)
        time.sleep(0.05)
    return len(killed)


def remove_files_of(uid: int) -> int:
    """Remove what ``uid`` left directly in /tmp, /var/tmp and /dev/shm (its files and folders; links are removed,
    never followed). Returns how many entries were removed."""
    removed = 0
    for tmp in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        with contextlib.suppress(OSError):
            for entry in os.scandir(tmp):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid != uid:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        os.unlink(entry.path)
                    removed += 1
    return removed


def sweep_stale() -> list[str]:
    """Unmount and remove the sandboxes of graders that died before cleaning up (their pid is in the folder's
    name), and free their reserved user ids. Returns the folders removed."""
    removed = []
    prefix = os.path.join(os.path.realpath(tempfile.gettempdir()), "vrs-edu-grade-")
    with contextlib.suppress(OSError):
        for entry in os.scandir(os.path.dirname(prefix)):
            if not entry.path.startswith(prefix) or not entry.is_dir(follow_symlinks=False):
                continue
            pid = entry.name.split("-")[3]
            if pid.isdigit() and not _alive(int(pid)):
                home = os.path.join(entry.path, "home")
                if _mounted(Path(home)):
                    subprocess.run(["umount", "-l", home], capture_output=True)
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
    with contextlib.suppress(OSError):
        for lock in (private_dir() / "uids").iterdir():
            with contextlib.suppress(OSError, ValueError):
                if not _alive(int(lock.read_text() or 0)):
                    lock.unlink()
    return removed
