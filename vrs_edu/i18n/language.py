"""Which edition a notebook belongs to: English (``en``) or Korean (``ko``), and the checks on a ``lang`` argument.

The Korean notebooks are generated from the English sources and share their code cells character for character,
so a code cell cannot name its language. It is read from the environment instead: ``VRS_EDU_LANG`` when set (the
tests and ``make`` set it), otherwise a marker file in the folder the kernel runs in. Jupyter, nbval and nbclient
start a notebook's kernel in the notebook's own folder, and ``notebooks/ko/`` holds the marker (so do the Korean
assignment copies' folders, ``data/assignments/ko/{student,solution}/``). Last, a notebook handed out alone (a
Korean assignment copy downloaded without its folder) names its edition in its metadata, ``vrs_edu.language``:
JupyterLab (Jupyter Server 2) tells the kernel which notebook started it in ``JPY_SESSION_NAME``.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("en", "ko")
ENV_VAR = "VRS_EDU_LANG"
MARKER = ".vrs-edu-language"
SESSION_VAR = "JPY_SESSION_NAME"   # set by Jupyter Server in a kernel's environment: the notebook's path
# A larger file is not read for its metadata (a notebook of the course is under 1 MB; a handed-out copy, tens of kB).
MAX_NOTEBOOK_BYTES = 20_000_000


def check_language(lang: str) -> str:
    """``lang`` if it is one of :data:`LANGUAGES`; otherwise ValueError naming the argument and the choices."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang: expected one of {', '.join(LANGUAGES)}, got {lang!r}")
    return lang


def current_language(cwd: Path | None = None) -> str:
    """The edition of the running notebook: ``$VRS_EDU_LANG``, else the marker in ``cwd`` (default: the working
    directory), else the ``vrs_edu.language`` metadata of the notebook ``$JPY_SESSION_NAME`` names (see
    :func:`notebook_language`), else ``"en"``. Raises ValueError for a value that is not a language of the course."""
    value = os.environ.get(ENV_VAR)
    if value:
        return check_language(value.strip())
    cwd = Path(cwd or Path.cwd())
    marker = cwd / MARKER
    if marker.is_file():
        return check_language(marker.read_text(encoding="utf-8").strip())
    session = os.environ.get(SESSION_VAR)
    found = notebook_language(session, cwd) if session else None
    return check_language(found) if found else "en"


def notebook_language(path: str | Path, cwd: Path | None = None) -> str | None:
    """The ``vrs_edu.language`` metadata of the notebook at ``path`` (a relative path, as some Jupyter Servers give
    it relative to their root, is looked for by its file name in ``cwd``, the kernel's folder, which is the
    notebook's). None when the file is missing or unreadable, larger than :data:`MAX_NOTEBOOK_BYTES`, not a
    notebook, or says nothing."""
    path = Path(path)
    if not path.is_absolute():
        path = Path(cwd or Path.cwd()) / path.name
    try:
        stat = path.stat()
    except OSError:   # not there: the edition is not known
        return None
    if stat.st_size > MAX_NOTEBOOK_BYTES:
        return None
    return _metadata_language(str(path), stat.st_mtime_ns, stat.st_size)


# Every label of a figure asks for the edition, and in JupyterLab an English chapter (no marker in its folder) sends
# each ask here: the file is parsed once per saved version (its modification time and size are in the key), not
# once per label (measured: 3.9 ms to parse chapter 08's 0.86 MB, 0.04 ms a cached ask; a figure asks dozens of
# times). The cache is this module's one piece of state, kept for that cost. A known limit: a save that keeps both
# the size and the mtime (within the file system's timestamp resolution) is read as the version before it.
@lru_cache(maxsize=16)
def _metadata_language(path: str, mtime_ns: int, size: int) -> str | None:
    """The ``vrs_edu.language`` of the notebook at ``path`` as saved at ``mtime_ns`` with ``size`` bytes."""
    try:
        meta = json.loads(Path(path).read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError):   # unreadable, not JSON, not a notebook: the edition is not known
        return None
    found = meta.get("vrs_edu", {}).get("language") if isinstance(meta, dict) and isinstance(
        meta.get("vrs_edu"), dict) else None
    return found if isinstance(found, str) else None


def resolve_language(lang: str | None) -> str:
    """What a sentence builder's ``lang=None`` means: the running notebook's edition; an explicit value is checked."""
    return current_language() if lang is None else check_language(lang)


def in_language(en: str, ko: str, lang: str | None = None) -> str:
    """A short text (a figure label, a widget label, a table header) in the edition's language: ``en`` or ``ko``.

    Longer computed prose has a template per language instead, because Korean word order and particles differ."""
    return ko if resolve_language(lang) == "ko" else en
