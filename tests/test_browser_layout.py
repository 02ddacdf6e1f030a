"""The book's chapter pages in Debian's headless Chromium, as a reader reaches them and at a laptop's width
(1280 px): nothing scrolls sideways and no figure is shrunk.

    pytest -q -p no:xdist -m browser tests/test_browser_layout.py

For every chapter of book.toml, on its page of the built book (built first if missing or out of date, as in
tests/test_browser.py, whose fixtures this file uses), loaded once (the `chapter_page` fixture) for all of these:

* reached from the index through the sidebar: its title, that every image loaded, that math was typeset, that no
  output is a traceback and no admonition an error, that every request was answered (no 404) by the book itself (it
  must work offline), and that previous/next follow book.toml's order;
* the code column holds at least 100 characters of code (the course's code and printed tables are written for it);
* no code cell and no output (printed text, HTML table) is wider than its box, so nothing needs a sideways scroll
  (a printed line longer than the page wraps at a space: only a single word wider than the page would overflow);
* every figure is shown at its own size or larger: matplotlib draws the course's text at 9-10 pt at the figure's
  own size, so a figure the page shrinks has text below 9 pt (the issue found 5-7 px).
* no chapter depends on an emoji font, and a section collapsed in JupyterLab ("How sure are we?") is folded on the
  page and opens with a click (checked on the same page load).

On a 390-px phone (the issue's findings: the sidebar button did nothing, 10 of chapter 00's 20 code blocks scrolled
sideways, figure text of 7-9 px, difficulty ratings in emoji that showed as empty boxes):

* the page never scrolls sideways, no code block or printed output does (code wraps), and every figure is shown at
  90 % of its own size or more, so that its 13.3-px text (vrs_edu/viz/plots.py) stays at 12 px or more: a figure
  wider than the column scrolls inside its own box; the article's text is 12 px or more;
* "Toggle primary sidebar" opens the chapter menu (at 1280 px it hides and shows the sidebar);
* the search page, opened from disk (file://, as `make book` suggests), shows the text around each match.

Skipped, saying why, when Chromium or playwright is missing (the same rule as tests/test_browser.py).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import nbformat

from test_browser import (APPENDICES, ARTICLE, BOOK_TITLE, CHAPTERS, FIGURES_PENDING, PATHS, ROOT, SIDEBAR_LINKS,
                          _screenshot, _why_skip, book_page)
from test_browser import book_url  # noqa: F401  (a fixture, used by name)
from vrs_edu.course.apparatus import COLLAPSED, collapsed_cells
from vrs_edu.course.book_build import BACK_MATTER, WIDGET_MIME

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


# ------------------------------------------------------------------------------------ each chapter's page, once

@pytest.fixture(scope="module")
def chapter_page(request, browser, book_url):
    """The page of chapter ``CHAPTERS[request.param]`` (parametrize it indirectly with the chapter's index), reached
    as a reader reaches it: from the index, through the sidebar. Module scope: loading a chapter page is seconds of
    Chromium's time, and pytest runs the tests of one parameter of a module-scoped fixture one after the other, so
    each chapter is loaded once for the tests below that look at it (navigation first, while the page is as loaded;
    then the layout, which resizes it and opens a fold)."""
    i = request.param
    chapter = CHAPTERS[i]
    nb_path = PATHS.notebooks / chapter.file
    assert nb_path.exists(), f"{nb_path.relative_to(ROOT)} does not exist, so the book cannot show {chapter.title!r}"
    assert (PATHS.out / f"{chapter.stem}.html").exists(), \
        f"the built book has no page for {chapter.file}: rebuild it with `make book`"
    with book_page(browser, book_url) as pg:
        pg.goto(f"{book_url}/index.html")
        with pg.expect_navigation():
            pg.locator(SIDEBAR_LINKS).get_by_text(chapter.title, exact=True).click()
        pg.wait_for_load_state("networkidle")
        pg.chapter_index = i
        yield pg


def _expected_counts(nb_path: Path) -> dict[str, int]:
    """From the committed notebook: how many figures and widgets the page must show, how many tracebacks it may."""
    nb = nbformat.read(nb_path, 4)
    outputs = [(c, o) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    deliberate = sum(1 for c, o in outputs if o.output_type == "error" and (
        "NBVAL_RAISES_EXCEPTION" in c.source or "raises-exception" in c.metadata.get("tags", [])))
    return {"images": sum(1 for _, o in outputs if {"image/png", "image/jpeg", "image/svg+xml"} & set(o.get("data", {}))),
            "widgets": sum(1 for _, o in outputs if WIDGET_MIME in o.get("data", {})),
            "deliberate_tracebacks": deliberate}


def _neighbours(i: int) -> tuple[str, str | None]:
    """The pages previous/next must point at: the nearest chapters in book.toml's order that the book contains
    (all of them, once every chapter is written), the index before the first; after the last, the first appendix
    (or the glossary when there is none)."""
    built = [j for j, c in enumerate(CHAPTERS) if (PATHS.out / f"{c.stem}.html").exists()]
    before = [j for j in built if j < i]
    after = [j for j in built if j > i]
    pages_after = [a.stem for a in APPENDICES if (PATHS.out / f"{a.stem}.html").exists()] + [BACK_MATTER[0].stem]
    return (f"{CHAPTERS[before[-1]].stem}.html" if before else "index.html",
            f"{CHAPTERS[after[0]].stem}.html" if after else f"{pages_after[0]}.html")


@pytest.mark.parametrize("chapter_page", range(len(CHAPTERS)), ids=[c.stem for c in CHAPTERS], indirect=True)
def test_chapter_page_through_the_navigation(chapter_page, book_url):
    page, i = chapter_page, chapter_page.chapter_index
    chapter = CHAPTERS[i]
    nb_path = PATHS.notebooks / chapter.file
    assert page.url == f"{book_url}/{chapter.stem}.html"

    # title: the browser tab and the page's heading (without its "#" anchor)
    assert page.title() == f"{chapter.title} — {BOOK_TITLE}"
    h1 = page.locator(f"{ARTICLE} h1").first.evaluate(
        "h => [...h.childNodes].filter(n => !(n.classList && n.classList.contains('headerlink')))"
        ".map(n => n.textContent).join('').trim()")
    assert h1 == chapter.title

    expected = _expected_counts(nb_path)
    # figures: every image on the page decoded, and at least one per figure the notebook holds
    page.wait_for_function("() => [...document.images].every(img => img.complete)", timeout=30_000)
    images = page.evaluate("() => [...document.querySelectorAll('article img')]"
                           ".map(img => ({src: img.getAttribute('src'), w: img.naturalWidth}))")
    broken = [im["src"] for im in images if im["w"] == 0]
    assert not broken, f"images that did not load: {broken}"
    assert len(images) >= expected["images"], f"{len(images)} images shown, the notebook has {expected['images']}"

    # math: MathJax (served from the book) typeset every formula
    page.wait_for_function("() => [...document.querySelectorAll('.math')].every(m => m.querySelector('mjx-container'))",
                           timeout=30_000)

    # widgets: each shows the note, and the next cell its static figure
    widget_cells = page.evaluate("""() => [...document.querySelectorAll('div.cell')]
        .filter(c => c.innerText.includes('Interactive widget: it runs in JupyterLab'))
        .map(c => { let n = c.nextElementSibling;
                    while (n && !(n.matches && n.matches('div.cell'))) n = n.nextElementSibling;
                    return !!(n && n.querySelector('img')); })""")
    assert len(widget_cells) == expected["widgets"] and all(widget_cells), \
        f"widgets: {widget_cells} (True = followed by a static figure), notebook has {expected['widgets']}"

    # nothing on the page is an error message
    text = page.locator(ARTICLE).inner_text()
    tracebacks = page.locator(f"{ARTICLE} .output.traceback").count()
    assert tracebacks <= expected["deliberate_tracebacks"], f"{tracebacks} traceback output(s) on the page"
    assert text.count("Traceback (most recent call last)") <= expected["deliberate_tracebacks"]
    assert page.locator(f"{ARTICLE} .admonition.error, {ARTICLE} .system-message").count() == 0
    assert not re.search(r"\b404\b.*not found", text, re.I)
    assert not page.log.bad_responses, f"requests that failed: {page.log.bad_responses}"
    assert not page.log.outside, f"the page asked for something outside the book: {page.log.outside}"
    assert not page.log.errors, page.log.errors

    # previous / next follow book.toml's order
    prev_href, next_href = _neighbours(i)
    assert page.locator(".prev-next-area a.left-prev").get_attribute("href") == prev_href
    nxt = page.locator(".prev-next-area a.right-next")
    assert (nxt.get_attribute("href") if nxt.count() else None) == next_href

    _screenshot(page, f"book_{chapter.stem}")


# ------------------------------------------------------------------------------------------------- layout

def _figure_params():
    return [pytest.param(i, id=c.file.removesuffix(".ipynb"), marks=pytest.mark.xfail(
        c.number in FIGURES_PENDING, strict=False, reason="known gap: figures drawn for the old page width"))
        for i, c in enumerate(CHAPTERS)]


# ------------------------------------------------------------------------------------------------ a 390-px phone

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}   # book_page's viewport (tests/test_browser.py)
MIN_SHOWN = 0.9          # a figure shown at 90 % of its own size keeps its 13.3-px text at 12 px
MIN_TEXT_PX = 12

PHONE_MEASURE = """() => {
  const blocks = [...document.querySelectorAll(
      'div.cell div.cell_input pre, div.cell div.cell_output pre, div.cell div.cell_output table')];
  const wide = blocks.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.trim().slice(0, 80));
  const images = [...document.querySelectorAll('article img')].map(
      i => ({natural: i.naturalWidth, shown: i.getBoundingClientRect().width, src: i.src.split('/').pop()}));
  const text = [...document.querySelectorAll('article p, article li, article pre, article td, article dd')]
      .filter(e => e.textContent.trim()).map(e => parseFloat(getComputedStyle(e).fontSize));
  return {wide, images, minText: Math.min(...text), page: document.documentElement.scrollWidth,
          window: window.innerWidth};
}"""


@pytest.fixture
def phone(browser, book_url):
    context = browser.new_context(viewport=PHONE, device_scale_factor=1)
    pg = context.new_page()
    pg.route("**/*", lambda route: route.continue_() if route.request.url.startswith(book_url + "/")
             else route.abort())
    yield pg
    context.close()


def _assert_readable_on_a_phone(pg, chapter) -> None:
    m = pg.evaluate(PHONE_MEASURE)
    assert m["window"] == PHONE["width"], f"the window is {m['window']} px wide, not the phone's {PHONE['width']}"
    assert m["page"] <= m["window"], f"the page is {m['page']} px wide in a {m['window']}-px window"
    assert not m["wide"], f"{len(m['wide'])} block(s) scroll sideways at 390 px:\n" + "\n".join(m["wide"])
    small = [f"{i['src']}: {i['natural']} px shown in {i['shown']:.0f} px" for i in m["images"]
             if i["shown"] < MIN_SHOWN * i["natural"]]
    assert not small, "figures shrunk so far that their text falls below 12 px:\n" + "\n".join(small)
    assert m["minText"] >= MIN_TEXT_PX, f"text of {m['minText']} px"
    _screenshot(pg, f"phone_{chapter.stem}")


@pytest.mark.parametrize("chapter_page", _figure_params(), indirect=True)
def test_chapter_page_at_1280_px_and_on_a_phone_scrolls_nothing_sideways_keeps_figures_readable_and_folds(
        chapter_page):
    """On the chapter's one page load (each is seconds of Chromium's time): measured at 1280 px, then the same page
    resized to a 390-px phone, then back at 1280 px the folded section opened."""
    page, chapter = chapter_page, CHAPTERS[chapter_page.chapter_index]
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    m = page.evaluate(MEASURE)

    assert m["columns"] is not None, "the page has no code cell"
    assert m["columns"] >= MIN_CODE_COLUMNS, (
        f"the code column holds {m['columns']} characters at 1280 px, fewer than {MIN_CODE_COLUMNS}")
    assert not m["wide"], f"{len(m['wide'])} block(s) scroll sideways at 1280 px:\n" + "\n".join(m["wide"])
    shrunk = [f"{i['src']}: {i['natural']} px drawn in {i['shown']:.0f} px" for i in m["images"]
              if i["shown"] < i["natural"] - SHRINK_TOLERANCE_PX]
    assert not shrunk, "figures shrunk below their own size (their text below 9 pt):\n" + "\n".join(shrunk)
    emoji = page.evaluate("() => [...document.querySelector('article').innerText]"
                          ".filter(c => /\\p{Extended_Pictographic}/u.test(c))")
    assert not emoji, f"{chapter.file} shows {len(emoji)} emoji ({''.join(sorted(set(emoji)))}): without a " \
                      "colour-emoji font they are empty boxes; say it in text"
    page.set_viewport_size(PHONE)
    _assert_readable_on_a_phone(page, chapter)
    page.set_viewport_size(DESKTOP)
    heading = _folded_heading(chapter)
    if heading is not None:
        _assert_folded_and_opens(page, chapter, heading)


def _chapter_menu_visible(pg) -> bool:
    return pg.evaluate("""() => [...document.querySelectorAll('nav.bd-docs-nav a.reference')]
        .some(a => { const r = a.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= innerWidth
                     && getComputedStyle(a).visibility === 'visible'; })""")


def test_the_sidebar_button_opens_the_chapter_menu_on_a_phone(phone, book_url):
    phone.goto(f"{book_url}/{CHAPTERS[1].stem}.html")
    phone.wait_for_load_state("load")
    assert not _chapter_menu_visible(phone), "the chapter menu is open before the button is pressed"
    phone.get_by_role("button", name="Toggle primary sidebar").click()
    phone.wait_for_timeout(500)
    assert _chapter_menu_visible(phone), "Toggle primary sidebar did not open the chapter menu at 390 px"
    with phone.expect_navigation():
        phone.locator("nav.bd-docs-nav a.reference").get_by_text(CHAPTERS[2].title, exact=True).click()
    assert phone.url == f"{book_url}/{CHAPTERS[2].stem}.html"


@pytest.mark.parametrize("chapter_page", [1], ids=[CHAPTERS[1].stem], indirect=True)
def test_the_sidebar_button_hides_and_shows_the_sidebar_at_1280_px(chapter_page):
    page = chapter_page   # chapter 01's page, after its layout test
    page.set_viewport_size(DESKTOP)   # where that test failed on the phone, it did not get to resize back
    button = page.get_by_role("button", name="Toggle primary sidebar")
    assert _chapter_menu_visible(page)
    button.click()
    page.wait_for_timeout(500)
    assert not _chapter_menu_visible(page), "Toggle primary sidebar did not hide the sidebar at 1280 px"
    button.click()
    page.wait_for_timeout(500)
    assert _chapter_menu_visible(page)


def _folded_heading(chapter) -> str | None:
    """The heading of the chapter's first section collapsed in JupyterLab, or None."""
    path = PATHS.notebooks / chapter.file
    if not path.exists() or not collapsed_cells(nb := nbformat.read(path, 4)):
        return None
    return next(cell.source.splitlines()[0].lstrip("# ") for cell in nb.cells if cell.metadata.get(COLLAPSED))


def _assert_folded_and_opens(page, chapter, heading: str) -> None:
    """A section collapsed in JupyterLab ("How sure are we?") is folded on the page and opens with a click."""
    section = page.locator("section", has=page.locator(f"> h2:has-text('{heading}'), > h3:has-text('{heading}')"))
    fold = section.locator("> details.vrs-fold")
    assert fold.count() == 1, f"{chapter.file}: the section {heading!r} is not folded"
    assert fold.get_attribute("open") is None
    inside = fold.locator("> :not(summary)").first
    assert not inside.is_visible()
    fold.locator("> summary").click()
    assert inside.is_visible()


def test_the_search_page_opened_from_disk_shows_the_text_around_each_match(browser, book_url):
    # book_url: the fixture builds the book when it is missing or stale; the page itself is read from disk
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        pg = context.new_page()
        pg.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                 else route.abort())
        pg.goto(f"file://{PATHS.out}/search.html?q=unigram")
        pg.wait_for_selector("#search-results li", timeout=30_000)
        pg.wait_for_function("() => [...document.querySelectorAll('#search-results li')]"
                             ".some(li => li.querySelector('p.context'))", timeout=30_000)
        contexts = pg.locator("#search-results li p.context").all_inner_texts()
        assert any("unigram" in c.lower() for c in contexts), contexts
    finally:
        context.close()
