"""One recipe's declared tests on several corpora, side by side: which verdicts hold on both, which depend on the text.

Chapters 03–05 print one table each (claim × corpus) from the stored results of ``vrs-edu reproduce NAME`` (the
default corpus, the Python reference docs) and ``vrs-edu reproduce NAME --corpus kjv`` (the King James Bible, natural
prose). Every cell is recomputed from the saved runs with the recipe's own ``verdicts`` function, so the table and
the chapter's verdicts can never disagree.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from vrs_edu.i18n import evidence as E
from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.corpora import DEFAULT_NAME, NAMED, corpus_facts, describe
from vrs_edu.lab.experiments import chosen_corpus, provenance, results_path
from vrs_edu.lab.results import Verdict
from vrs_edu.lab.verdict_words import verdict_label

SECOND_CORPUS = "kjv"
VERDICT_CORPUS = "kjv"   # the corpus the loss verdicts come from: a run reads 0.60 epochs of it (issue 27)


def verdict_corpus() -> str:
    """The corpus chapters 03-04 read their verdicts from: ``VRS_EDU_CORPUS`` when a teacher set it, else
    :data:`VERDICT_CORPUS` (kjv: every batch is new text; the Python docs are read six times per run)."""
    return chosen_corpus() or VERDICT_CORPUS


def verdict_corpora() -> tuple[str, ...]:
    """The verdict corpus first, then the default corpus (the memorisation regime, beside it), then a teacher's."""
    first = verdict_corpus()
    return tuple(dict.fromkeys((first, VERDICT_CORPUS, DEFAULT_NAME)))


def compared_corpora() -> tuple[str, ...]:
    """The corpora the chapters compare: the default (the Python docs), the King James Bible, and the corpus a teacher
    chose with ``VRS_EDU_CORPUS`` when it is another one."""
    base = (DEFAULT_NAME, SECOND_CORPUS)
    chosen = chosen_corpus()
    return base + ((chosen,) if chosen and chosen not in base else ())


def load_by_corpus(name: str, corpora: Sequence[str] | None = None,
                   out_dir: str | Path | None = None) -> dict[str, dict]:
    """``{corpus: result}`` for every corpus in ``corpora`` (None: :func:`compared_corpora`) whose result file exists
    (the default corpus is read from ``<name>.json``, another from ``<name>.corpus-<corpus>.json``).

    Raises:
        FileNotFoundError: none of the files exists (the message names the commands that make them).
    """
    corpora = compared_corpora() if corpora is None else tuple(corpora)
    found = {}
    for c in corpora:
        path = results_path(name, out_dir=out_dir, corpus=None if c == DEFAULT_NAME else c)
        if path.exists():
            found[c] = json.loads(path.read_text())
    if not found:
        how = " or ".join(f"`vrs-edu reproduce {name}{'' if c == DEFAULT_NAME else f' --corpus {c}'}`"
                          for c in corpora)
        raise FileNotFoundError(f"no result of {name!r} on {list(corpora)}: run {how}")
    return found


def claims_by_corpus(results: dict[str, dict], verdicts: Callable[[dict], list[Verdict]]) -> list[dict]:
    """One row per declared test, in the recipe's order: ``{"name", "family", "cells": {corpus: Verdict or
    None}, "depends": bool}``. ``depends`` is True when the test was run on two or more corpora and their verdicts
    differ (a finding that depends on the text)."""
    per_corpus = {c: {r.test.name: r for r in verdicts(res)} for c, res in results.items()}
    order: list[str] = []
    for rows in per_corpus.values():
        order += [n for n in rows if n not in order]
    out = []
    for name in order:
        cells = {c: rows.get(name) for c, rows in per_corpus.items()}
        got = [r.verdict for r in cells.values() if r is not None]
        family = next(r.test.family for r in cells.values() if r is not None)
        out.append({"name": name, "family": family, "cells": cells, "depends": len(got) > 1 and len(set(got)) > 1})
    return out


def _cell(row: Verdict | None, digits: int, lang: str) -> str:
    if row is None:
        return E.NOT_RUN[lang]
    lo, hi = row.ci
    return f"{row.mean:+.{digits}f} [{lo:+.{digits}f},{hi:+.{digits}f}] {verdict_label(row, lang)}"


def format_claims_by_corpus(rows: list[dict], digits: int = 3, page: int = 100, lang: str | None = None) -> str:
    """The claim × corpus table as text, at most ``page`` characters wide: per test, the mean of the per-seed values
    [95 % CI] and the verdict (Holm-corrected within each corpus' family; an out-of-regime or n/a one with its
    would-be verdict, :func:`vrs_edu.lab.verdict_words.verdict_label`) on each corpus; a ``*`` marks a
    test whose verdict differs between corpora. Names that leave no room for the cells go on a line of their own;
    when even the cells do not fit side by side (three corpora), each corpus gets a line under the test's name.
    ``lang``: the edition (None: the running notebook's); cells are aligned by display width (Hangul: 2)."""
    lang = resolve_language(lang)
    corpora = list(rows[0]["cells"]) if rows else []
    longest = max([len("contradicted")] + [E.width(verdict_label(c, lang)) for r in rows for c in r["cells"].values()
                                           if c is not None])
    width = 1 + 3 * (digits + 3) + 5 + longest   # " +m [+lo,+hi] verdict"
    if width * len(corpora) + 12 > page:
        label = max(map(len, corpora)) + 2
        lines = []
        for r in rows:
            lines.append(r["name"] + (" *" if r["depends"] else ""))
            lines += [f"    {c:{label}s}{_cell(r['cells'][c], digits, lang)}" for c in corpora]
        return "\n".join(lines)
    name_width = max([E.width(E.DECLARED_TEST[lang])] + [len(r["name"]) + 2 for r in rows]) + 1
    if name_width + width * len(corpora) > page:
        name_width = page - width * len(corpora)
    lines = [E.pad(E.DECLARED_TEST[lang], name_width) + "".join(f" {c:{width - 1}s}" for c in corpora).rstrip()]
    for r in rows:
        name = r["name"] + (" *" if r["depends"] else "")
        cells = "".join(" " + E.pad(_cell(r['cells'][c], digits, lang), width - 1) for c in corpora).rstrip()
        if len(name) < name_width:
            lines.append(f"{name:{name_width}s}{cells}")
        else:
            lines += [name, f"{'':{name_width}s}{cells}"]
    return "\n".join(lines)


def corpus_dependent(rows: list[dict], lang: str | None = None) -> list[str]:
    """The tests whose verdicts differ between corpora, each as ``name (corpus verdict, corpus verdict)``; ``lang``:
    the edition of the verdict words (None: the running notebook's)."""
    return [f"{r['name']} (" + ", ".join(f"{c} {verdict_label(cell, lang)}" for c, cell in r["cells"].items()
                                        if cell is not None) + ")" for r in rows if r["depends"]]


def epochs_per_run(part: dict, baseline: str) -> dict:
    """How much of its corpus one run reads: ``{"train_tokens", "tokens_read", "epochs"}`` from a result part that
    has ``configs`` and ``corpus_tokens`` (``baseline``: the variant whose schedule is read). Many epochs on a small
    corpus (the Python docs) is a memorisation regime; less than one (the Bible) is not: a reason verdicts can differ.
    """
    cfg = part["configs"][baseline]
    read = cfg["train"]["steps"] * cfg["train"]["batch_size"] * cfg["model"]["block_size"]
    train = part["corpus_tokens"]["train"]
    return {"train_tokens": train, "tokens_read": read, "epochs": read / train}


def format_epochs(parts: dict[str, dict], baseline: str, lang: str | None = None) -> str:
    """One line per corpus: its training tokens, the tokens one run reads, and the ratio in epochs; then, where the
    runs recorded it, the baseline's final loss on training text beside its validation loss (:func:`train_val_gap`).
    ``lang``: the edition (None: the running notebook's)."""
    lang = resolve_language(lang)
    lines = [E.epochs_line(c, e["train_tokens"], e["tokens_read"], e["epochs"], lang)
             for c, e in ((c, epochs_per_run(part, baseline)) for c, part in parts.items())]
    gaps = ((c, train_val_gap(part, baseline)) for c, part in parts.items())
    return "\n".join(lines + [E.gap_line(c, baseline, g, lang) for c, g in gaps if g is not None])


def train_val_gap(part: dict, baseline: str) -> dict | None:
    """The ``baseline`` runs' mean final loss on training text (``final_train_loss``) and on the whole validation
    split, and validation − train: ``{"train", "val", "gap", "n"}``; None for runs that did not record a training
    loss. A large gap is memorisation: the runs read that text more than once."""
    runs = part.get("runs", {}).get(baseline, [])
    if not runs or not all("final_train_loss" in r for r in runs):
        return None
    tr = sum(r["final_train_loss"] for r in runs) / len(runs)
    va = sum(r["final_val_loss"] for r in runs) / len(runs)
    return {"train": tr, "val": va, "gap": va - tr, "n": len(runs)}


def what_differs(facts: list[dict], epochs: dict[str, float], unk_close: float = 0.02, lang: str | None = None) -> str:
    """Two sentences computed from the numbers: how many times one run reads each corpus (``epochs``: corpus →
    epochs per run; several epochs = the models can memorise the training text, below one = every batch is new), and
    whether the ``[UNK]`` shares (``facts`` from :func:`~vrs_edu.lab.corpora.corpus_facts`) are within
    ``unk_close`` of each other (then vocabulary coverage does not separate the corpora); in ``lang`` (None: the
    running notebook's edition; :func:`vrs_edu.i18n.evidence.what_differs`)."""
    return E.what_differs(epochs, {f["name"]: f["unk_share"] for f in facts}, unk_close, resolve_language(lang))


def opposite_signs(rows: list[dict]) -> list[str]:
    """The tests whose means lie on opposite sides of the test's threshold on two corpora (whatever the verdicts:
    "undecided" on one and "reproduced" on the other is not a disagreement in direction, opposite signs may be)."""
    out = []
    for r in rows:
        cells = [c for c in r["cells"].values() if c is not None]
        sides = {(c.mean - c.test.threshold) > 0 for c in cells}
        if len(cells) > 1 and len(sides) > 1:
            out.append(r["name"])
    return out


def corpus_report(results: dict[str, dict], verdicts: Callable[[dict], list[dict]], baseline: str,
                  part: str | None = "corpus", lang: str | None = None) -> tuple[str, str]:
    """What chapters 03–05 show under "The same tests on a second corpus", as ``(markdown, text)``: the named
    corpora's facts (:func:`~vrs_edu.lab.corpora.describe`) and, at most 100 columns wide, the epochs per run, each
    result's provenance, the claim × corpus table, the tests whose verdicts differ, those whose means have opposite
    signs, and :func:`what_differs`. ``part``: the key of the text runs in a result (None: the result itself);
    ``baseline``: the variant whose schedule counts the epochs; ``lang``: the edition (None: the running notebook's)."""
    lang = resolve_language(lang)
    facts = corpus_facts([c for c in results if c in NAMED])
    parts = {c: res if part is None else res[part] for c, res in results.items()}
    rows = claims_by_corpus(results, verdicts)
    dep = corpus_dependent(rows, lang)
    epochs = {c: epochs_per_run(p, baseline)["epochs"] for c, p in parts.items()}
    lines = [format_epochs(parts, baseline, lang), *(f"{c}: {provenance(res)}" for c, res in results.items()), "",
             format_claims_by_corpus(rows, lang=lang), "", E.depends_line(len(dep), len(rows), lang),
             *(f"  {line}" for line in dep),
             E.fill(E.opposite_line(opposite_signs(rows), lang), 100, subsequent_indent="  ", break_on_hyphens=False),
             E.fill(what_differs(facts, epochs, lang=lang), 100, break_on_hyphens=False)]
    return describe(facts=facts, lang=lang), "\n".join(lines)
