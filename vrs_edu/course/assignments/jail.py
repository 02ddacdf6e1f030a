"""Start one student kernel in a disposable sandbox: Linux namespaces, a user of its own, limits.

    python -m vrs_edu.course.assignments.jail '<config as JSON>' -- python -m ipykernel_launcher -f conn.json

The grader's kernel manager (:class:`.kernel.SandboxKernelManager`) runs this as root in place of the kernel
command. It is what otter-grader gets from a fresh container per submission, built from the kernel's own system
calls (``unshare(2)``, ``mount(2)``, ``setrlimit(2)``; ``man 7 namespaces``):

* **its own PID, IPC, mount, network and UTS namespaces.** The kernel is process 1 of its PID namespace: when it
  exits, the kernel ends every process it started, whatever session or group they moved to; it sees no other
  process on the machine (``/proc`` is the namespace's own), has no network (only a loopback that is down) and no
  System V or POSIX message queues of anyone else;
* **a private /tmp, /var/tmp, /dev/shm and /run/lock**: fresh ``tmpfs`` mounts of ``tmp_bytes`` each, gone with
  the namespace.
  Folders under them that the kernel needs (a course or a Python that lives in /tmp) are bound back, read-only;
* **the course read-only** (``readonly``: bind mounts remounted read-only) and **the teacher's folders absent**
  (``hidden``: an empty tmpfs that nobody may enter is mounted over each);
* **limits** (``setrlimit``, inherited by every child): address space (``memory_bytes``), processes and threads of
  its user (``max_processes``), the size of one file (``file_bytes``), open files; no core dumps;
* **a user of its own** (``uid``/``gid``, chosen fresh for each submission by :mod:`.sandbox`), no supplementary
  groups, umask 077, and the parent-death signal: if the kernel manager's process dies, the kernel is killed.

With ``namespaces`` false (a machine that forbids them: :mod:`.sandbox` reports it), only the user and the limits
apply. The outer process (this one, after ``fork``) stays in the grader's PID namespace for the kernel manager: it ignores
the interrupt (the kernel, in the same process group, gets it directly), turns SIGTERM into SIGKILL for the
kernel, and exits with the kernel's status. Any step that fails ends the process with one line on stderr.
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
PR_SET_PDEATHSIG = 1
TMP_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/run/shm")   # the world-writable folders
NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(libc, source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    _call(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data or None)),
          f"mount {target}")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def build_filesystem(libc, config: dict) -> None:
    """The kernel's view of the files (in its own mount namespace, as root): see the module docstring."""
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)   # nothing mounted here propagates back to the machine
    _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    keep = sorted(set(config["keep"]))          # folders the kernel must still reach (course, Python, its home)
    for tmp in TMP_FOLDERS:
        if not os.path.isdir(tmp) or os.path.islink(tmp):
            continue
        inside = [k for k in keep if _under(k, tmp) and os.path.isdir(k)]
        held = [(k, os.open(k, os.O_PATH | os.O_DIRECTORY)) for k in inside]   # reachable after the tmpfs hides them
        _mount(libc, "tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV, f"size={config['tmp_bytes']},mode=1777")
        for k, fd in held:
            if any(_under(k, other) and k != other for other, _ in held):
                continue                           # a folder inside another kept one comes with it
            os.makedirs(k, exist_ok=True)
            _mount(libc, f"/proc/self/fd/{fd}", k, None, MS_BIND | MS_REC)
            os.close(fd)
    for folder in config["readonly"]:
        if os.path.isdir(folder):
            _mount(libc, folder, folder, None, MS_BIND | MS_REC)
            _mount(libc, None, folder, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for folder in config["hidden"]:
        if os.path.isdir(folder) and not any(_under(k, folder) for k in keep):
            _mount(libc, "tmpfs", folder, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000")


def set_limits(config: dict) -> None:
    """Resource limits of the kernel and everything it starts (``setrlimit``; soft = hard, so they cannot be raised)."""
    for limit, value in ((resource.RLIMIT_AS, config["memory_bytes"]), (resource.RLIMIT_NPROC, config["max_processes"]),
                         (resource.RLIMIT_FSIZE, config["file_bytes"]), (resource.RLIMIT_NOFILE, 1024),
                         (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))


def become_student(libc, config: dict) -> None:
    os.setgroups([])
    os.setgid(config["gid"])
    os.setuid(config["uid"])
    os.umask(0o077)
    # after setuid: a change of credentials clears the parent-death signal (prctl(2))
    _call(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl PR_SET_PDEATHSIG")


def _outside(child: int) -> int:
    """The kernel manager's process: wait for the kernel, pass a SIGTERM on as SIGKILL, return its exit status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(child, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            return os.waitstatus_to_exitcode(status) & 0xFF
        except InterruptedError:
            continue


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: python -m vrs_edu.course.assignments.jail CONFIG_JSON -- KERNEL_COMMAND...", file=sys.stderr)
        return 2
    config, command = json.loads(argv[1]), argv[3:]
    libc = _libc()
    if config["namespaces"]:
        try:
            _call(libc.unshare(NAMESPACES), "unshare")
        except OSError as e:
            print(f"vrs-edu jail: {e}", file=sys.stderr)
            return 1
        child = os.fork()
        if child:
            return _outside(child)
    try:   # process 1 of the new PID namespace (or, without namespaces, the kernel's own process), still root
        if config["namespaces"]:
            build_filesystem(libc, config)
        set_limits(config)
        become_student(libc, config)
        os.chdir(config["home"])
        env = dict(os.environ)
        env.pop("JPY_PARENT_PID", None)   # the kernel's parent is outside its namespace: ipykernel must not poll it
        signal.signal(signal.SIGINT, signal.SIG_DFL)   # Python installs its KeyboardInterrupt only over SIG_DFL
        os.execvpe(command[0], command, env)
    except BaseException as e:  # noqa: BLE001 — any failure: one line, and no kernel
        print(f"vrs-edu jail: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        os._exit(1)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
