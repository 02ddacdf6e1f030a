"""Sphinx configuration of the course book, kept inside the package and driven by book.toml.

`python -m vrs_edu.course.book_build` (`make book`) stages the chapter notebooks and an index page generated from
book.toml into a source folder, then runs Sphinx with this folder as its configuration directory (`-c`). The book's
title, authors, language and description come from book.toml's [book] table; the chapter order is the toctree of
the generated index, in book.toml's order, followed by the references page (references.md, from references.bib,
both in this folder). Notebooks are rendered with the outputs committed with them (CI executes them separately
under nbval), so building the book runs no code.

The same file configures the Korean book (한국어판): book_build sets VRS_EDU_BOOK_LANG=ko, and the title and
description come from book.toml's *_ko keys, the language is "ko" (Sphinx's and the theme's own words in Korean,
<html lang="ko">). VRS_EDU_BOOK_SWITCH (JSON, set by book_build when it builds both) describes the other edition,
from which every page gets its language switch (_templates/language-switch.html, in the article's header).
"""
import json
import os
from pathlib import Path

from vrs_edu.course.book import BOOK_TOML, book_meta
from vrs_edu.course.book_build import SWITCH_ENV, switch_link

# book_build sets these when it builds another book.toml (its tests build a tiny book) or the Korean book; the
# course's file, in English, otherwise.
_book = book_meta(Path(os.environ.get("VRS_EDU_BOOK_TOML", BOOK_TOML)), os.environ.get("VRS_EDU_BOOK_LANG", "en"))
_switch = json.loads(os.environ.get(SWITCH_ENV) or "null")

project = _book["title"]
author = ", ".join(_book["authors"])
copyright = author
language = _book["language"]
root_doc = "index"

extensions = [
    "myst_nb",                    # .ipynb and MyST markdown as Sphinx sources
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",     # MathJax 3 copied into _static, so math renders without network
    "sphinxcontrib.bibtex",       # the references page and {cite:p}`key` in chapters, from references.bib
]

# Bibliography: references.bib sits next to this file (paths are relative to the configuration directory); the
# references page (references.md, staged by book_build) lists every entry. In the text a citation reads
# "Zhou et al. [2025]", on the references page the entries are sorted by author.
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# Notebooks: render the committed, executed outputs; never execute while building.
nb_execution_mode = "off"
nb_ipywidgets_js = {}             # no widget JavaScript from a CDN: the book shows each widget's static figure
nb_output_stderr = "remove-warn"    # a stored warning never reaches a reader, and with -W it stops the build
# Computed prose (vrs_edu.viz.prose: text/markdown outputs) is read as MyST, like the chapters' own Markdown cells:
# pipe tables and $math$ render (CommonMark, the default, has neither).
nb_render_markdown_format = "myst"
myst_enable_extensions = ["dollarmath", "amsmath"]   # $...$ and $$...$$ as in Jupyter
myst_heading_anchors = 3

exclude_patterns = ["**.ipynb_checkpoints"]

html_theme = "sphinx_book_theme"
html_title = project
html_context = {"default_mode": "light"}
templates_path = ["_templates"]
html_theme_options = {
    # the language switch first, then the theme's own buttons (download, search, page contents)
    "article_header_end": ["language-switch.html", "article-header-buttons.html"],
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
}
html_show_sourcelink = False
# The page layout for code, outputs and figures (no sideways scrolling at 1280 px): see _static/course.css.
html_static_path = ["_static"]
html_css_files = ["course.css"]
# The sidebar buttons (the two themes' pinned pair leaves the visible ones without a listener) and the collapsed
# sections ("How sure are we?"): see _static/course.js.
html_js_files = ["course.js"]


def _add_language_switch(app, pagename, templatename, context, doctree):
    """Give the page its link to the other edition (``vrs_language_switch``, read by language-switch.html)."""
    context["vrs_language_switch"] = switch_link(pagename, _switch) if _switch else None


def setup(app):
    app.connect("html-page-context", _add_language_switch)
