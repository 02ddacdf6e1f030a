"""Build the course as a static HTML book: Sphinx + myst-nb + sphinx-book-theme, driven by book.toml.

    make book                                  # = python -m vrs_edu.course.book_build
    VRS_EDU_BOOK_DRAFT=1 make book             # draft: leave out chapters whose notebook is not written yet

What a build does, in order:

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

import nbformat

from vrs_edu.course.apparatus import COLLAPSED, heading_level
from vrs_edu.course.book import BOOK_TOML, Appendix, Chapter, appendices, chapters, load_book

CONF_DIR = Path(__file__).resolve().parent / "sphinx"
REFERENCES = CONF_DIR / "references.md"   # the references page: every entry of references.bib
GLOSSARY = CONF_DIR / "glossary.md"       # the glossary page: every term of the course
BACK_MATTER = (GLOSSARY, REFERENCES)      # after the chapters, in this order
# The pages that were the README's long sections (it stays learner-first): after the back matter.
GUIDES = tuple(CONF_DIR / f"{name}.md" for name in ("teachers", "setup", "package", "scaling"))
COLLAPSE_MARKER = '<div class="vrs-collapsed"></div>'   # _static/course.js folds the section it sits in
# How a chapter's Markdown links a source and a term, readable in JupyterLab (a link whose text is the citation or
# the term) and turned into Sphinx's roles for the book, which check that the key or term exists (-W):
#   [Elhage et al., 2021](#cite:elhage2021framework)  ->  {cite:t}`elhage2021framework`  (linked to its reference)
#   [residual stream](#glossary:residual-stream)       ->  {term}`residual stream <residual stream>`
CITE_LINK = re.compile(r"\[([^\]]+)\]\(#cite:([\w-]+)\)")
GLOSSARY_LINK = re.compile(r"\[([^\]]+)\]\(#glossary:([\w-]+)\)")
DRAFT_ENV = "VRS_EDU_BOOK_DRAFT"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_NOTE = ("*Interactive widget: it runs in JupyterLab (`make lab`), where moving a slider re-runs the "
               "experiment. The figure below shows its default setting.*")


class MissingChapterError(FileNotFoundError):
    """A chapter listed in book.toml has no notebook."""


@dataclass(frozen=True)
class BookPaths:
    """Where a book's inputs and outputs live, all derived from its book.toml."""
    book_toml: Path
    notebooks: Path   # [book] src
    out: Path         # [build] build-dir: the HTML site
    stage: Path       # staged Sphinx sources (generated; rewritten by every build)
    doctrees: Path    # Sphinx's pickled environment

    @classmethod
    def from_toml(cls, book_toml: str | Path = BOOK_TOML) -> "BookPaths":
        book_toml = Path(book_toml).resolve()
        cfg = load_book(book_toml)
        root = book_toml.parent
        out = root / cfg["build"].get("build-dir", "book")
        return cls(book_toml, root / cfg["book"].get("src", "src"), out,
                   out.with_name(out.name + "_src"), out.with_name(out.name + "_doctrees"))


def is_draft() -> bool:
    return os.environ.get(DRAFT_ENV, "").strip().lower() not in ("", "0", "false", "no")


# ---------------------------------------------------------------------------------------------------- staging

def _md_escape(text: str) -> str:
    """Escape the characters MyST would read as markup (``V_1`` must stay ``V_1``, not start an emphasis)."""
    return "".join("\\" + ch if ch in "\\`*_{}[]<>()#+!|$" else ch for ch in text)


def render_index(book: dict, chs: list[Chapter], present: set[str], apps: tuple[Appendix, ...] = ()) -> str:
    """The book's home page (MyST markdown): title, description, the chapter list with questions and goals, and
    the appendices.

    The hidden toctrees list the chapters, then the appendices, in book.toml's order: it is what Sphinx and the
    theme turn into the sidebar navigation and the previous/next links. Chapters and appendices not in ``present``
    (draft builds only) are listed without a link.
    """
    meta = book["book"]
    lines = [f"# {_md_escape(meta['title'])}", ""]
    if meta.get("description"):
        lines += [_md_escape(meta["description"]), ""]
    lines += ["```{toctree}", ":hidden:", ":maxdepth: 2", ":caption: Chapters", ""]
    lines += [c.stem for c in chs if c.file in present]
    if apps:
        lines += ["```", "", "```{toctree}", ":hidden:", ":caption: Appendices", ""]
        lines += [a.stem for a in apps if a.file in present]
    lines += ["```", "", "```{toctree}", ":hidden:", ":caption: Back matter", ""] + [p.stem for p in BACK_MATTER]
    lines += ["```", "", "```{toctree}", ":hidden:", ":caption: Guides", ""] + [p.stem for p in GUIDES]
    lines += ["```", "",
              "## Chapters", "",
              "Each chapter is a notebook: read it here with the outputs it produced, or run it yourself in "
              "JupyterLab (`make lab`), move its widgets and do its exercises.", ""]
    for c in chs:
        title = _md_escape(c.title)
        lines.append(f"### [{title}]({c.file})" if c.file in present else f"### {title} (not written yet)")
        lines += ["", f"**Question.** {_md_escape(c.question)}", "", "**Goals.**", ""]
        lines += [f"- {_md_escape(g)}" for g in c.goals]
        lines += ["", f"**Run-time budget.** {c.budget_s} s on a laptop CPU.", ""]
    if apps:
        lines += ["## Appendices", "", "The evidence behind a chapter that is not its lesson: run ledgers, "
                  "second-corpus tables, tuning histories. Each chapter's *How sure are we?* links its appendix.", ""]
        lines += [f"- [{_md_escape(a.title)}]({a.file})" if a.file in present else f"- {_md_escape(a.title)}"
                  for a in apps]
        lines.append("")
    lines += ["## Glossary and references", "", f"[The glossary]({GLOSSARY.name}) defines every term the course "
              f"uses. [Every source the course cites]({REFERENCES.name}): papers with their arXiv ids, code "
              "repositories and posts.", "", "## Guides", "",
              f"[The teacher's guide]({GUIDES[0].name}) (assignments and grading, your own corpus), "
              f"[set-up in detail]({GUIDES[1].name}), [the package]({GUIDES[2].name}) (which chapter uses which "
              f"module, how to add a variant) and [scaling up]({GUIDES[3].name}) (a GPU, several processes, "
              "paper-sized models).", ""]
    return "\n".join(lines)


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


def stage_notebook(src: Path, dst: Path) -> int:
    """Copy one chapter notebook for the book, replacing widget outputs by a note, and turning the glossary and
    citation links of its Markdown cells and of its Markdown outputs (computed prose) into Sphinx roles
    (:func:`book_markdown`). Returns how many widget outputs it replaced.

    A widget's view only renders next to a live kernel (or with widget JavaScript from a CDN, which an offline
    book cannot load), so the note says where it runs; the saved widget state is dropped for the same reason.
    """
    nb = nbformat.read(src, as_version=4)
    terms = {term_slug(t): t for t in glossary_terms()}
    replaced = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = book_markdown(cell.source, terms)
            if cell.metadata.get(COLLAPSED) is True and heading_level(cell) is not None:
                cell.source = cell.source.rstrip() + "\n\n" + COLLAPSE_MARKER
        if cell.cell_type != "code":
            continue
        for i, out in enumerate(cell.get("outputs", [])):
            if WIDGET_MIME in out.get("data", {}):
                cell.outputs[i] = nbformat.v4.new_output(
                    "display_data", data={"text/markdown": WIDGET_NOTE, "text/plain": WIDGET_NOTE})
                replaced += 1
            elif "text/markdown" in out.get("data", {}):   # computed prose (viz.prose.say) links terms too
                out["data"]["text/markdown"] = book_markdown(out["data"]["text/markdown"], terms)
    nb.metadata.get("widgets", {}).pop(WIDGET_STATE, None)
    if not nb.metadata.get("widgets"):
        nb.metadata.pop("widgets", None)
    dst.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dst)
    return replaced


def stage(paths: BookPaths, draft: bool = False) -> list[Chapter | Appendix]:
    """Write the Sphinx sources into ``paths.stage`` (emptied first). Returns the chapters and appendices staged.

    Raises:
        MissingChapterError: a chapter's or appendix's notebook does not exist (unless ``draft``), naming the file.
    """
    chs = chapters(paths.book_toml)
    apps = tuple(appendices(paths.book_toml))
    missing = [c for c in (*chs, *apps) if not (paths.notebooks / c.file).is_file()]
    if missing and not draft:
        names = ", ".join(str((paths.notebooks / c.file).relative_to(paths.book_toml.parent)) for c in missing)
        raise MissingChapterError(
            f"book.toml lists chapters whose notebook does not exist: {names}. Write them (and run "
            f"`make notebook NB=...`), or build a draft without them: {DRAFT_ENV}=1 make book")
    if paths.stage.exists():
        shutil.rmtree(paths.stage)
    paths.stage.mkdir(parents=True)
    present = [c for c in (*chs, *apps) if c not in missing]
    for c in present:
        stage_notebook(paths.notebooks / c.file, paths.stage / c.file)
    # Files the notebooks point at (images in markdown cells, e.g. notebooks/figures/) come along.
    for extra in paths.notebooks.iterdir():
        if extra.is_dir() and not extra.name.startswith((".", "_")) and extra.name != "__pycache__":
            shutil.copytree(extra, paths.stage / extra.name)
    for page in BACK_MATTER + GUIDES:
        shutil.copyfile(page, paths.stage / page.name)
    (paths.stage / "index.md").write_text(render_index(load_book(paths.book_toml), chs, {c.file for c in present},
                                                       apps))
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


def build(book_toml: str | Path = BOOK_TOML, draft: bool | None = None) -> int:
    """Build the HTML book into book.toml's ``[build] build-dir``. Returns the exit status (0: built, no warning).

    ``draft`` (default: the ``VRS_EDU_BOOK_DRAFT`` environment variable) leaves out chapters not written yet.
    """
    draft = is_draft() if draft is None else draft
    paths = BookPaths.from_toml(book_toml)
    t0 = time.perf_counter()
    try:
        staged = stage(paths, draft=draft)
    except MissingChapterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    left_out = [c.file for c in (*chapters(paths.book_toml), *appendices(paths.book_toml)) if c not in staged]
    if left_out:
        print(f"draft book: left out {len(left_out)} chapter(s) not written yet: {', '.join(left_out)}")
    for d in (paths.out, paths.doctrees):  # start clean: no page of a renamed or removed chapter survives
        if d.exists():
            shutil.rmtree(d)
    env = dict(os.environ, VRS_EDU_BOOK_TOML=str(paths.book_toml))
    rc = subprocess.run(sphinx_command(paths), env=env).returncode
    if rc != 0:
        print(f"error: the book did not build (sphinx exit status {rc}; every warning above is an error)",
              file=sys.stderr)
        return rc
    write_search_texts(paths.out)
    took = time.perf_counter() - t0
    print(f"book built: {len(staged)} chapter(s) and appendices in {took:.1f} s -> {paths.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(build())
