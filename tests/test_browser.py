"""The course seen the way a person sees it: the built book and JupyterLab, in Debian's headless Chromium.

    make browser        # = pytest -q -p no:xdist -m browser tests   (make test installs chromium first)

Book: serve the built book (`make book`; built here if missing or older than its inputs) on a free loopback port
and check its index (every chapter of book.toml in the sidebar, in order), its references page, a Korean page and its
language switch, and its search. Each chapter's page is checked in tests/test_browser_layout.py, on one page load
that its navigation checks (reached through the sidebar: title, images, math, no traceback or error, no 404, nothing
asked of the network, previous/next in book.toml's order) and its layout checks share. A screenshot of each page
goes to _build/screenshots/ (what the window shows; the whole page with VRS_EDU_SCREENSHOTS=full).

JupyterLab: the `lab_url` fixture starts `jupyter lab` (tokenless, loopback only, a test server) on a copy of the
notebooks, for tests/test_browser_unexecuted.py: it opens every chapter as stored, then runs chapter 00 and moves its
widget with the keyboard (one server and one JupyterLab page for all of it: each start is seconds of CPU).

Driven with the Python playwright package and /usr/bin/chromium (never `playwright install`); skipped, saying why,
when either is missing.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from vrs_edu.course.book import BOOK_TOML, appendices, book_meta, chapters, load_book
from vrs_edu.course.book_build import BACK_MATTER, CONF_DIR, GUIDES, BookPaths, build

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "_build" / "screenshots"
LAB_CSS = "vrs_edu/course/jupyterlab/custom.css"      # the course's JupyterLab style sheet (see the Makefile's lab)
PATHS = BookPaths.from_toml(BOOK_TOML)
BOOK_TITLE = load_book()["book"]["title"]
CHAPTERS = chapters()
APPENDICES = appendices()   # after the chapters in the sidebar and the previous/next links
KO_PATHS = BookPaths.from_toml(BOOK_TOML, "ko")   # the Korean book (한국어판), in the English book's ko/ folder
# The known gaps of the layout checks (test_browser_layout, test_browser_unexecuted): none today (03, 04 and 06 were
# re-drawn for the page in the learner-first rewrite). A chapter whose stored figures are wider than JupyterLab's
# output area at 1280 px or the phone's column may be listed here (a non-strict xfail) until it is re-drawn.
FIGURES_PENDING: set[str] = set()
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _why_skip() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} not found: install Debian's chromium (`make browser-deps`, needs root) to run browser tests"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing: pip install -e '.[browser]' (never `playwright install`)"
    return None


pytestmark = [pytest.mark.browser, pytest.mark.skipif(_why_skip() is not None, reason=_why_skip() or "")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------------------------------- fixtures

def _book_inputs() -> list[Path]:
    """What the built book (both editions) is made of: rebuilt when any of it is newer."""
    nbs = [folder / c.file for folder in (PATHS.notebooks, KO_PATHS.notebooks) for c in (*CHAPTERS, *APPENDICES)]
    return [BOOK_TOML, CONF_DIR / "conf.py", CONF_DIR / "references.bib", *BACK_MATTER, *sorted(CONF_DIR.glob("*.md")),
            *sorted((CONF_DIR / "_static").iterdir()), *sorted((CONF_DIR / "_templates").iterdir()),
            Path(build.__code__.co_filename)] + [p for p in nbs if p.exists()]


@pytest.fixture(scope="session")
def book_url():
    """The built book served on a free loopback port; built first if missing or older than any input."""
    index = PATHS.out / "index.html"
    if not index.exists() or index.stat().st_mtime < max(p.stat().st_mtime for p in _book_inputs()):
        rc = build()
        if rc != 0:
            pytest.fail(f"`make book` failed (exit status {rc}); its messages are in the captured output above")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(PATHS.out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(10)


class PageLog:
    """What happened while a page was open: failed responses, blocked outside requests, script errors."""

    def __init__(self):
        self.bad_responses, self.outside, self.errors = [], [], []


@contextlib.contextmanager
def book_page(browser, book_url: str):
    """A page for the built book in a context of its own, 1280 px wide. The book must be self-contained: a request
    for anything else is refused and recorded in ``page.log``, with failed responses and script errors. A context
    manager, not only the fixture below, so that tests/test_browser_layout.py can keep a chapter's page for several
    tests (module scope)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    log = PageLog()

    def only_the_book(route):
        if route.request.url.startswith(book_url + "/"):
            route.continue_()
        else:
            log.outside.append(route.request.url)
            route.abort()

    pg.route("**/*", only_the_book)
    pg.on("response", lambda r: r.status >= 400 and log.bad_responses.append(f"{r.status} {r.url}"))
    pg.on("pageerror", lambda e: log.errors.append(f"script error: {e}"))
    pg.on("console", lambda m: m.type == "error" and log.errors.append(f"console error: {m.text}"))
    pg.log = log
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture
def page(browser, book_url):
    with book_page(browser, book_url) as pg:
        yield pg


# A screenshot is for a person to look at, never a check. Of the window by default (0.1 s): Chromium takes 1-2 s
# to draw a whole chapter page (measured 2026-12-06: 2.1 s at 1280 px, 0.9 s at 390 px), some 30 s of each
# `make test` for the chapters' page loads. VRS_EDU_SCREENSHOTS=full: the whole page, as before.
FULL_PAGE_SCREENSHOTS = os.environ.get("VRS_EDU_SCREENSHOTS", "").lower() == "full"


def _screenshot(pg, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=FULL_PAGE_SCREENSHOTS)


# ------------------------------------------------------------------------------------------------------ book

SIDEBAR_LINKS = "nav.bd-docs-nav ul.bd-sidenav:not(.bd-sidenav__home-link) li.toctree-l1 > a.reference"
ARTICLE = "article.bd-article"


def _sidebar_titles(pg) -> list[str]:
    return [t.strip() for t in pg.locator(SIDEBAR_LINKS).all_inner_texts()]


def test_index_page_lists_every_chapter_in_book_toml_order(page, book_url):
    response = page.goto(f"{book_url}/index.html")
    assert response.status == 200
    assert page.title().startswith(BOOK_TITLE)
    page.wait_for_load_state("networkidle")
    _screenshot(page, "book_index")
    missing = [c.file for c in CHAPTERS if not (PATHS.notebooks / c.file).exists()]
    # Sphinx typesets quotes (smartquotes: ' -> ’); compare with the sources' plain ASCII quotes.
    plain = str.maketrans("‘’“”", "''\"\"")
    guides = [p.read_text().splitlines()[0].removeprefix("# ") for p in GUIDES]   # the pages the README became
    assert [t.translate(plain) for t in _sidebar_titles(page)] == \
        [c.title for c in CHAPTERS] + [a.title for a in APPENDICES] + ["Glossary", "References"] + guides, \
        f"the sidebar must list book.toml's chapters in order, then its appendices, the glossary, the references " \
        f"page and the guides (notebooks missing: {missing or 'none'})"
    article = page.locator(ARTICLE).inner_text().translate(plain)
    for c in CHAPTERS:
        assert c.question in article and all(g in article for g in c.goals), f"index lacks {c.file}'s question/goals"
    assert not page.log.bad_responses and not page.log.outside and not page.log.errors, vars(page.log)


def test_references_page_through_the_navigation(page, book_url):
    page.goto(f"{book_url}/index.html")
    with page.expect_navigation():
        page.locator(SIDEBAR_LINKS).get_by_text("References", exact=True).click()
    page.wait_for_load_state("networkidle")
    assert page.url == f"{book_url}/references.html"
    assert page.title() == f"References — {BOOK_TITLE}"
    text = page.locator(ARTICLE).inner_text()
    assert "Value residual learning" in text and "arXiv:2410.17897" in text  # ResFormer, the course's first claim
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), "sideways scrolling"
    assert not page.log.bad_responses and not page.log.outside and not page.log.errors, vars(page.log)


def test_a_korean_page_is_in_korean_and_its_switch_leads_to_the_english_page_and_back(page, book_url):
    built = [c for c in chapters(lang="ko") if (KO_PATHS.out / f"{c.stem}.html").exists()]
    assert built, f"the Korean book has no chapter page in {KO_PATHS.out}: rebuild it with `make book`"
    korean = built[min(1, len(built) - 1)]                  # chapter 01 when it is there
    (english,) = [c for c in CHAPTERS if c.file == korean.file]
    page.goto(f"{book_url}/ko/{korean.stem}.html")
    page.wait_for_load_state("networkidle")
    assert page.title() == f"{korean.title} — {book_meta(lang='ko')['title']}"
    assert page.evaluate("() => document.documentElement.lang") == "ko"
    h1 = page.locator(f"{ARTICLE} h1").first.evaluate(
        "h => [...h.childNodes].filter(n => !(n.classList && n.classList.contains('headerlink')))"
        ".map(n => n.textContent).join('').trim()")
    assert h1 == korean.title
    _screenshot(page, f"book_ko_{korean.stem}")
    switch = page.locator("a.vrs-language-switch")
    assert switch.is_visible() and switch.inner_text().strip() == "English"
    with page.expect_navigation():
        switch.click()
    page.wait_for_load_state("networkidle")
    assert page.url == f"{book_url}/{english.stem}.html" and page.title() == f"{english.title} — {BOOK_TITLE}"
    assert page.evaluate("() => document.documentElement.lang") == "en"
    with page.expect_navigation():
        page.locator("a.vrs-language-switch").get_by_text("한국어", exact=True).click()
    assert page.url == f"{book_url}/ko/{korean.stem}.html"
    assert not page.log.bad_responses and not page.log.outside and not page.log.errors, vars(page.log)


def test_search_finds_the_chapters(page, book_url):
    page.goto(f"{book_url}/search.html?q=residual")
    page.wait_for_selector("#search-results li a", timeout=30_000)
    found = {a.split("#")[0].split("?")[0] for a in
             page.locator("#search-results li a").evaluate_all("links => links.map(a => a.getAttribute('href'))")}
    built = {f"{c.stem}.html" for c in CHAPTERS if (PATHS.out / f"{c.stem}.html").exists()}
    assert built & found, f"searching 'residual' found {sorted(found)}, no chapter page"
    _screenshot(page, "book_search")


# ------------------------------------------------------------------------------------------------ JupyterLab

@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    """`jupyter lab` on a copy of the notebooks (it autosaves), tokenless on a free loopback port; stopped after."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    cfg = work / "config"
    (cfg / "labconfig").mkdir(parents=True)
    # the "get notified about news?" toast would cover the page (and ask the network)
    (cfg / "labconfig" / "page_config.json").write_text(
        '{"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": true}}')
    # the course's style sheet, loaded as `make lab` loads it (<config dir>/custom/custom.css, --LabApp.custom_css)
    (cfg / "custom").mkdir()
    shutil.copy(ROOT / LAB_CSS, cfg / "custom" / "custom.css")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(cfg), JUPYTER_RUNTIME_DIR=str(work / "runtime"),
               VRS_EDU_THREADS="1")
    port = _free_port()
    log = (work / "server.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser", "--allow-root", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0", "--IdentityProvider.token=",
         "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={work / 'notebooks'}",
         "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None", "--LabApp.custom_css=True",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not start:\n{(work / 'server.log').read_text()[-3000:]}")
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()  # the server shuts its kernels down on SIGTERM
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)  # its own session: the server and the kernels it started
            server.wait(10)
        log.close()
