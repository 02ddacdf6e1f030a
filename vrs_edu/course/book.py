"""book.toml: the course's table of contents, read by the tests, the notebooks and the book builder.

    python -m vrs_edu.course.book chapters     # print the chapter table

The Korean book (한국어판) reads the same file: every chapter's ``title_ko``, ``question_ko`` and ``goals_ko``, every
appendix's ``title_ko`` and ``[preprocessor.course]``'s ``title_ko`` and ``description_ko``;
``chapters(lang="ko")`` returns the chapters with their Korean texts.

The HTML book is built by :mod:`vrs_edu.course.book_build` (``make book``), which imports this module, never the
other way round.
"""
from __future__ import annotations

import json
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOK_TOML = ROOT / "book.toml"
LANGUAGES = ("en", "ko")   # the book's editions: English (book.toml's own keys) and Korean (the *_ko keys)


@dataclass(frozen=True)
class Chapter:
    file: str
    title: str
    question: str
    goals: tuple[str, ...]
    budget_s: int              # run time: what the chapter's cells may take, at one thread on the 2-core CI machine
    study_min: int | None = None   # study time: reading, exercises and widgets, in minutes (README, chapter 00)

    @property
    def stem(self) -> str:
        return Path(self.file).stem

    @property
    def number(self) -> str:
        return self.file[:2]


@dataclass(frozen=True)
class Appendix:
    """A notebook of evidence behind one chapter (run ledgers, second-corpus tables, tuning histories): computed
    like a chapter, read from the chapter's "How sure are we?", without a chapter's anatomy."""
    file: str
    title: str
    chapter: str               # the two-digit number of the chapter it backs ("03")
    budget_s: int              # run time, as for a chapter

    @property
    def stem(self) -> str:
        return Path(self.file).stem


def load_book(path: str | Path = BOOK_TOML) -> dict:
    """Parse book.toml with tomllib. Raises ValueError naming the file when a required table is missing."""
    path = Path(path)
    with path.open("rb") as f:
        book = tomllib.load(f)
    for key in ("book", "build", "preprocessor"):
        if key not in book:
            raise ValueError(f"{path}: missing the [{key}] table")
    if "chapters" not in book["preprocessor"].get("course", {}):
        raise ValueError(f"{path}: missing [[preprocessor.course.chapters]]")
    return book


def _text_keys(keys: tuple[str, ...], lang: str) -> dict[str, str]:
    """The book.toml key that holds each text field in ``lang``: ``{"title": "title_ko", ...}`` for Korean, the
    field itself for English. Raises ValueError for a language the book has no edition in."""
    if lang not in LANGUAGES:
        raise ValueError(f"the book has no {lang!r} edition; its languages are {', '.join(LANGUAGES)}")
    return {k: k if lang == "en" else f"{k}_{lang}" for k in keys}


def book_meta(path: str | Path = BOOK_TOML, lang: str = "en") -> dict:
    """The book's ``title``, ``description``, ``authors`` and ``language`` in ``lang``: [book]'s own for English,
    ``[preprocessor.course]``'s ``title_ko`` and ``description_ko`` for Korean (mdBook's [book] table takes no keys
    of ours). Raises ValueError naming a missing Korean key."""
    book = load_book(path)
    meta = {"title": book["book"]["title"], "description": book["book"].get("description", ""),
            "authors": book["book"].get("authors", []), "language": lang}
    if lang == "en":
        return dict(meta, language=book["book"].get("language", "en"))
    course = book["preprocessor"]["course"]
    for field, key in _text_keys(("title", "description"), lang).items():
        if key not in course:
            raise ValueError(f"book.toml [preprocessor.course] lacks {key} (the {lang} book's {field})")
        meta[field] = course[key]
    return meta


def chapters(path: str | Path = BOOK_TOML, lang: str = "en") -> list[Chapter]:
    """The ordered chapters, with their title, question and goals in ``lang`` ("en", or "ko": the ``*_ko`` keys).
    Raises ValueError naming the chapter and field when one is incomplete."""
    keys = _text_keys(("title", "question", "goals"), lang)
    out = []
    for i, c in enumerate(load_book(path)["preprocessor"]["course"]["chapters"]):
        missing = [k for k in ("file", "title", "question", "goals", "budget_s", *keys.values()) if k not in c]
        if missing:
            raise ValueError(f"book.toml chapter #{i} ({c.get('file', '?')}) lacks {missing}")
        study = c.get("study_min")
        if study is not None and (not isinstance(study, int) or study <= 0):
            raise ValueError(f"book.toml chapter #{i} ({c['file']}): study_min must be a positive whole number of "
                             f"minutes, got {study!r}")
        out.append(Chapter(c["file"], c[keys["title"]], c[keys["question"]], tuple(c[keys["goals"]]),
                           int(c["budget_s"]), study))
    return out


def appendices(path: str | Path = BOOK_TOML, lang: str = "en") -> list[Appendix]:
    """The appendix notebooks, in book.toml's order (after the chapters in the book), titled in ``lang``. Raises
    ValueError naming the appendix and field when one is incomplete or backs a chapter book.toml does not list."""
    numbers = {c.number for c in chapters(path)}
    title = _text_keys(("title",), lang)["title"]
    out = []
    for i, a in enumerate(load_book(path)["preprocessor"]["course"].get("appendices", [])):
        missing = [k for k in ("file", "title", title, "chapter", "budget_s") if k not in a]
        if missing:
            raise ValueError(f"book.toml appendix #{i} ({a.get('file', '?')}) lacks {sorted(set(missing))}")
        if a["chapter"] not in numbers:
            raise ValueError(f"book.toml appendix #{i} ({a['file']}): chapter must be the number of a listed "
                             f"chapter ({', '.join(sorted(numbers))}), got {a['chapter']!r}")
        out.append(Appendix(a["file"], a[title], a["chapter"], int(a["budget_s"])))
    return out


def study_minutes(path: str | Path = BOOK_TOML) -> int:
    """The whole course's stated study time, in minutes: the sum of the chapters' ``study_min``."""
    return sum(c.study_min or 0 for c in chapters(path))


def chapter(number_or_stem: str) -> Chapter:
    """Look a chapter up by its two-digit number ("03") or its file stem ("03_value_residual")."""
    for c in chapters():
        if number_or_stem in (c.number, c.stem, c.file):
            return c
    raise KeyError(f"no chapter {number_or_stem!r} in book.toml")


def chapter_table_markdown() -> str:
    """The README's chapter table, generated from book.toml (a test keeps the README equal to it): study time
    (``study_min``) and run time (``budget_s``) in separate columns, so that neither reads as the other; a last row
    with the whole course's study time, then the appendices (evidence, not lessons: no study time of their own)."""
    rows = ["| # | chapter | question it answers | study | run |", "|---|---|---|---|---|"]
    for c in chapters():
        title = c.title.split("·", 1)[-1].strip()
        study = f"{c.study_min} min" if c.study_min else "—"
        rows.append(f"| {c.number} | [{title}](notebooks/{c.file}) | {c.question} | {study} | ≤ {c.budget_s} s |")
    total = study_minutes()
    rows.append(f"| | **the whole course** | | **{total} min ({total / 60:.1f} h)** | |")
    for a in appendices():
        rows.append(f"| {a.chapter}a | [{a.title}](notebooks/{a.file}) | the evidence behind chapter {a.chapter} "
                    f"| — | ≤ {a.budget_s} s |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cmd = argv[0] if argv else "chapters"
    if cmd == "chapters":
        print(chapter_table_markdown())
        return 0
    if cmd == "mdbook-preprocess":  # mdBook preprocessor protocol: echo the book unchanged
        if len(argv) > 1 and argv[1] == "supports":
            return 0
        ctx, book = json.load(sys.stdin)
        json.dump(book, sys.stdout)
        return 0
    print(f"unknown command {cmd!r}; use chapters | mdbook-preprocess (build the book with "
          f"`python -m vrs_edu.course.book_build` or `make book`)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
