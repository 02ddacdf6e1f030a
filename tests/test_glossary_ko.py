"""The Korean glossary (vrs_edu/course/sphinx/glossary.ko.md, the Korean book's glossary page): one entry per term of
the English glossary, written "<Korean term> (<English term>)" so that the chapters' (#glossary:slug) links find
their Korean entry through the English term; every {term} reference naming an entry of the page; the math, code,
arXiv ids and chapter numbers of each definition kept; and the page's 용어 대응표 (the edition's terminology
reference) listing every term with the Korean the entry uses."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from vrs_edu.course.book_build import CONF_DIR, GLOSSARY, glossary_terms

GLOSSARY_KO = CONF_DIR / "glossary.ko.md"
ENTRY = re.compile(r"^(?P<ko>.+) \((?P<en>[^()]+)\)$")     # "잔차 스트림 (residual stream)"
TERM_REF = re.compile(r"\{term\}`([^`]+)`")


def _definitions(path: Path) -> dict[str, str]:
    """Each term of a glossary page -> its definition, whitespace collapsed."""
    block = re.search(r"```\{glossary\}\n(.*?)\n```", path.read_text(encoding="utf-8"), flags=re.S).group(1)
    out, term = {}, None
    for line in block.splitlines():
        if line.strip() and not line.startswith((" ", ":")):
            term = line.strip()
            out[term] = ""
        elif term is not None:
            out[term] += " " + line.strip()
    return {t: " ".join(d.split()) for t, d in out.items()}


def _korean_entries() -> dict[str, str]:
    """English term -> the Korean entry's full term line."""
    entries = {}
    for term in glossary_terms(GLOSSARY_KO):
        m = ENTRY.match(term)
        assert m, f"glossary.ko.md: {term!r} is not written '<Korean term> (<English term>)'"
        assert m.group("en") not in entries, f"glossary.ko.md: two entries for {m.group('en')!r}"
        entries[m.group("en")] = term
    return entries


def _table() -> dict[str, str]:
    text = GLOSSARY_KO.read_text(encoding="utf-8")
    assert "\n## 용어 대응표\n" in text, "glossary.ko.md has no section '## 용어 대응표'"
    section = text.split("\n## 용어 대응표\n", 1)[1]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("|")]
    assert rows[0] == ["English", "한국어"] and set(rows[1][0]) <= set("-:"), "the table's header is English | 한국어"
    return {en: ko for en, ko in rows[2:]}


def test_every_english_term_has_exactly_one_korean_entry_and_no_other():
    english, entries = glossary_terms(GLOSSARY), _korean_entries()
    assert len(glossary_terms(GLOSSARY_KO)) == len(entries)
    assert sorted(entries) == sorted(english), (
        f"missing: {sorted(set(english) - set(entries))}; extra: {sorted(set(entries) - set(english))}")


def test_the_page_is_sorted_like_the_english_one_and_says_whose_vocabulary_it_follows():
    text = GLOSSARY_KO.read_text(encoding="utf-8")
    assert "```{glossary}\n:sorted:\n" in text
    intro = text.split("```{glossary}")[0]
    assert "원문" in intro and "어휘를 따릅니다" in intro


def test_every_term_reference_names_a_korean_entry():
    targets = set(glossary_terms(GLOSSARY_KO))
    refs = [m.group(1) for m in TERM_REF.finditer(GLOSSARY_KO.read_text(encoding="utf-8"))]
    targets_of = [re.search(r"<(.+)>$", r).group(1) if r.endswith(">") else r for r in refs]
    assert refs and not [r for r in targets_of if r not in targets]


@pytest.mark.parametrize("en", glossary_terms(GLOSSARY))
def test_a_definition_keeps_the_math_code_sources_chapters_and_cross_references(en):
    english = _definitions(GLOSSARY)[en]
    korean = _definitions(GLOSSARY_KO)[_korean_entries()[en]]
    for pattern in (r"\$[^$]+\$", r"`[^`]+`", r"arXiv \d{4}\.\d{4,5}"):
        kept = [sorted(re.findall(pattern, TERM_REF.sub("", text))) for text in (korean, english)]
        assert kept[0] == kept[1], pattern
    chapters_en = {n for m in re.finditer(r"[Cc]hapters? (\d\d(?:(?:, | and )\d\d)*)", english)
                   for n in re.findall(r"\d\d", m.group(1))}
    assert set(re.findall(r"(\d\d)장", korean)) == chapters_en
    # a cross-reference of the English definition is one of the Korean one, to the same term's entry
    refs_en = {m.group(1) for m in TERM_REF.finditer(english)}
    refs_ko = {ENTRY.match(re.sub(r"^.*<(.+)>$", r"\1", m.group(1))).group("en") for m in TERM_REF.finditer(korean)}
    assert refs_ko == refs_en


def test_the_terminology_table_lists_every_term_with_the_korean_of_its_entry():
    table, entries = _table(), _korean_entries()
    for en, term in entries.items():
        assert table.get(en) == ENTRY.match(term).group("ko"), f"용어 대응표: {en!r}"
    keys = list(table)
    assert keys == sorted(keys, key=str.lower), "the 용어 대응표 is sorted by its English column"
    shared = {"the article": "원문", "residual stream": "잔차 스트림", "layer": "층", "verdict": "판정",
              "out of regime": "적용 범위 밖", "over-smoothing": "과평활화", "bank of values": "값 뱅크"}
    assert {en: table.get(en) for en in shared} == shared
