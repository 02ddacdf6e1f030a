"""The chapters' prose, read as a learner reads it: no bullet or sentence is said twice in one chapter.

A copied bullet (the same point made twice, word for word) is the kind of slip a reviewer misses and a learner
notices. Markdown cells of each chapter's source (the jupytext ``.py``) are split into bullets and sentences; every
one long enough to be a statement (40 characters or more, after whitespace and markup are normalised) must occur
once per chapter.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.py"))
MIN_CHARS = 40


def statements(markdown: str) -> list[set[str]]:
    """One set per bullet or paragraph: the whole bullet (for a list item) and each of its sentences, normalised
    (markup and line breaks removed), 40 characters or more. An exercise's difficulty line (``*Difficulty …*``,
    with its standard instructions) is left out: it is meant to be the same in every exercise."""
    out = []
    for block in re.split(r"\n\s*\n", markdown):
        for item in re.split(r"\n(?=\s*(?:[*-]|\d+\.)\s)", block):      # one entry per list item
            is_bullet = re.match(r"^\s*(?:[*-]|\d+\.)\s", item) is not None
            text = re.sub(r"[*_`]", "", re.sub(r"\s+", " ", re.sub(r"^\s*(?:[*-]|\d+\.)\s+", "", item))).strip()
            if not text or text.startswith(("#", "$$", "|", "Difficulty")):
                continue
            found = {text} if is_bullet else set()
            found |= set(re.split(r"(?<=[.!?])\s+(?=[A-Z])", text))
            out.append({f for f in found if len(f) >= MIN_CHARS})
    return out


def repeated(markdown_cells: list[str]) -> list[str]:
    """Statements that occur in more than one bullet or paragraph of the cells."""
    counts = Counter(f for cell in markdown_cells for found in statements(cell) for f in found)
    return sorted(f for f, n in counts.items() if n > 1)


def test_the_checker_finds_a_copied_bullet_and_passes_distinct_ones():
    cell = ("* **Scale.** Six layers of width 384, far smaller than the paper's models.\n"
            "* **Objective.** A contrastive loss on sentence pairs, not next-token prediction.\n")
    assert repeated([cell]) == []
    assert "Scale. Six layers of width 384, far smaller than the paper's models." in repeated(
        [cell, "* **Scale.** Six layers of width 384, far smaller than the paper's models.\n"])
    assert repeated(["The stream grows along depth at every block we measured. It never shrinks.",
                     "Later: the stream grows along depth at every block we measured."]) == []   # not the same


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_bullet_or_sentence_is_repeated_in_a_chapter(path):
    nb = jupytext.read(path)
    cells = [c.source for c in nb.cells if c.cell_type == "markdown"]
    dups = repeated(cells)
    assert not dups, f"{path.name} says this more than once: {dups}"


# --- what the learner reads is about the subject, not about the test suite -----------------------------------------

MAINTAINER_SPEAK = re.compile(r"not compared|not checked by the tests|compared by the tests|NBVAL_", re.I)


def test_the_maintainer_speak_check_finds_a_marker_and_passes_prose():
    assert MAINTAINER_SPEAK.search("# NBVAL_IGNORE_OUTPUT")
    assert MAINTAINER_SPEAK.search("# this cell's output is not compared by the tests")
    assert not MAINTAINER_SPEAK.search("# Versions and threads differ from machine to machine.")


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_test_markers_are_cell_tags_and_widget_cells_carry_them(path):
    nb = jupytext.read(path)
    speak = [c.source.splitlines()[0] for c in nb.cells if MAINTAINER_SPEAK.search(c.source)]
    assert not speak, f"{path.name}: cells that speak to maintainers or carry a test marker in their source: {speak}"
    untagged = [c.source.splitlines()[-1] for c in nb.cells
                if c.cell_type == "code" and re.search(r"^\w+_widget\(.*\)\s*$", c.source.strip().splitlines()[-1])
                and "nbval-ignore-output" not in c.metadata.get("tags", [])]
    assert not untagged, f"{path.name}: widget cells without the nbval-ignore-output tag: {untagged}"


# --- the code fits the book's page: at most 100 columns ------------------------------------------------------------

CODE_WIDTH = 100    # characters, not bytes: "Δ" or "≤" takes one column of the page


def wide_code_lines(nb, width: int = CODE_WIDTH) -> list[str]:
    """The lines of ``nb``'s code cells longer than ``width`` characters (markdown cells are not code)."""
    return [line for c in nb.cells if c.cell_type == "code" for line in c.source.splitlines() if len(line) > width]


def test_the_width_check_finds_a_wide_code_line_and_passes_a_full_one():
    full = "x = 1  # " + "Δ" * 91                                      # 100 characters, more bytes
    nb = jupytext.reads(f"# %%\n{full}\n\n# %% [markdown]\n# {'m' * 150}\n", fmt="py:percent")
    assert len(full) == 100 and wide_code_lines(nb) == []             # the long markdown line is not code
    nb = jupytext.reads(f"# %%\n{full}Δ\n", fmt="py:percent")
    assert wide_code_lines(nb) == [full + "Δ"]


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_code_cells_fit_the_page(path):
    wide = wide_code_lines(jupytext.read(path))
    assert not wide, f"{path.name}: {len(wide)} code line(s) wider than {CODE_WIDTH} columns:\n" + "\n".join(wide)
