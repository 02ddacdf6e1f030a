"""Which edition a notebook belongs to: English (``en``) or Korean (``ko``), and the checks on a ``lang`` argument.

The Korean notebooks are generated from the English sources and share their code cells character for character,
so a code cell cannot name its language. It is read from the environment instead: ``VRS_EDU_LANG`` when set (the
tests and ``make`` set it), otherwise a marker file in the folder the kernel runs in. Jupyter, nbval and nbclient
start a notebook's kernel in the notebook's own folder, and ``notebooks/ko/`` holds the marker.
"""
from __future__ import annotations

import os
from pathlib import Path

LANGUAGES = ("en", "ko")
ENV_VAR = "VRS_EDU_LANG"
MARKER = ".vrs-edu-language"


def check_language(lang: str) -> str:
    """``lang`` if it is one of :data:`LANGUAGES`; otherwise ValueError naming the argument and the choices."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang: expected one of {', '.join(LANGUAGES)}, got {lang!r}")
    return lang


def current_language(cwd: Path | None = None) -> str:
    """The edition of the running notebook: ``$VRS_EDU_LANG``, else the marker in ``cwd`` (default: the working
    directory), else ``"en"``. Raises ValueError for a value that is not a language of the course."""
    value = os.environ.get(ENV_VAR)
    if value:
        return check_language(value.strip())
    marker = Path(cwd or Path.cwd()) / MARKER
    if marker.is_file():
        return check_language(marker.read_text(encoding="utf-8").strip())
    return "en"


def resolve_language(lang: str | None) -> str:
    """What a sentence builder's ``lang=None`` means: the running notebook's edition; an explicit value is checked."""
    return current_language() if lang is None else check_language(lang)


def in_language(en: str, ko: str, lang: str | None = None) -> str:
    """A short text (a figure label, a widget label, a table header) in the edition's language: ``en`` or ``ko``.

    Longer computed prose has a template per language instead, because Korean word order and particles differ."""
    return ko if resolve_language(lang) == "ko" else en
