"""The course's files as the grader found them: hashed before the first submission and after every one.

A notebook whose code could write the course's package or the teacher's folders (when the kernels are not
isolated, see :mod:`.sandbox`) might append ``def check_...(): return True`` to a checker, or rewrite a reference,
and so change the grade of every later submission. The grader keeps the bytes of every file under the course's
roots in memory (about 2 MB), compares after each submission, flags the submission that changed something and puts
the files back, so the next submission is graded against the untouched course. ``__pycache__`` files are compared
too: a changed or new one is deleted (Python rebuilds it from the source) rather than counted against the notebook,
because importing a module legitimately writes one.

When the kernels are isolated they cannot write these files: a change then came from somewhere else (someone
editing the course while it grades) and is reported, not undone.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path


def _is_cache(path: Path) -> bool:
    return "__pycache__" in path.parts or path.suffix == ".pyc"


class CourseFiles:
    """The files under ``roots`` (folders), as bytes, and what changed since."""

    def __init__(self, roots: list[Path]):
        self.roots = [Path(r).resolve() for r in dict.fromkeys(map(str, roots)) if Path(r).is_dir()]
        self.files = self._read()

    def _read(self) -> dict[Path, bytes]:
        out: dict[Path, bytes] = {}
        for root in self.roots:
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]   # .git, .ipynb_checkpoints...
                for name in filenames:
                    p = Path(dirpath, name)
                    try:
                        out[p] = p.read_bytes()
                    except OSError:
                        continue
        return out

    def digest(self) -> str:
        """A sha256 over every file's path and bytes (what the reports quote)."""
        h = hashlib.sha256()
        for p in sorted(self.files):
            h.update(str(p).encode() + b"\0" + hashlib.sha256(self.files[p]).digest())
        return h.hexdigest()[:16]

    def changes(self) -> dict[str, list[Path]]:
        """{"changed", "added", "removed": paths} since the snapshot, source files only (caches: see
        :meth:`restore`)."""
        now = self._read()
        out = {"changed": [p for p, b in now.items() if p in self.files and self.files[p] != b],
               "added": [p for p in now if p not in self.files],
               "removed": [p for p in self.files if p not in now]}
        return {k: sorted(p for p in v if not _is_cache(p)) for k, v in out.items()}

    def restore(self) -> list[Path]:
        """Put every file back as it was (and delete changed or new caches); returns the source files restored."""
        now = self._read()
        restored = []
        for p, b in now.items():
            if p not in self.files:
                p.unlink(missing_ok=True)
                restored += [] if _is_cache(p) else [p]
            elif self.files[p] != b:
                if _is_cache(p):
                    p.unlink(missing_ok=True)
                else:
                    p.write_bytes(self.files[p])
                    restored.append(p)
        for p, b in self.files.items():
            if p not in now and not _is_cache(p):
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(b)
                restored.append(p)
        return sorted(restored)

    def accept(self) -> None:
        """Take the files as they are now as the course (after a change that was not the notebook's)."""
        self.files = self._read()

    def relative(self, path: Path) -> str:
        for root in self.roots:
            if path.is_relative_to(root):
                return f"{root.name}/{path.relative_to(root)}"
        return str(path)
