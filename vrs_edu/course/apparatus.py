"""How much of what a learner sees in a chapter is statistical apparatus: the visible-apparatus share.

    python -m vrs_edu.course.apparatus                       # chapters 03-06 (the default), one line each
    python -m vrs_edu.course.apparatus notebooks/0*.ipynb    # any chapters

The course's rule (GUIDE.md, "Teaching"): a chapter shows the effect first; verdicts, Holm, power, declared tests,
intervals and the second corpus go into a collapsed "How sure are we?" section. The target for chapters 03-06 is a
share of at most :data:`TARGET` of the visible lines. The share is measured on the stored notebook (``.ipynb``, what
a learner opens, outputs included) by this rule:

1. **Hidden content does not count.** A cell under a collapsed heading is hidden (JupyterLab's rule: a Markdown
   cell whose metadata has ``jp-MarkdownHeadingCollapsed: true`` hides every following cell up to the next heading
   of the same or a higher level; :func:`collapsed_cells`); so is a cell tagged ``remove-cell`` or ``hide-cell``.
   A code cell's input is hidden when its metadata has ``jupyter.source_hidden`` or the tag ``hide-input`` (the
   worked solutions), its outputs when ``jupyter.outputs_hidden`` or the tag ``hide-output``.
2. **Visible lines.** Non-blank lines of Markdown sources, code inputs and text outputs (streams; of a display,
   its ``text/markdown`` if it has one, else ``text/plain``; an HTML table counts one line per ``<tr>``). A line
   longer than :data:`PAGE_COLUMNS` characters counts once per :data:`PAGE_COLUMNS` (it wraps on the page). A
   figure (an image) and a widget each count :data:`FIGURE_LINES` lines, about the height of a 3.6-inch figure in
   lines of text.
3. **Apparatus cells.** A cell is apparatus when its source or its text outputs match :data:`APPARATUS`: the
   words of verdicts (*verdict*, *reproduced*, *contradicted*, *undecided*, *out of regime*), Holm, power, declared
   tests, preconditions, intervals (*interval*, *CI*), p-values and the second corpus. All its visible lines count
   (an upper bound, as in the learner trial: a cell that mixes a curve with a verdict counts whole).
4. **Share** = visible lines of apparatus cells / all visible lines.

The learner trial (chapters read with their stored outputs, before the section existed) found 41-77 % in chapters
03-06. A test (tests/test_apparatus.py) runs the rule on a small notebook whose answer is counted by hand.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
TARGET = 0.25
PAGE_COLUMNS = 100
FIGURE_LINES = 14
DEFAULT_CHAPTERS = ("03", "04", "05", "06")
COLLAPSED = "jp-MarkdownHeadingCollapsed"
HOW_SURE = "How sure are we?"          # the heading of each chapter's collapsed statistics section
APPARATUS = re.compile(
    r"verdict|\bholm\b|\bpower\b|\bdeclared?\b|\bdeclaration|precondition|\binterval|\bci\b|\bp[ _-]?values?\b"
    r"|\bp_holm|\bp \(holm\)|second corpus|corpus-kjv|by_corpus|\breproduced\b|\bcontradicted\b|\bundecided\b"
    r"|out of regime|smallest effect", re.I)
_HEADING = re.compile(r"^(#{1,6})\s", re.M)
_IMAGE = ("image/png", "image/jpeg", "image/svg+xml", "application/vnd.jupyter.widget-view+json")


def heading_level(cell) -> int | None:
    """The level of a Markdown cell's first heading (1 for ``#``), None for a cell without one or a code cell."""
    if cell.cell_type != "markdown":
        return None
    m = _HEADING.search(cell.source)
    return len(m.group(1)) if m else None


def collapsed_cells(nb) -> set[int]:
    """Indices of the cells a collapsed heading hides, by JupyterLab's rule (see the module docstring)."""
    hidden, level = set(), None         # level: the collapsed heading's level while inside its section
    for i, cell in enumerate(nb.cells):
        h = heading_level(cell)
        if level is not None and h is not None and h <= level:
            level = None                 # a heading of the same or a higher level ends the section
        if level is not None:
            hidden.add(i)
            continue
        if h is not None and cell.metadata.get(COLLAPSED) is True:
            level = h
    return hidden


def _lines(text: str) -> int:
    return sum(math.ceil(len(line) / PAGE_COLUMNS) for line in text.splitlines() if line.strip())


def _output_text(out) -> str:
    """What a learner reads of one output: a stream's text; a display's Markdown, else its HTML table (one line
    per row), else its plain text."""
    if out.get("output_type") == "stream":
        return out.get("text", "")
    data = out.get("data", {})
    if "text/markdown" in data:
        return data["text/markdown"]
    if "<table" in data.get("text/html", ""):
        return "\n".join("row" for _ in re.finditer(r"<tr\b", data["text/html"]))
    return data.get("text/plain", "")


@dataclass(frozen=True)
class Share:
    """One chapter's count: visible lines of apparatus cells, all visible lines, and their ratio."""
    chapter: str
    apparatus: int
    visible: int

    @property
    def share(self) -> float:
        return self.apparatus / self.visible if self.visible else 0.0


def cell_lines(cell) -> tuple[int, str]:
    """(visible lines, the text the apparatus rule reads) of one cell that no collapsed heading hides."""
    tags = set(cell.metadata.get("tags", []))
    jupyter = cell.metadata.get("jupyter", {})
    if tags & {"remove-cell", "hide-cell"}:
        return 0, ""
    if cell.cell_type != "code":
        return _lines(cell.source), cell.source
    lines, text = 0, ""
    if not (jupyter.get("source_hidden") or "hide-input" in tags):
        lines += _lines(cell.source)
        text += cell.source
    if not (jupyter.get("outputs_hidden") or "hide-output" in tags):
        for out in cell.get("outputs", []):
            if any(m in out.get("data", {}) for m in _IMAGE):
                lines += FIGURE_LINES
            shown = _output_text(out)
            lines += _lines(shown)
            text += "\n" + shown
    return lines, text


def measure(path: str | Path) -> Share:
    """The visible-apparatus share of one stored notebook, by the rule of the module docstring."""
    nb = nbformat.read(path, as_version=4)
    hidden = collapsed_cells(nb)
    apparatus = visible = 0
    for i, cell in enumerate(nb.cells):
        if i in hidden:
            continue
        lines, text = cell_lines(cell)
        visible += lines
        if APPARATUS.search(text):
            apparatus += lines
    return Share(Path(path).stem, apparatus, visible)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vrs_edu.course.apparatus", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="stored chapters (.ipynb); default: chapters 03-06")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.notebooks] or sorted(
        p for n in DEFAULT_CHAPTERS for p in (ROOT / "notebooks").glob(f"{n}_*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"error: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    print(f"{'chapter':32s} {'apparatus':>9s} {'visible':>8s} {'share':>6s}   (target <= {TARGET:.0%})")
    for p in paths:
        s = measure(p)
        print(f"{s.chapter:32s} {s.apparatus:9d} {s.visible:8d} {s.share:6.1%}"
              f"{'' if s.share <= TARGET else '   above the target'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
