"""The glossary (vrs_edu/course/sphinx/glossary.md, a page of the book): every term of the course defined, every
chapter linking to it, every term a chapter uses from the list below linked there at least once, and every glossary
or citation link of a chapter resolving (the book build turns them into Sphinx roles, which fail on a missing term
or key; this test says which chapter and link without building)."""
from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest
from pybtex.database import parse_file

from vrs_edu.course.book import appendices, chapters
from vrs_edu.course.book_build import CITE_LINK, CONF_DIR, GLOSSARY_LINK, glossary_terms, term_slug

ROOT = Path(__file__).resolve().parents[1]
# The course's terms (the list and the ones its chapters lean on) and how each appears in prose.
TERMS = {
    "RMSNorm": r"RMSNorm", "RoPE": r"\bRoPE\b", "QK-norm": r"QK-norm", "induction head": r"induction head",
    "bits per byte": r"bits per byte", "grouped-query attention": r"grouped-query attention|\bGQA\b",
    "residual stream": r"residual stream", "x0": r"\bx0\b|\$x_0\$", "logit lens": r"logit lens",
    "direct logit attribution": r"direct logit attribution|\bDLA\b", "pattern swap": r"pattern swap",
    "value swap": r"value swap", "value residual": r"value residual", "ResFormer": r"ResFormer",
    "SVFormer": r"SVFormer", "NeuTRENO": r"NeuTRENO", "bank of values": r"bank of values",
    "depth mixer": r"depth mixer", "ShortSWA": r"ShortSWA", "KV cache": r"KV[- ]cache",
    "Holm correction": r"\bHolm\b", "paired seeds": r"paired seeds?", "three-way verdicts": r"three-way",
    "out of regime": r"out of regime", "causal mask": r"causal mask", "frozen routing": r"frozen routing",
    "linear probe": r"linear probe", "held-out R²": r"held-out R²", "post-LN and pre-norm": r"post-LN|pre-norm",
    "unigram loss": r"unigram", "substitution ablation": r"substitution ablation", "nats": r"\bnats\b",
}
# The known gaps: none today (the last, 03, 04, 06 and 08, link their terms since the learner-first rewrite). A
# chapter added half-way there may be listed (a non-strict xfail) until it links every term.
NOT_YET_REWRITTEN: set[str] = set()
CHAPTERS = [c for c in chapters() if (ROOT / "notebooks" / (c.stem + ".py")).exists()]
# An appendix's links must resolve too (the book fails on one that does not); it need not link every term again.
APPENDICES = [a for a in appendices() if (ROOT / "notebooks" / (a.stem + ".py")).exists()]


def _markdown(chapter) -> str:
    nb = jupytext.read(ROOT / "notebooks" / (chapter.stem + ".py"))
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _pending(chapter):
    return pytest.mark.xfail(chapter.number in NOT_YET_REWRITTEN, strict=False, reason="known gap: not yet rewritten")


def test_the_glossary_defines_every_term_of_the_course():
    defined = {t.lower() for t in glossary_terms()}
    missing = [t for t in TERMS if t.lower() not in defined]
    assert not missing, f"glossary.md lacks {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS + APPENDICES, ids=lambda c: c.stem)
def test_every_glossary_and_citation_link_of_a_chapter_resolves(chapter):
    md = _markdown(chapter)
    slugs = {term_slug(t) for t in glossary_terms()}
    keys = set(parse_file(str(CONF_DIR / "references.bib")).entries)
    bad_terms = [m.group(0) for m in GLOSSARY_LINK.finditer(md) if m.group(2) not in slugs]
    bad_keys = [m.group(0) for m in CITE_LINK.finditer(md) if m.group(2) not in keys]
    assert not bad_terms, f"{chapter.stem}: links to terms the glossary does not define: {bad_terms}"
    assert not bad_keys, f"{chapter.stem}: citations of keys not in references.bib: {bad_keys}"


@pytest.mark.parametrize("chapter", [pytest.param(c, marks=_pending(c)) for c in CHAPTERS], ids=lambda c: c.stem)
def test_a_chapter_links_every_course_term_it_uses_to_the_glossary(chapter):
    md = _markdown(chapter)
    linked = {m.group(2) for m in GLOSSARY_LINK.finditer(md)}
    assert linked, f"{chapter.stem} links no term to the glossary"
    unlinked = [t for t, pattern in TERMS.items()
                if re.search(pattern, GLOSSARY_LINK.sub("", md)) and term_slug(t) not in linked]
    assert not unlinked, f"{chapter.stem} uses {unlinked} without linking them to the glossary once"


def test_the_check_finds_an_unlinked_term():
    md = "The [residual stream](#glossary:residual-stream) is normalised by RMSNorm."
    linked = {m.group(2) for m in GLOSSARY_LINK.finditer(md)}
    rest = GLOSSARY_LINK.sub("", md)
    assert [t for t, p in TERMS.items() if re.search(p, rest) and term_slug(t) not in linked] == ["RMSNorm"]


def test_the_glossary_defines_the_new_judges_words():
    """Review 3 (H2, H3) and issue 34: the fifth verdict word, the would-be verdict of an out-of-regime test, the
    equivalence test (TOST) and the new sweep rule are defined, and the old rule ("the rates disagree") is gone."""
    text = (ROOT / "vrs_edu/course/sphinx/glossary.md").read_text(encoding="utf-8")
    defined = {t.lower() for t in glossary_terms()}
    assert {"negligible", "would-be verdict", "equivalence test", "tost", "rate-dependent"} <= defined
    entry = re.search(r"\nrate-dependent\n((?:  .*\n)+)", text).group(1)
    assert "one arm" in entry and "reproduces it and another contradicts it" in entry and "undecided" in entry
    three_way = re.search(r"\nthree-way verdicts\n((?:  .*\n)+)", text).group(1)
    assert "{term}`negligible`" in three_way and "{term}`would-be verdict`" in three_way
