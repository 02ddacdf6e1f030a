"""The recipes' declared texts in Korean: the claim of each declared test and the premise of each precondition that
the Korean evidence appendices print (:func:`vrs_edu.lab.analysis.format_measured`,
:func:`~vrs_edu.lab.analysis.precondition_lines`), kept beside the English they translate.

Where they live, and why: one gettext PO catalog per recipe module in ``vrs_edu/i18n/declared/`` (e.g.
``ch03_value_residual.recipe.po``), one entry per shown text: ``msgctxt = "<name> <field> <sha256[:12] of the
English>"`` (``field``: ``claim`` or ``premise``), ``msgid`` the English text the translation was made from,
``msgstr`` the Korean. The same format and key as the notebooks' catalogs (:mod:`vrs_edu.course.translation`), so
one tool reads both; here, beside the printing code's own layer, because the printing functions in ``lab`` look the
texts up and ``lab`` may not import ``chapters`` or ``course`` (tests/test_layering.py), while the declarations stay
in the recipes untouched (they were committed before the runs and are stored in ``data/results``).

No silent fall-behind: a text is found by its English, so a declaration whose English changed after its
translation prints in English, and tests/test_korean_stats.py fails, naming the test and showing the new English
beside the old (:func:`stale`), as it fails for a shown declaration with no Korean at all (:func:`missing`).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import polib

CATALOGS = Path(__file__).resolve().parent / "declared"
FIELDS = ("claim", "premise")
HASH_DIGITS = 12


def digest(english: str) -> str:
    """The first 12 hex digits of the sha256 of ``english`` (UTF-8): the hash an entry's msgctxt carries."""
    return hashlib.sha256(english.encode("utf-8")).hexdigest()[:HASH_DIGITS]


def key(name: str, field: str, english: str) -> str:
    """The msgctxt of one declared text: ``"resformer_loss claim 3f1c…"``. ValueError for a field not in
    :data:`FIELDS`."""
    if field not in FIELDS:
        raise ValueError(f"field: expected one of {', '.join(FIELDS)}, got {field!r}")
    return f"{name} {field} {digest(english)}"


def catalog(module: str, folder: Path = CATALOGS) -> polib.POFile:
    """The catalog of one recipe module (``"ch03_value_residual.recipe"``). FileNotFoundError when it has none."""
    path = Path(folder) / f"{module}.po"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: the declared texts of {module} have no Korean catalog")
    return polib.pofile(str(path), wrapwidth=0)


def translations(lang: str, folder: Path = CATALOGS) -> dict[str, str]:
    """``{English text: Korean text}`` of every translated entry of every catalog in ``folder`` when ``lang`` is
    ``"ko"``; ``{}`` for English (the declared texts are written in English)."""
    if lang != "ko":
        return {}
    out = {}
    for path in sorted(Path(folder).glob("*.po")):
        for entry in polib.pofile(str(path), wrapwidth=0):
            if entry.msgstr and not entry.obsolete and "fuzzy" not in entry.flags:
                out[entry.msgid] = entry.msgstr
    return out


def _entries(module: str, folder: Path) -> dict[tuple[str, str], polib.POEntry]:
    try:
        po = catalog(module, folder)
    except FileNotFoundError:
        return {}
    return {tuple(e.msgctxt.split(" ")[:2]): e for e in po if e.msgctxt and not e.obsolete}


def stale(module: str, texts: dict[tuple[str, str], str], folder: Path = CATALOGS) -> list[str]:
    """The entries of ``module``'s catalog whose English changed after their translation: for each ``(name,
    field) -> current English`` in ``texts`` that has an entry made from other English, a message naming the test
    and showing the new English beside the one translated."""
    out, entries = [], _entries(module, folder)
    for (name, field), english in texts.items():
        entry = entries.get((name, field))
        if entry is not None and (entry.msgid != english or entry.msgctxt != key(name, field, english)):
            out.append(f"{module}: {name} {field} changed after its translation:\n  translated: {entry.msgid}\n"
                       f"  now:        {english}\n  (re-translate it and set msgctxt to {key(name, field, english)!r})")
    return out


def missing(module: str, texts: dict[tuple[str, str], str], folder: Path = CATALOGS) -> list[str]:
    """The shown declared texts of ``module`` (``(name, field) -> English``) with no Korean in its catalog (no
    entry, an empty msgstr, or a fuzzy one, which :func:`translations` does not print), one message each, naming the
    test and its English."""
    entries = _entries(module, folder)
    return [f"{module}: {name} {field} has no Korean: {english}" for (name, field), english in texts.items()
            if (name, field) not in entries or not entries[(name, field)].msgstr
            or "fuzzy" in entries[(name, field)].flags]
