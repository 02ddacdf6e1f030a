"""Who handed in which file, as a learning platform or a browser names it.

* A browser that finds the file already there saves ``02_causal_attention (1).ipynb``; Canvas appends ``-1`` to a
  resubmission: :func:`copy_stem` takes such a suffix off before the name is compared with the assignments'.
* A platform's "download all submissions" puts the student into the file name: ``--names canvas`` or
  ``--names moodle`` (the patterns of :data:`PLATFORMS`), or a regular expression of your own with a group
  ``student`` and, optionally, ``file`` (the name the student gave the file) and ``late`` (matched when the platform
  marked the file late), as nbgrader's ``zip_collect`` does.
* ``--deadline`` flags a file modified after it (the file's time as the collection kept it: for a platform's
  download, prefer its ``late`` mark).
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

_COPY = re.compile(r"( \(\d+\)|-\d+)$")
PLATFORMS = {
    # Canvas, "Download Submissions": <login>[_LATE]_<user id>_<submission id>_<the student's file name>
    "canvas": r"(?P<student>[^_]+)(?P<late>_LATE)?_\d+_\d+_(?P<file>.+)",
    # Moodle, "Download all submissions" (files not in folders): <Full Name>_<id>_assignsubmission_file_<file name>
    "moodle": r"(?P<student>.+?)_\d+_assignsubmission_file_(?P<file>.+)",
}


def copy_stem(stem: str) -> str:
    """``02_causal_attention (1)`` and ``02_causal_attention-1`` -> ``02_causal_attention``."""
    return _COPY.sub("", stem)


def name_pattern(names: str) -> re.Pattern:
    """The pattern of ``--names``: a platform of :data:`PLATFORMS` or a regular expression with a ``student`` group.
    Raises ValueError saying what was expected."""
    text = PLATFORMS.get(names, names)
    try:
        pattern = re.compile(text)
    except re.error as e:
        raise ValueError(f"argument --names: expected {' or '.join(PLATFORMS)} or a regular expression, got "
                         f"{names!r} ({e})") from None
    if "student" not in pattern.groupindex:
        raise ValueError(f"argument --names: the pattern needs a group (?P<student>...), got {names!r}")
    return pattern


def platform_name(path: Path, pattern: re.Pattern) -> tuple[str, str, bool] | None:
    """(student, the student's own file stem, marked late) when the file's stem matches ``pattern``, else None."""
    found = pattern.fullmatch(Path(path).stem)
    if found is None:
        return None
    groups = found.groupdict()
    return groups["student"], copy_stem(groups.get("file") or ""), bool(groups.get("late"))


def late_note(path: Path, deadline: dt.datetime | None, marked: bool = False) -> str:
    """'' for a file in time, else the note that says why it is late."""
    if marked:
        return "late: the platform marked the submission late"
    if deadline is None:
        return ""
    modified = dt.datetime.fromtimestamp(Path(path).stat().st_mtime, tz=deadline.tzinfo)
    if modified <= deadline:
        return ""
    hours = (modified - deadline).total_seconds() / 3600
    return f"late: modified {modified:%Y-%m-%d %H:%M}, {hours:.1f} h after the deadline {deadline:%Y-%m-%d %H:%M}"
