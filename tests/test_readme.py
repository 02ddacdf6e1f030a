"""The README is learner-first and short (issue: ~5,000 words, mostly setup, teaching and GPUs): what you will
learn and the findings first, then the two commands and the chapter table; the rest lives on book pages. Its
findings cannot be computed in the README, so each sentence of "The course in one screen" is checked here against
the computed sentence the chapter stored (a re-executed chapter whose numbers turn fails this test, and the README is
updated with it)."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
MAX_WORDS = 1500
MAX_KOREAN_WORDS = 400
KOREAN_HEADING = "## 한국어판 (Korean edition)"
PAGES = ["setup.md", "package.md", "teachers.md", "scaling.md", "glossary.md"]


def _stored_prose(chapter: str) -> str:
    nb = nbformat.read(next((ROOT / "notebooks").glob(f"{chapter}_*.ipynb")), 4)
    return "\n".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells if c.cell_type == "code"
                     for o in c.get("outputs", []))


def _all_of(text: str, pattern: str) -> bool:
    """The stored sentence says 'at N of N ...' (every one)."""
    m = re.search(pattern, text)
    return bool(m) and m.group(1) == m.group(2)


def test_the_readme_is_short_and_puts_the_learner_first():
    # Each edition is read on its own: the English part (everything before the Korean section) keeps the cap, and
    # the Korean section, which only says how to open and keep the Korean edition, stays a fraction of it.
    english, korean = README.split(KOREAN_HEADING, 1)
    words = len(english.split())
    assert words <= MAX_WORDS, f"the README's English part has {words} words, more than {MAX_WORDS}"
    assert len(korean.split()) <= MAX_KOREAN_WORDS, (f"the README's Korean section has {len(korean.split())} words, "
                                                      f"more than {MAX_KOREAN_WORDS}")
    order = [README.index(h) for h in ("## What you will learn", "## The course in one screen", "## Two commands",
                                       "## Chapters", "## Going further")]
    assert order == sorted(order)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_the_readme_sends_the_reader_to_exists(page):
    assert f"(vrs_edu/course/sphinx/{page})" in README and (ROOT / "vrs_edu/course/sphinx" / page).is_file()


def test_the_readmes_findings_are_what_the_chapters_computed():
    ch01, ch02, ch07 = _stored_prose("01"), _stored_prose("02"), _stored_prose("07")
    assert "at every block before the last" in README
    assert _all_of(ch01, r"The total exceeds the direct cost at (\d+) of the (\d+) blocks before the last")
    assert "than swapping its attention pattern at\nevery layer" in README or \
        "than swapping its attention pattern at every layer" in " ".join(README.split())
    assert _all_of(ch02, r"The value swap costs more than the pattern swap at (\d+) of (\d+) layers")
    deep, first = re.search(r"costs the deep layers ([\d.]+) % of the clean loss on average, against [\d.]+ nats "
                            r"\(([\d.]+) %\) at layer 0", " ".join(ch02.split())).groups()
    assert "less than the first layer does" in README and float(deep) < float(first)
    assert "token identity explains best,\nat every layer" in README or \
        "token identity explains best, at every layer" in " ".join(README.split())
    assert _all_of(ch07, r"v is the best explained of the three at (\d+) of (\d+) layers")
