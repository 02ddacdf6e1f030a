"""The book's pages at a laptop's width (1280 px), measured in Debian's headless Chromium: nothing scrolls sideways
and no figure is shrunk.

    pytest -q -p no:xdist -m browser tests/test_browser_layout.py

For every chapter of book.toml, on its page of the built book (built first if missing or out of date, as in
tests/test_browser.py, whose fixtures this file uses):

* the code column holds at least 100 characters of code (the course's code and printed tables are written for it);
* no code cell and no output (printed text, HTML table) is wider than its box, so nothing needs a sideways scroll
  (a printed line longer than the page wraps at a space: only a single word wider than the page would overflow);
* every figure is shown at its own size or larger: matplotlib draws the course's text at 9-10 pt at the figure's
  own size, so a figure the page shrinks has text below 9 pt (the issue found 5-7 px).

Skipped, saying why, when Chromium or playwright is missing (the same rule as tests/test_browser.py).
"""
from __future__ import annotations

import pytest

from test_browser import CHAPTERS, _why_skip, book_url, page  # noqa: F401  (fixtures used by name)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(_why_skip() is not None, reason=_why_skip() or "")]

MIN_CODE_COLUMNS = 100
SHRINK_TOLERANCE_PX = 1          # rounding of the image's displayed width

# Measured in the page: every code input and output block that scrolls sideways (its content wider than its box),
# how many characters of code fit on one line, and each output image's natural and displayed widths.
MEASURE = """() => {
  const blocks = [...document.querySelectorAll(
      'div.cell div.cell_input pre, div.cell div.cell_output pre, div.cell div.cell_output table')];
  const wide = blocks.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => {
      const lines = e.textContent.split(String.fromCharCode(10));
      const longest = lines.reduce((a, b) => (a.length >= b.length ? a : b), '');
      return `${e.closest('.cell_input') ? 'code' : 'output'} ${e.scrollWidth}px in ${e.clientWidth}px: `
             + longest.trim().slice(0, 90);
  });
  const pre = document.querySelector('div.cell div.cell_input pre');
  let columns = null;
  if (pre) {
    const probe = document.createElement('span');
    probe.textContent = 'x'.repeat(100);
    pre.appendChild(probe);
    const charWidth = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const cs = getComputedStyle(pre);
    columns = Math.floor((pre.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)) / charWidth);
  }
  const images = [...document.querySelectorAll('div.cell div.cell_output img')].map(
      i => ({natural: i.naturalWidth, shown: i.getBoundingClientRect().width, src: i.src.split('/').pop()}));
  return {wide, columns, images};
}"""


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.file.removesuffix(".ipynb") for c in CHAPTERS])
def test_chapter_page_needs_no_sideways_scrolling_and_keeps_figures_readable(page, book_url, chapter):
    page.goto(f"{book_url}/{chapter.file.removesuffix('.ipynb')}.html")
    page.wait_for_load_state("load")
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    m = page.evaluate(MEASURE)

    assert m["columns"] is not None, "the page has no code cell"
    assert m["columns"] >= MIN_CODE_COLUMNS, (
        f"the code column holds {m['columns']} characters at 1280 px, fewer than {MIN_CODE_COLUMNS}")
    assert not m["wide"], f"{len(m['wide'])} block(s) scroll sideways at 1280 px:\n" + "\n".join(m["wide"])
    shrunk = [f"{i['src']}: {i['natural']} px drawn in {i['shown']:.0f} px" for i in m["images"]
              if i["shown"] < i["natural"] - SHRINK_TOLERANCE_PX]
    assert not shrunk, "figures shrunk below their own size (their text below 9 pt):\n" + "\n".join(shrunk)
