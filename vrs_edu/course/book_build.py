"""Build the course as a static HTML book: Sphinx + myst-nb + sphinx-book-theme, driven by book.toml.

    make book                                  # = python -m vrs_edu.course.book_build
    VRS_EDU_BOOK_DRAFT=1 make book             # draft: leave out chapters whose notebook is not written yet

Two editions: the English book in ``_build/book/`` and the Korean one (한국어판) in ``_build/book/ko/``, each with a
link to the other on every page ("한국어" / "English": the same page in the other edition where it has one, its
home page otherwise; relative, so the book works from ``file://`` and from a server). The Korean book is a second
book root built from the executed Korean notebooks (``notebooks/ko/*.ipynb``, made by
:mod:`vrs_edu.course.translation`), not a Sphinx gettext translation of the English one: gettext translates only
the source text, while the Korean notebooks also carry Korean computed outputs (printed sentences, tables), figures
with Korean labels and Korean widget labels, which only executing them in Korean produces. Its index, glossary
(``glossary.ko.md``) and references pages are Korean; its chapter titles, questions and goals are book.toml's
``*_ko`` keys. A chapter whose Korean notebook does not exist yet is left out of the Korean book with a note naming
it (the build goes on), and Korean links to it lead to the English page. A book without ``notebooks/ko/`` (the
tests' tiny books) is built in English only.

What a build does, in order, for each edition:

1. **Stage** the sources in ``<build-dir>_src`` (``_build/book_src``): every chapter notebook listed in book.toml,
   in its order, plus ``index.md`` generated from book.toml (description, and per chapter its title, question,
   goals and run-time budget), and the references page ``references.md`` (its bibliography ``references.bib`` and
   both files stay next to the Sphinx configuration; the page comes after the chapters). A chapter listed in
   book.toml whose notebook is missing stops the build with a message naming the file (draft mode leaves it out and
   says so instead). The staged copy of a notebook differs from the
   committed one in one way only: a widget output, which needs a running kernel, is replaced by a note that says so;
   the cell after it already shows the widget's static default figure (a course rule).
2. **Render** with ``sphinx-build -W --keep-going -E``: every warning fails the build (after reporting all of them),
   and each build starts from a fresh environment, because an incremental build does not repeat the warnings of
   documents it does not re-read. The configuration is ``vrs_edu/course/sphinx/conf.py``; notebooks are not executed
   (``nb_execution_mode = "off"``): the book shows the outputs committed with them, which CI re-checks under nbval.

The two editions are rendered by two Sphinx processes at once (they share nothing but the configuration).

Everything lands under ``_build/``, which pytest and nbval never collect (``norecursedirs`` in pyproject.toml).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from types import MappingProxyType

import nbformat

from vrs_edu.course.apparatus import COLLAPSED, heading_level
from vrs_edu.course.book import BOOK_TOML, LANGUAGES, Appendix, Chapter, appendices, book_meta, chapters, load_book

CONF_DIR = Path(__file__).resolve().parent / "sphinx"
REFERENCES = CONF_DIR / "references.md"   # the references page: every entry of references.bib
GLOSSARY = CONF_DIR / "glossary.md"       # the glossary page: every term of the course
BACK_MATTER = (GLOSSARY, REFERENCES)      # after the chapters, in this order
# The pages that were the README's long sections (it stays learner-first): after the back matter.
GUIDES = tuple(CONF_DIR / f"{name}.md" for name in ("teachers", "setup", "package", "scaling"))
GLOSSARY_KO = CONF_DIR / "glossary.ko.md"        # the Korean book's glossary: "<Korean term> (<English term>)"
REFERENCES_KO = CONF_DIR / "references.ko.md"
BILINGUAL_TERM = re.compile(r"^(?P<ko>.+) \((?P<en>[^()]+)\)$")   # "잔차 스트림 (residual stream)"
COLLAPSE_MARKER = '<div class="vrs-collapsed"></div>'   # _static/course.js folds the section it sits in
# How a chapter's Markdown links a source and a term, readable in JupyterLab (a link whose text is the citation or
# the term) and turned into Sphinx's roles for the book, which check that the key or term exists (-W):
#   [Elhage et al., 2021](#cite:elhage2021framework)  ->  {cite:t}`elhage2021framework`  (linked to its reference)
#   [residual stream](#glossary:residual-stream)       ->  {term}`residual stream <residual stream>`
CITE_LINK = re.compile(r"\[([^\]]+)\]\(#cite:([\w-]+)\)")
GLOSSARY_LINK = re.compile(r"\[([^\]]+)\]\(#glossary:([\w-]+)\)")
# A link to a chapter notebook, for the Korean book's links to chapters it leaves out: [03장](03a_x.ipynb#part)
CHAPTER_LINK = re.compile(r"\[([^\]]+)\]\((\d\d[\w-]*)\.ipynb(#[^)\s]*)?\)")
DRAFT_ENV = "VRS_EDU_BOOK_DRAFT"
SWITCH_ENV = "VRS_EDU_BOOK_SWITCH"   # conf.py: the other edition's pages, for the language switch (JSON)
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_NOTE = ("*Interactive widget: it runs in JupyterLab (`make lab`), where moving a slider re-runs the "
               "experiment. The figure below shows its default setting.*")


class MissingChapterError(FileNotFoundError):
    """A chapter listed in book.toml has no notebook."""


@dataclass(frozen=True)
class IndexText:
    """The words of a book's generated home page, in one language (the chapters' own texts come from book.toml)."""
    chapters: str          # toctree captions and headings
    appendices: str
    back_matter: str
    guides: str
    chapters_intro: str
    question: str
    goals: str
    budget: str            # formatted with the chapter's budget_s
    not_written: str       # after the title of a chapter the book leaves out
    appendices_intro: str
    glossary_heading: str
    glossary_intro: str    # formatted with glossary= and references= (the pages' file names)
    guides_intro: str      # formatted with the four guides' names


INDEX_EN = IndexText(
    chapters="Chapters", appendices="Appendices", back_matter="Back matter", guides="Guides",
    chapters_intro="Each chapter is a notebook: read it here with the outputs it produced, or run it yourself in "
                   "JupyterLab (`make lab`), move its widgets and do its exercises.",
    question="**Question.**", goals="**Goals.**", budget="**Run-time budget.** {} s on a laptop CPU.",
    not_written=" (not written yet)",
    appendices_intro="The evidence behind a chapter that is not its lesson: run ledgers, second-corpus tables, "
                     "tuning histories. Each chapter's *How sure are we?* links its appendix.",
    glossary_heading="Glossary and references",
    glossary_intro="[The glossary]({glossary}) defines every term the course uses. [Every source the course "
                   "cites]({references}): papers with their arXiv ids, code repositories and posts.",
    guides_intro="[The teacher's guide]({0}) (assignments and grading, your own corpus), [set-up in detail]({1}), "
                 "[the package]({2}) (which chapter uses which module, how to add a variant) and "
                 "[scaling up]({3}) (a GPU, several processes, paper-sized models).")

# The guides exist in English only: the Korean home page links the English book's pages (raw HTML, because a
# Markdown link to a page outside the Sphinx project would be an unresolved reference, a warning).
INDEX_KO = IndexText(
    chapters="장", appendices="부록", back_matter="용어집과 참고문헌", guides="안내서",
    chapters_intro="각 장은 노트북입니다. 여기서 그 노트북이 만든 출력과 함께 읽거나, JupyterLab(`make lab`)에서 "
                   "`ko/` 폴더의 노트북을 직접 실행하고 위젯을 움직이고 연습 문제를 풀 수 있습니다.",
    question="**질문.**", goals="**목표.**", budget="**실행 시간 예산.** 랩톱 CPU에서 {}초.",
    not_written=" (번역 중)",
    appendices_intro="장의 수업 내용은 아니지만 그 장을 뒷받침하는 근거입니다. 실행 장부, 두 번째 말뭉치의 표, "
                     "조정 기록이 있습니다. 각 장의 *얼마나 확실한가?* 절이 부록으로 이어집니다.",
    glossary_heading="용어집과 참고문헌",
    glossary_intro="[용어집]({glossary})은 강좌에서 쓰는 모든 용어를 풀이합니다. [강좌가 인용하는 모든 출처]"
                   "({references}): arXiv 번호가 붙은 논문, 코드 저장소, 글.",
    guides_intro='안내서는 영어로만 있습니다: <a href="../{0}">교사용 안내서</a>(과제와 채점, 자신의 말뭉치), '
                 '<a href="../{1}">자세한 설치</a>, <a href="../{2}">패키지</a>(어느 장이 어느 모듈을 쓰는지, '
                 '변형을 더하는 법), <a href="../{3}">규모 키우기</a>(GPU, 여러 프로세스, 논문 크기의 모델).')


@dataclass(frozen=True)
class Edition:
    """What one language's book is made of. Both editions stage their glossary and references as ``glossary.md``
    and ``references.md``, so that a page has the same name in both (the language switch relies on it)."""
    lang: str
    subdir: str                 # under [book] src for the notebooks, under build-dir for the HTML: "" or "ko"
    glossary: Path
    references: Path
    guides: tuple[Path, ...]    # English only
    index: IndexText
    label: str                  # the switch's link text leading to this edition, in its own language
    name: str                   # the edition's name in the build's messages

    @property
    def back_matter(self) -> tuple[Path, Path]:
        return self.glossary, self.references


EDITIONS = MappingProxyType({
    "en": Edition("en", "", GLOSSARY, REFERENCES, GUIDES, INDEX_EN, "English", "English"),
    "ko": Edition("ko", "ko", GLOSSARY_KO, REFERENCES_KO, (), INDEX_KO, "한국어", "Korean"),
})


@dataclass(frozen=True)
class BookPaths:
    """Where a book's inputs and outputs live, all derived from its book.toml."""
    book_toml: Path
    notebooks: Path   # [book] src (the Korean book: its ko/ folder)
    out: Path         # [build] build-dir: the HTML site (the Korean book: its ko/ folder)
    stage: Path       # staged Sphinx sources (generated; rewritten by every build)
    doctrees: Path    # Sphinx's pickled environment
    lang: str = "en"

    @classmethod
    def from_toml(cls, book_toml: str | Path = BOOK_TOML, lang: str = "en") -> "BookPaths":
        """The English book's paths, or with ``lang="ko"`` the Korean one's: notebooks in ``<src>/ko``, HTML in
        ``<build-dir>/ko``, sources and doctrees next to the English ones (``book_ko_src``), never inside them:
        Sphinx would read a source folder's subfolders as part of its book."""
        book_toml = Path(book_toml).resolve()
        cfg = load_book(book_toml)
        root = book_toml.parent
        out = root / cfg["build"].get("build-dir", "book")
        sub = EDITIONS[lang].subdir
        suffix = f"_{lang}" if sub else ""
        return cls(book_toml, root / cfg["book"].get("src", "src") / sub, out / sub,
                   out.with_name(f"{out.name}{suffix}_src"), out.with_name(f"{out.name}{suffix}_doctrees"), lang)


def is_draft() -> bool:
    return os.environ.get(DRAFT_ENV, "").strip().lower() not in ("", "0", "false", "no")


def editions(book_toml: str | Path = BOOK_TOML) -> tuple[str, ...]:
    """The languages a book is built in: English, and every other edition whose notebook folder exists
    (``notebooks/ko/``)."""
    return tuple(lang for lang in LANGUAGES
                 if lang == "en" or BookPaths.from_toml(book_toml, lang).notebooks.is_dir())


# ---------------------------------------------------------------------------------------------------- staging

def _md_escape(text: str) -> str:
    """Escape the characters MyST would read as markup (``V_1`` must stay ``V_1``, not start an emphasis)."""
    return "".join("\\" + ch if ch in "\\`*_{}[]<>()#+!|$" else ch for ch in text)


def render_index(book: dict, chs: list[Chapter], present: set[str], apps: tuple[Appendix, ...] = (),
                 edition: Edition = EDITIONS["en"]) -> str:
    """The book's home page (MyST markdown) in ``edition``'s language: title, description, the chapter list with
    questions and goals, and the appendices. ``book["book"]`` holds the title and description (book.toml's [book],
    or :func:`vrs_edu.course.book.book_meta`).

    The hidden toctrees list the chapters, then the appendices, in book.toml's order: it is what Sphinx and the
    theme turn into the sidebar navigation and the previous/next links. Chapters and appendices not in ``present``
    (draft builds, and the Korean book's chapters not translated yet) are listed without a link.
    """
    meta, text, guides = book["book"], edition.index, edition.guides
    lines = [f"# {_md_escape(meta['title'])}", ""]
    if meta.get("description"):
        lines += [_md_escape(meta["description"]), ""]
    lines += ["```{toctree}", ":hidden:", ":maxdepth: 2", f":caption: {text.chapters}", ""]
    lines += [c.stem for c in chs if c.file in present]
    if apps:
        lines += ["```", "", "```{toctree}", ":hidden:", f":caption: {text.appendices}", ""]
        lines += [a.stem for a in apps if a.file in present]
    lines += ["```", "", "```{toctree}", ":hidden:", f":caption: {text.back_matter}", ""]
    lines += [GLOSSARY.stem, REFERENCES.stem]   # the staged names, the same in every edition
    if guides:
        lines += ["```", "", "```{toctree}", ":hidden:", f":caption: {text.guides}", ""] + [p.stem for p in guides]
    lines += ["```", "", f"## {text.chapters}", "", text.chapters_intro, ""]
    for c in chs:
        title = _md_escape(c.title)
        lines.append(f"### [{title}]({c.file})" if c.file in present else f"### {title}{text.not_written}")
        lines += ["", f"{text.question} {_md_escape(c.question)}", "", text.goals, ""]
        lines += [f"- {_md_escape(g)}" for g in c.goals]
        lines += ["", text.budget.format(c.budget_s), ""]
    if apps:
        lines += [f"## {text.appendices}", "", text.appendices_intro, ""]
        lines += [f"- [{_md_escape(a.title)}]({a.file})" if a.file in present else f"- {_md_escape(a.title)}"
                  for a in apps]
        lines.append("")
    lines += [f"## {text.glossary_heading}", "",
              text.glossary_intro.format(glossary=GLOSSARY.name, references=REFERENCES.name), "",
              f"## {text.guides}", "", text.guides_intro.format(*_guide_targets(edition)), ""]
    return "\n".join(lines)


def _guide_targets(edition: Edition) -> list[str]:
    """What the home page's guide links point at: the staged page (a Markdown link Sphinx resolves) in a book that
    has the guides, the English book's HTML page (``../setup.html``, a raw link) in one that has not."""
    return [p.name if edition.guides else p.with_suffix(".html").name for p in GUIDES]


def term_slug(term: str) -> str:
    """The fragment a chapter links a glossary term with: ``"QK-norm"`` -> ``"qk-norm"``,
    ``"held-out R²"`` -> ``"held-out-r²"``."""
    return re.sub(r"[^\w²]+", "-", term.lower()).strip("-")


def glossary_terms(path: Path = GLOSSARY) -> list[str]:
    """The terms the glossary page defines: the unindented lines of its ``{glossary}`` block, in order."""
    text = path.read_text(encoding="utf-8")
    block = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.S)
    if not block:
        raise ValueError(f"{path}: no {{glossary}} block")
    return [line.strip() for line in block.group(1).splitlines()
            if line.strip() and not line.startswith((" ", ":"))]


def linked_terms(glossary: Path = GLOSSARY) -> dict[str, str]:
    """The slug a chapter links each term of a glossary page with -> the term. A Korean entry,
    ``"잔차 스트림 (residual stream)"``, is linked by its English term's slug (``#glossary:residual-stream``): the
    Korean chapters keep the English chapters' link targets."""
    terms = {}
    for term in glossary_terms(glossary):
        bilingual = BILINGUAL_TERM.match(term) if glossary == GLOSSARY_KO else None
        terms[term_slug(bilingual.group("en") if bilingual else term)] = term
    return terms


def link_elsewhere(source: str, elsewhere: dict[str, str]) -> str:
    """Turn the Markdown links to the chapters in ``elsewhere`` (stem -> URL of its page in another edition) into
    raw HTML links to that page, keeping a ``#fragment``. For the Korean book's links to a chapter it leaves out: a
    Markdown link to a notebook that is not in the book is an unresolved reference (a warning, so an error)."""
    def link(m):
        if m.group(2) not in elsewhere:
            return m.group(0)
        return f'<a href="{escape(elsewhere[m.group(2)] + (m.group(3) or ""))}">{m.group(1)}</a>'
    return CHAPTER_LINK.sub(link, source)


def book_markdown(source: str, terms: dict[str, str]) -> str:
    """A chapter's Markdown for the book: citation links become ``{cite:t}`` (linked to the references page) and
    glossary links ``{term}`` (linked to the glossary); ``terms`` maps each slug to its term. Raises ValueError
    naming a glossary link whose term the glossary does not define."""
    def term(m):
        if m.group(2) not in terms:
            raise ValueError(f"the glossary defines no term for the link [{m.group(1)}](#glossary:{m.group(2)}); "
                             f"add it to {GLOSSARY.name} or fix the link")
        return f"{{term}}`{m.group(1)} <{terms[m.group(2)]}>`"
    source = CITE_LINK.sub(lambda m: f"{{cite:t}}`{m.group(2)}`", source)
    return GLOSSARY_LINK.sub(term, source)


def stage_notebook(src: Path, dst: Path, terms: dict[str, str] | None = None,
                   elsewhere: dict[str, str] | None = None, drop_stderr: bool = False) -> int:
    """Copy one chapter notebook for the book, replacing widget outputs by a note, and turning the glossary and
    citation links of its Markdown cells and of its Markdown outputs (computed prose) into Sphinx roles
    (:func:`book_markdown`; ``terms``: slug -> term, default the English glossary's). Links to the chapters in
    ``elsewhere`` lead to another edition's page (:func:`link_elsewhere`). With ``drop_stderr``, stored stderr
    outputs are left out and named on stdout (the Korean book; the English book keeps them, so that Sphinx
    fails on them). Returns how many widget outputs it replaced.

    A widget's view only renders next to a live kernel (or with widget JavaScript from a CDN, which an offline
    book cannot load), so the note says where it runs; the saved widget state is dropped for the same reason.
    """
    nb = nbformat.read(src, as_version=4)
    terms = linked_terms() if terms is None else terms
    replaced = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            cell.source = link_elsewhere(book_markdown(cell.source, terms), elsewhere or {})
            if cell.metadata.get(COLLAPSED) is True and heading_level(cell) is not None:
                cell.source = cell.source.rstrip() + "\n\n" + COLLAPSE_MARKER
        if cell.cell_type != "code":
            continue
        if drop_stderr:
            _drop_stderr(cell, f"{src.parent.name}/{src.name} cell {index}")
        for i, out in enumerate(cell.get("outputs", [])):
            if WIDGET_MIME in out.get("data", {}):
                cell.outputs[i] = nbformat.v4.new_output(
                    "display_data", data={"text/markdown": WIDGET_NOTE, "text/plain": WIDGET_NOTE})
                replaced += 1
            elif "text/markdown" in out.get("data", {}):   # computed prose (viz.prose.say) links terms too
                out["data"]["text/markdown"] = link_elsewhere(book_markdown(out["data"]["text/markdown"], terms),
                                                              elsewhere or {})
    nb.metadata.get("widgets", {}).pop(WIDGET_STATE, None)
    if not nb.metadata.get("widgets"):
        nb.metadata.pop("widgets", None)
    dst.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dst)
    return replaced


def _drop_stderr(cell: nbformat.NotebookNode, where: str) -> None:
    """Leave a code cell's stderr outputs out, naming each on stdout. The Korean notebooks are re-executed by
    ``make notebooks-ko`` on their own schedule; a stored stderr is already a test failure there
    (tests/test_stored_outputs.py), so the Korean book says so instead of failing the whole build."""
    for out in [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]:
        print(f"note: Korean book: left out a stderr output of {where}: {out.text.strip()[:120]!r} "
              "(tests/test_stored_outputs.py fails for it; re-execute the notebook)")
        cell.outputs.remove(out)


def _staged_pages(edition: Edition) -> tuple[Path, ...]:
    """The pages after the chapters, each with the name it is staged under: the glossary and the references page
    as ``glossary.md`` and ``references.md`` in every edition, then the guides."""
    return edition.back_matter + edition.guides


def stage(paths: BookPaths, draft: bool = False) -> list[Chapter | Appendix]:
    """Write the Sphinx sources of the book in ``paths`` into ``paths.stage`` (emptied first). Returns the chapters
    and appendices staged.

    The Korean book leaves out the chapters whose Korean notebook does not exist yet, printing their names, and
    links to them lead to the English pages.

    Raises:
        MissingChapterError: an English chapter's or appendix's notebook does not exist (unless ``draft``), naming
            the file.
        ValueError: book.toml lacks a Korean title, question or goals (the Korean book), naming chapter and field.
    """
    edition = EDITIONS[paths.lang]
    chs = chapters(paths.book_toml, paths.lang)
    apps = tuple(appendices(paths.book_toml, paths.lang))
    missing = [c for c in (*chs, *apps) if not (paths.notebooks / c.file).is_file()]
    root = paths.book_toml.parent
    names = ", ".join(str((paths.notebooks / c.file).relative_to(root)) for c in missing)
    if missing and edition.lang != "en":
        print(f"note: {edition.name} book: left out {len(missing)} chapter(s) and appendices whose notebook does "
              f"not exist yet: {names} (make notebook-{edition.lang} NB=notebooks/<file>); links to them lead to "
              "the English pages")
    elif missing and not draft:
        raise MissingChapterError(
            f"book.toml lists chapters whose notebook does not exist: {names}. Write them (and run "
            f"`make notebook NB=...`), or build a draft without them: {DRAFT_ENV}=1 make book")
    if paths.stage.exists():
        shutil.rmtree(paths.stage)
    paths.stage.mkdir(parents=True)
    present = [c for c in (*chs, *apps) if c not in missing]
    english = os.path.relpath(BookPaths.from_toml(paths.book_toml).out, paths.out)
    elsewhere = {c.stem: f"{english}/{c.stem}.html" for c in missing} if edition.lang != "en" else {}
    terms = linked_terms(edition.glossary)
    for c in present:
        stage_notebook(paths.notebooks / c.file, paths.stage / c.file, terms, elsewhere,
                       drop_stderr=edition.lang != "en")
    # Files the notebooks point at (images in markdown cells, e.g. notebooks/figures/) come along; not the other
    # editions' folders (notebooks/ko/), which Sphinx would read as pages of this book.
    other_editions = {e.subdir for e in EDITIONS.values()}
    for extra in paths.notebooks.iterdir():
        if extra.is_dir() and not extra.name.startswith((".", "_")) and extra.name != "__pycache__" \
                and extra.name not in other_editions and extra.name != "catalog":   # translation's catalogs
            shutil.copytree(extra, paths.stage / extra.name)
    for page, staged in zip(_staged_pages(edition), (GLOSSARY, REFERENCES, *edition.guides)):
        shutil.copyfile(page, paths.stage / staged.name)
    meta = {"book": book_meta(paths.book_toml, paths.lang)}
    (paths.stage / "index.md").write_text(render_index(meta, chs, {c.file for c in present}, apps, edition),
                                          encoding="utf-8")
    return present


# ---------------------------------------------------------------------------------------------------- search

SEARCH_TEXTS = "_static/vrs_pages.js"   # read by _static/course.js on the search page of a book opened from disk


class _MainText(HTMLParser):
    """The text of a page's ``[role="main"]`` element, with its sections' ids: what Sphinx's search page shows
    around a match (it looks up ``[role="main"] #anchor``, then the text of ``[role="main"]``)."""

    SKIP = {"script", "style"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.depth, self.skip = [], 0, 0   # depth: inside [role=main] when > 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.depth == 0:
            if a.get("role") == "main":
                self.depth = 1
                self.out.append('<div role="main">')
            return
        self.depth += tag not in _VOID
        if tag in _BLOCK:
            self.out.append(" ")      # a block's text never runs into the next one's ("termDefinition")
        if tag in self.SKIP or "headerlink" in (a.get("class") or ""):
            self.skip += 1
        elif tag == "section" and a.get("id"):
            self.out.append(f'<section id="{escape(a["id"])}">')

    def handle_endtag(self, tag):
        if self.depth == 0 or tag in _VOID:
            return
        if tag in self.SKIP or (self.skip and tag == "a"):
            self.skip = max(0, self.skip - 1)
        elif tag == "section":
            self.out.append("</section>")
        self.depth -= 1
        if self.depth == 0:
            self.out.append("</div>")

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.out.append(escape(data))


_BLOCK = {"p", "div", "dt", "dd", "li", "pre", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "br"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def write_search_texts(out: Path) -> Path:
    """Write ``<out>/_static/vrs_pages.js``: ``window.VRS_PAGES = {"01_two_axes.html": "<div role=main>…", …}``,
    the main text of every page. A browser refuses the search page's ``fetch`` of a page when the book is opened
    from disk (``file://``), so the results were bare titles; course.js answers those fetches from this file
    (a script, which a ``file://`` page may load). Returns the file's path."""
    pages = {}
    for page in sorted(out.glob("*.html")):
        if page.name in ("search.html", "genindex.html"):
            continue
        parser = _MainText()
        parser.feed(page.read_text(encoding="utf-8"))
        pages[page.name] = re.sub(r"\s+", " ", "".join(parser.out))
    target = out / SEARCH_TEXTS
    target.write_text("window.VRS_PAGES = " + json.dumps(pages, ensure_ascii=False) + ";\n", encoding="utf-8")
    return target


# ---------------------------------------------------------------------------------------------------- rendering

def sphinx_command(paths: BookPaths) -> list[str]:
    """``-W --keep-going``: warnings are errors, all of them reported; ``-E``: fresh environment, so that every
    document is re-read and its warnings repeated; ``-c``: the configuration kept in the package."""
    return [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-E", "-q",
            "-c", str(CONF_DIR), "-d", str(paths.doctrees), str(paths.stage), str(paths.out)]


def page_names(stage_dir: Path) -> list[str]:
    """The pages a staged book will have (its documents' names, as in ``<name>.html``), with the two Sphinx
    writes itself: the search page and the general index."""
    sources = [p.stem for p in stage_dir.iterdir() if p.suffix in (".md", ".ipynb")]
    return sorted(sources + ["search", "genindex"])


def switch_config(paths: BookPaths, other: BookPaths) -> dict:
    """What conf.py needs for the link from every page of the book in ``paths`` to the book in ``other``: the
    other book's folder relative to this one (``ko/`` or ``../``), its pages, its language and the link's text."""
    return {"prefix": Path(os.path.relpath(other.out, paths.out)).as_posix() + "/",
            "pages": page_names(other.stage), "lang": other.lang, "label": EDITIONS[other.lang].label}


def switch_link(pagename: str, switch: dict) -> dict:
    """The language switch of one page (``pagename``: Sphinx's name of the page, e.g. ``01_two_axes``): the same
    page in the other edition where it has one, its home page otherwise, as a link relative to the page."""
    target = pagename if pagename in switch["pages"] else "index"
    up = "../" * pagename.count("/")
    return {"href": f"{up}{switch['prefix']}{target}.html", "label": switch["label"], "lang": switch["lang"]}


def _render(books: list[BookPaths]) -> int:
    """Run Sphinx on every staged book at once (one process each; they share nothing but the configuration) and
    return the first non-zero exit status, or 0. Each book's page carries a link to the next book's page
    (English <-> Korean) when there are two."""
    running = []
    for i, paths in enumerate(books):
        env = dict(os.environ, VRS_EDU_BOOK_TOML=str(paths.book_toml), VRS_EDU_BOOK_LANG=paths.lang)
        env.pop(SWITCH_ENV, None)
        if len(books) > 1:
            env[SWITCH_ENV] = json.dumps(switch_config(paths, books[(i + 1) % len(books)]), ensure_ascii=False)
        running.append(subprocess.Popen(sphinx_command(paths), env=env))
    codes = [proc.wait() for proc in running]
    return next((rc for rc in codes if rc != 0), 0)


def build(book_toml: str | Path = BOOK_TOML, draft: bool | None = None) -> int:
    """Build the HTML book into book.toml's ``[build] build-dir``, and the Korean book into its ``ko/`` folder when
    the book has Korean notebooks (:func:`editions`). Returns the exit status (0: built, no warning).

    ``draft`` (default: the ``VRS_EDU_BOOK_DRAFT`` environment variable) leaves out chapters not written yet.
    """
    draft = is_draft() if draft is None else draft
    books = [BookPaths.from_toml(book_toml, lang) for lang in editions(book_toml)]
    t0 = time.perf_counter()
    staged = {}
    for paths in books:
        try:
            staged[paths.lang] = stage(paths, draft=draft)
        except (MissingChapterError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    english = books[0]
    left_out = [c.file for c in (*chapters(english.book_toml), *appendices(english.book_toml))
                if c not in staged["en"]]
    if left_out:
        print(f"draft book: left out {len(left_out)} chapter(s) not written yet: {', '.join(left_out)}")
    # start clean: no page of a renamed or removed chapter survives (the Korean book's folder is inside the English)
    for d in (english.out, *(p.doctrees for p in books)):
        if d.exists():
            shutil.rmtree(d)
    rc = _render(books)
    if rc != 0:
        print(f"error: the book did not build (sphinx exit status {rc}; every warning above is an error)",
              file=sys.stderr)
        return rc
    for paths in books:
        write_search_texts(paths.out)
    took = time.perf_counter() - t0
    for paths in books:
        print(f"book built ({paths.lang}): {len(staged[paths.lang])} chapter(s) and appendices -> "
              f"{paths.out / 'index.html'}")
    print(f"books built in {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(build())
