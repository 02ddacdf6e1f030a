"""The course book (`make book`): Sphinx + myst-nb rendering book.toml's chapters. Checks without a browser.

What the book must be: every chapter of book.toml, in its order, with its title, under numbered titles; an index
generated from book.toml (questions, goals); the committed outputs rendered, never re-executed; widgets replaced by a
note, their static figure following; warnings are errors; a missing notebook stops the build and names the file;
the output stays out of pytest's and nbval's collection. tests/test_browser.py looks at the built pages in Chromium.
"""
import base64
import io
import re
import runpy
import tomllib
from pathlib import Path

import nbformat
import pytest

from vrs_edu.course.book import BOOK_TOML, chapters
from vrs_edu.course.book_build import (CONF_DIR, WIDGET_MIME, WIDGET_NOTE, BookPaths, build, sphinx_command,
                                       stage_notebook)

ROOT = Path(__file__).resolve().parents[1]
V4 = nbformat.v4


# ------------------------------------------------------------------------------------------- a tiny book to build

def _png() -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=40)
    ax.plot([0, 1, 2], [0, 1, 4])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _notebook(title: str, body: str = "Some prose.") -> nbformat.NotebookNode:
    widget = V4.new_code_cell("# NBVAL_IGNORE_OUTPUT\nw = make_widget()\nw", execution_count=2, outputs=[
        V4.new_output("execute_result", execution_count=2, data={
            WIDGET_MIME: {"model_id": "abc", "version_major": 2, "version_minor": 0},
            "text/plain": "interactive(children=(FloatSlider(value=1.0),))"})])
    figure = V4.new_code_cell("show_default_figure()", execution_count=3, outputs=[
        V4.new_output("display_data", data={"image/png": _png(), "text/plain": "<Figure size 80x60 with 1 Axes>"}),
        V4.new_output("stream", name="stdout", text="default ratio 1.45\n")])
    nb = V4.new_notebook(cells=[
        V4.new_markdown_cell(f"# {title}\n\n{body}\n\n$$h^{{(l+1)}} = h^{{(l)}} + f(h^{{(l)}})$$"),
        V4.new_code_cell("print(1 + 1)", execution_count=1,
                         outputs=[V4.new_output("stream", name="stdout", text="2\n")]),
        V4.new_markdown_cell("## A widget"), widget, figure])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                            "version_minor": 0}}
    return nb


TINY_CHAPTERS = [  # titles and questions with characters Markdown would read as markup
    ("00_start.ipynb", "00 · Start", "Does V_1 reach layer *L*?", ["Read [x0] at depth", "Count `tokens`"]),
    ("01_next.ipynb", "01 · Next", "What does <V> carry?", ["Measure a_1 and b_2"]),
]


TINY_KOREAN = {  # file -> the Korean title, question and goals (book.toml's *_ko keys)
    "00_start.ipynb": ("00 · 시작", "V_1은 *L*층에 닿을까요?", ["깊이에서 [x0]을 읽습니다", "`토큰`을 셉니다"]),
    "01_next.ipynb": ("01 · 다음", "<V>는 무엇을 나를까요?", ["a_1과 b_2를 잽니다"]),
}


def _tiny_book(tmp_path: Path, *, write: tuple[int, ...] = (0, 1), appendix: bool = False,
               korean: tuple[int, ...] | None = None) -> Path:
    """A two-chapter book.toml and its notebooks in ``tmp_path``. ``korean``: the chapters that get a Korean
    notebook in notebooks/ko/ (the book.toml then has every chapter's Korean texts); None: an English-only book."""
    lines = ['[book]', 'title = "Tiny Book"', 'authors = ["someone"]', 'description = "A test book."',
             'language = "en"', 'src = "notebooks"', '[build]', 'build-dir = "_build/book"',
             '[preprocessor.course]', 'command = "true"']
    if korean is not None:
        lines += ['title_ko = "작은 책"', 'description_ko = "시험용 책입니다."']
    for file, title, question, goals in TINY_CHAPTERS:
        lines += ['[[preprocessor.course.chapters]]', f'file = "{file}"', f'title = "{title}"',
                  f'question = "{question}"', "goals = [" + ", ".join(f'"{g}"' for g in goals) + "]",
                  "budget_s = 30"]
        if korean is not None:
            title_ko, question_ko, goals_ko = TINY_KOREAN[file]
            lines += [f'title_ko = "{title_ko}"', f'question_ko = "{question_ko}"',
                      "goals_ko = [" + ", ".join(f'"{g}"' for g in goals_ko) + "]"]
    if appendix:
        lines += ['[[preprocessor.course.appendices]]', 'file = "00a_start_evidence.ipynb"',
                  'title = "Appendix 00 · The evidence"', 'chapter = "00"', 'budget_s = 30']
    (tmp_path / "book.toml").write_text("\n".join(lines) + "\n")
    (tmp_path / "notebooks").mkdir()
    for i in write:
        file, title, *_ = TINY_CHAPTERS[i]
        nbformat.write(_notebook(title), tmp_path / "notebooks" / file)
    if appendix:
        nbformat.write(_notebook("Appendix 00 · The evidence", "Back to [chapter 00](00_start.ipynb)."),
                       tmp_path / "notebooks" / "00a_start_evidence.ipynb")
    for i in korean or ():
        file = TINY_CHAPTERS[i][0]
        (tmp_path / "notebooks" / "ko").mkdir(exist_ok=True)
        nbformat.write(_notebook(TINY_KOREAN[file][0], "한국어 설명. [다음 장](01_next.ipynb)을 보십시오."),
                       tmp_path / "notebooks" / "ko" / file)
    return tmp_path / "book.toml"


# ------------------------------------------------------------------------------------------------------- tests

def test_conf_takes_title_authors_and_language_from_book_toml(tmp_path, monkeypatch):
    monkeypatch.setenv("VRS_EDU_BOOK_TOML", str(_tiny_book(tmp_path)))
    conf = runpy.run_path(str(CONF_DIR / "conf.py"))
    assert (conf["project"], conf["author"], conf["language"]) == ("Tiny Book", "someone", "en")
    assert conf["root_doc"] == "index"
    assert "myst_nb" in conf["extensions"] and conf["html_theme"] == "sphinx_book_theme"
    assert conf["nb_execution_mode"] == "off", "the book renders the committed outputs; CI executes under nbval"
    assert conf["nb_ipywidgets_js"] == {}, "no widget JavaScript from a CDN: the book must work offline"


def test_conf_reads_the_course_book_toml_by_default(monkeypatch):
    monkeypatch.delenv("VRS_EDU_BOOK_TOML", raising=False)
    with BOOK_TOML.open("rb") as f:
        title = tomllib.load(f)["book"]["title"]
    assert runpy.run_path(str(CONF_DIR / "conf.py"))["project"] == title


def test_sphinx_runs_with_warnings_as_errors_a_fresh_environment_and_the_package_conf():
    cmd = sphinx_command(BookPaths.from_toml(BOOK_TOML))
    assert {"-W", "--keep-going", "-E"} <= set(cmd)
    assert cmd[cmd.index("-c") + 1] == str(CONF_DIR)


def test_book_output_stays_out_of_pytest_and_nbval_collection():
    with (ROOT / "pyproject.toml").open("rb") as f:
        ini = tomllib.load(f)["tool"]["pytest"]["ini_options"]
    paths = BookPaths.from_toml(BOOK_TOML)
    for p in (paths.out, paths.stage, paths.doctrees):  # all hold copies of the notebooks
        top = p.relative_to(ROOT).parts[0]
        assert top in ini["norecursedirs"], f"{p} is not under a norecursedirs entry"
        assert top not in ini["testpaths"] and top != "notebooks", f"{p} is inside a collected folder"


def test_chapter_titles_carry_their_number_for_the_navigation():
    for c in chapters():
        assert c.title.startswith(f"{c.number} · "), f"{c.file}: title {c.title!r} must start with '{c.number} · '"


def test_staged_notebook_shows_a_note_instead_of_the_widget_and_keeps_every_other_output(tmp_path):
    src, dst = tmp_path / "in.ipynb", tmp_path / "out" / "in.ipynb"
    nbformat.write(_notebook("00 · Start"), src)
    assert stage_notebook(src, dst) == 1
    before, after = nbformat.read(src, 4), nbformat.read(dst, 4)
    widget_out = after.cells[3].outputs[0]
    assert WIDGET_MIME not in widget_out.data and widget_out.data["text/markdown"] == WIDGET_NOTE
    assert "widgets" not in after.metadata
    assert after.cells[4].outputs == before.cells[4].outputs, "the static figure after the widget is untouched"
    assert [c.source for c in after.cells] == [c.source for c in before.cells]


@pytest.mark.parametrize("chapter", chapters(), ids=lambda c: c.stem)
def test_every_widget_is_followed_by_its_static_figure(chapter):
    path = ROOT / "notebooks" / chapter.file
    if not path.exists():
        pytest.skip(f"{path.name} not written yet (tests/test_manifest.py fails for it)")
    cells = [c for c in nbformat.read(path, 4).cells if c.cell_type == "code"]
    for i, cell in enumerate(cells):
        if any(WIDGET_MIME in o.get("data", {}) for o in cell.outputs):
            following = cells[i + 1].outputs if i + 1 < len(cells) else []
            assert any("image/png" in o.get("data", {}) for o in following), \
                f"{chapter.file}: code cell {i} shows a widget, but the next code cell shows no static figure"


def test_a_missing_notebook_stops_the_build_and_names_the_file(tmp_path, capfd):
    book = _tiny_book(tmp_path, write=(0,))
    assert build(book, draft=False) != 0
    err = capfd.readouterr().err
    assert "notebooks/01_next.ipynb" in err and "00_start" not in err
    assert not (tmp_path / "_build" / "book" / "index.html").exists()


@pytest.fixture(scope="module")
def tiny_built(tmp_path_factory):
    """One tiny book with everything a build that succeeds must render, built once for the tests that read it (a
    Sphinx build is seconds): its two chapters, an appendix, a citation of the course's first claim (Zhou et al.) in
    chapter 01, and there too links to glossary terms, a second citation, computed prose and a collapsed section.
    Returns the build's output folder."""
    from vrs_edu.course.apparatus import COLLAPSED

    root = tmp_path_factory.mktemp("tiny")
    book = _cite_in_chapter(root, "zhou2025valueresidual", appendix=True)
    nb_path = root / "notebooks" / "01_next.ipynb"
    nb = nbformat.read(nb_path, 4)
    nb.cells[0].source += ("\n\nThe [residual stream](#glossary:residual-stream) is a sum "
                           "([Elhage et al., 2021](#cite:elhage2021framework)).")
    heading = V4.new_markdown_cell("## How sure are we?")
    heading.metadata[COLLAPSED] = True
    prose = "The [logit lens](#glossary:logit-lens) reads every layer."     # computed prose, a Markdown output
    nb.cells += [V4.new_code_cell("say(...)", outputs=[V4.new_output("display_data", data={
        "text/markdown": prose, "text/plain": prose})]), heading, V4.new_markdown_cell("The standard errors.")]
    nbformat.write(nb, nb_path)
    assert build(book, draft=False) == 0
    return root / "_build" / "book"


@pytest.mark.slow
def test_tiny_book_builds_with_chapters_in_order_goals_offline_math_and_search(tiny_built):
    out = tiny_built
    index = (out / "index.html").read_text()
    # the index, generated from book.toml: chapters in order, linked, with their questions and goals verbatim
    positions = [index.index(f'href="{Path(f).stem}.html"') for f, *_ in TINY_CHAPTERS]
    assert positions == sorted(positions)
    for _, title, question, goals in TINY_CHAPTERS:
        for text in (title, question, *goals):
            html_text = text.replace("<", "&lt;").replace(">", "&gt;")
            assert html_text in index, f"index lacks {text!r}"
    page = (out / "00_start.html").read_text()
    assert "<title>00 · Start &#8212; Tiny Book</title>" in page
    assert "Interactive widget" in page and "default ratio 1.45" in page and "<img" in page
    assert "01_next.html" in page, "the next-chapter link"
    assert "_static/mathjax/tex-chtml.js" in page and (out / "_static/mathjax/tex-chtml.js").exists()
    assert "cdn." not in page, "every script and style comes from the book itself"
    assert (out / "searchindex.js").exists()


@pytest.mark.slow
def test_an_appendix_comes_after_the_chapters_and_links_back_to_its_chapter(tiny_built):
    out = tiny_built
    index = (out / "index.html").read_text()
    assert index.index('href="01_next.html"') < index.index('href="00a_start_evidence.html"')
    assert "Appendices" in index and "Appendix 00 · The evidence" in index
    page = (out / "00a_start_evidence.html").read_text()
    assert 'href="00_start.html"' in page, "the appendix's link to its chapter resolves to the chapter's page"


@pytest.mark.slow
def test_a_sphinx_warning_fails_the_build(tmp_path, capfd):
    book = _tiny_book(tmp_path)
    nb_path = tmp_path / "notebooks" / "01_next.ipynb"
    nb = nbformat.read(nb_path, 4)
    nb.cells[0].source += "\n\nSee {ref}`a-label-that-does-not-exist`."
    nbformat.write(nb, nb_path)
    assert build(book, draft=False) != 0
    assert "a-label-that-does-not-exist" in capfd.readouterr().err


@pytest.mark.slow
def test_draft_build_leaves_out_unwritten_chapters_and_says_so(tmp_path, capfd):
    book = _tiny_book(tmp_path, write=(0,))
    assert build(book, draft=True) == 0
    out = tmp_path / "_build" / "book"
    assert "01_next.ipynb" in capfd.readouterr().out
    assert (out / "00_start.html").exists() and not (out / "01_next.html").exists()
    assert "(not written yet)" in (out / "index.html").read_text()


# --------------------------------------------------------------------------------------------- the references page

def _cite_in_chapter(tmp_path: Path, key: str, appendix: bool = False) -> Path:
    book = _tiny_book(tmp_path, appendix=appendix)
    nb_path = tmp_path / "notebooks" / "01_next.ipynb"
    nb = nbformat.read(nb_path, 4)
    nb.cells[0].source += f"\n\nLater layers re-read V_1 {{cite:p}}`{key}`."
    nbformat.write(nb, nb_path)
    return book


def test_the_index_links_the_references_page_after_the_chapters():
    from vrs_edu.course.book_build import REFERENCES, render_index

    index = render_index({"book": {"title": "T"}}, [], set())
    assert REFERENCES.is_file() and f"]({REFERENCES.name})" in index
    assert index.index(":caption: Chapters") < index.index(REFERENCES.stem + "\n```")


@pytest.mark.slow
def test_the_references_page_lists_every_entry_and_a_chapter_citation_links_to_it(tiny_built):
    from pybtex.database import parse_file

    out = tiny_built
    refs = (out / "references.html").read_text()
    for key, entry in parse_file(str(CONF_DIR / "references.bib")).entries.items():
        where = f"arXiv:{entry.fields['eprint']}" if "eprint" in entry.fields else entry.fields.get("url")
        assert where is None or where in refs, f"{key}: {where} not on the references page"
        assert entry.persons["author"][0].last_names[0].strip("{}") in refs, key
    page = (out / "01_next.html").read_text()
    assert 'href="references.html#' in page and "Zhou <em>et al.</em>" in page
    assert 'href="references.html"' in (out / "index.html").read_text()


@pytest.mark.slow
def test_a_citation_of_a_source_not_in_the_bibliography_fails_the_build(tmp_path, capfd):
    assert build(_cite_in_chapter(tmp_path, "nobody2099unknown"), draft=False) != 0
    assert "nobody2099unknown" in capfd.readouterr().err


# ------------------------------------------------------------- glossary and citation links, folded sections, search

def test_chapter_links_become_sphinx_roles_and_an_unknown_term_is_named():
    from vrs_edu.course.book_build import book_markdown

    terms = {"residual-stream": "residual stream", "qk-norm": "QK-norm"}
    src = ("The [residual stream](#glossary:residual-stream) adds ([Elhage et al., 2021](#cite:elhage2021framework)); "
           "[QK-norm](#glossary:qk-norm) bounds the scores.")
    assert book_markdown(src, terms) == (
        "The {term}`residual stream <residual stream>` adds ({cite:t}`elhage2021framework`); "
        "{term}`QK-norm <QK-norm>` bounds the scores.")
    with pytest.raises(ValueError, match=r"no term for the link \[logit lens\]\(#glossary:logit-lens\)"):
        book_markdown("[logit lens](#glossary:logit-lens)", terms)


def test_the_glossary_defines_its_terms_and_slugs_are_unique():
    from vrs_edu.course.book_build import glossary_terms, term_slug

    terms = glossary_terms()
    assert "residual stream" in terms and "RMSNorm" in terms and "held-out R²" in terms
    assert term_slug("QK-norm") == "qk-norm" and term_slug("held-out R²") == "held-out-r²"
    assert len({term_slug(t) for t in terms}) == len(terms)


def test_a_collapsed_heading_is_marked_for_folding_in_the_staged_notebook(tmp_path):
    from vrs_edu.course.apparatus import COLLAPSED
    from vrs_edu.course.book_build import COLLAPSE_MARKER

    nb = _notebook("00 · Start")
    heading = V4.new_markdown_cell("## How sure are we?")
    heading.metadata[COLLAPSED] = True
    nb.cells.insert(2, heading)
    nb.cells.insert(3, V4.new_markdown_cell("## Not collapsed"))
    nbformat.write(nb, tmp_path / "in.ipynb")
    stage_notebook(tmp_path / "in.ipynb", tmp_path / "out.ipynb")
    staged = nbformat.read(tmp_path / "out.ipynb", 4)
    assert staged.cells[2].source == "## How sure are we?\n\n" + COLLAPSE_MARKER
    assert COLLAPSE_MARKER not in staged.cells[3].source


def test_computed_prose_links_its_terms_in_the_staged_notebook(tmp_path):
    nb = _notebook("00 · Start")
    prose = "The [unigram loss](#glossary:unigram-loss) is 3.238 nats."
    nb.cells.append(V4.new_code_cell("say(...)", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/markdown": prose, "text/plain": prose})]))
    nbformat.write(nb, tmp_path / "in.ipynb")
    stage_notebook(tmp_path / "in.ipynb", tmp_path / "out.ipynb")
    data = nbformat.read(tmp_path / "out.ipynb", 4).cells[-1].outputs[0].data
    assert data["text/markdown"] == "The {term}`unigram loss <unigram loss>` is 3.238 nats."
    assert data["text/plain"] == prose          # what nbval compares is left alone


def test_search_texts_keep_each_pages_main_text_and_section_ids(tmp_path):
    from vrs_edu.course.book_build import SEARCH_TEXTS, write_search_texts

    (tmp_path / "_static").mkdir()
    (tmp_path / "01_a.html").write_text(
        '<html><body><nav>menu</nav><main role="main"><section id="the-sum"><h1>The sum'
        '<a class="headerlink" href="#the-sum">#</a></h1><p>h<sub>L</sub> is a sum</p><script>x()</script>'
        '<dl><dt>term</dt><dd>definition</dd></dl></section></main></body></html>')
    (tmp_path / "search.html").write_text('<main role="main">search page</main>')
    js = write_search_texts(tmp_path).read_text()
    assert js.startswith("window.VRS_PAGES = ") and (tmp_path / SEARCH_TEXTS).exists()
    import json
    pages = json.loads(js.removeprefix("window.VRS_PAGES = ").rstrip(";\n"))
    assert list(pages) == ["01_a.html"]
    text = pages["01_a.html"]
    assert text == '<div role="main"><section id="the-sum"> The sum hL is a sum term definition</section></div>'


@pytest.mark.slow
def test_tiny_book_links_terms_and_citations_and_folds_a_collapsed_section(tiny_built):
    out = tiny_built
    page = (out / "01_next.html").read_text()
    assert 'href="glossary.html#term-residual-stream"' in page
    assert 'href="glossary.html#term-logit-lens"' in page
    assert 'href="references.html#' in page and "Elhage" in page
    assert 'class="vrs-collapsed"' in page and "_static/course.js" in page
    assert (out / "glossary.html").exists() and "residual stream" in (out / "glossary.html").read_text()
    assert "The standard errors." in (out / "_static" / "vrs_pages.js").read_text()


# ------------------------------------------------------------------------------------- the Korean book (한국어판)

SWITCH = re.compile(r'<a class="vrs-language-switch[^"]*" href="([^"]+)"\s+hreflang="(\w+)"')


def _switch(page: Path) -> tuple[str, str]:
    """The href and language of a built page's language switch (fails when the page has none)."""
    m = SWITCH.search(page.read_text(encoding="utf-8"))
    assert m, f"{page} has no language switch"
    return m.group(1), m.group(2)


def test_the_switch_leads_to_the_same_page_or_the_other_home_page():
    from vrs_edu.course.book_build import switch_link

    to_ko = {"prefix": "ko/", "pages": ["01_a", "index"], "lang": "ko", "label": "한국어"}
    assert switch_link("01_a", to_ko) == {"href": "ko/01_a.html", "label": "한국어", "lang": "ko"}
    assert switch_link("setup", to_ko)["href"] == "ko/index.html"        # a page the Korean book lacks
    assert switch_link("sub/page", to_ko)["href"] == "../ko/index.html"   # relative to a page in a folder


def test_a_book_without_korean_notebooks_is_built_in_english_only(tmp_path):
    from vrs_edu.course.book_build import editions

    assert editions(_tiny_book(tmp_path)) == ("en",)
    assert editions(BOOK_TOML) == ("en", "ko")


def test_a_korean_book_without_a_chapters_korean_texts_names_the_chapter_and_field(tmp_path, capfd):
    book = _tiny_book(tmp_path, korean=(0, 1))
    book.write_text(book.read_text().replace('question_ko = "<V>는 무엇을 나를까요?"\n', ""))
    assert build(book, draft=False) != 0
    assert "chapter #1 (01_next.ipynb) lacks ['question_ko']" in capfd.readouterr().err


@pytest.mark.slow
def test_tiny_korean_book_builds_in_korean_with_a_switch_on_every_page_both_ways(tmp_path):
    assert build(_tiny_book(tmp_path, korean=(0, 1)), draft=False) == 0
    out = tmp_path / "_build" / "book"
    index = (out / "ko" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="ko"' in index and "<title>작은 책 &#8212; 작은 책</title>" in index and "시험용 책입니다." in index
    for title, question, goals in TINY_KOREAN.values():
        for text in (title, question, *goals):
            assert text.replace("<", "&lt;").replace(">", "&gt;") in index, f"Korean index lacks {text!r}"
    page = (out / "ko" / "00_start.html").read_text(encoding="utf-8")
    assert '<html lang="ko"' in page and "<title>00 · 시작 &#8212; 작은 책</title>" in page
    assert "한국어 설명" in page and 'href="01_next.html"' in page, "a Korean chapter links the Korean chapter"
    assert (out / "ko" / "glossary.html").exists() and (out / "ko" / "references.html").exists()
    assert '<html lang="en"' in (out / "00_start.html").read_text(encoding="utf-8")
    # every page of both books has a switch whose link resolves; a chapter's leads to the same chapter
    english, korean = sorted(out.glob("*.html")), sorted((out / "ko").glob("*.html"))
    assert len(english) > 5 and len(korean) > 5
    for page in english + korean:
        href, lang = _switch(page)
        assert (page.parent / href).resolve().is_file(), f"{page.relative_to(out)}: switch to {href} is broken"
        assert lang == ("ko" if page in english else "en")
    assert _switch(out / "01_next.html")[0] == "ko/01_next.html"
    assert _switch(out / "ko" / "01_next.html")[0] == "../01_next.html"
    assert _switch(out / "ko" / "glossary.html")[0] == "../glossary.html"
    assert _switch(out / "setup.html")[0] == "ko/index.html", "a guide (English only) leads to the Korean home page"


@pytest.mark.slow
def test_a_korean_chapter_without_its_notebook_is_named_and_left_out(tmp_path, capfd):
    assert build(_tiny_book(tmp_path, korean=(0,)), draft=False) == 0
    said = capfd.readouterr().out
    assert "notebooks/ko/01_next.ipynb" in said and "notebooks/ko/00_start.ipynb" not in said
    out = tmp_path / "_build" / "book"
    assert (out / "ko" / "00_start.html").exists() and not (out / "ko" / "01_next.html").exists()
    assert "01 · 다음 (번역 중)" in (out / "ko" / "index.html").read_text(encoding="utf-8")
    assert _switch(out / "01_next.html")[0] == "ko/index.html"
    # the Korean chapter's link to the chapter left out leads to the English page
    assert 'href="../01_next.html"' in (out / "ko" / "00_start.html").read_text(encoding="utf-8")
