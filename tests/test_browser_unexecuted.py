"""A chapter opened in JupyterLab without running anything shows its widgets, not their text repr.

    pytest -q -p no:xdist -m browser tests/test_browser_unexecuted.py

The committed notebooks store each widget's state (nbclient stores it when `make notebooks` executes them). JupyterLab
renders a widget from that state only in a *trusted* notebook; in an untrusted one (any notebook this user's Jupyter
has not signed, e.g. a fresh clone) it falls back to the output's text, `interactive(children=(IntSlider(...`.
`make lab` therefore trusts the course's notebooks (`jupyter trust notebooks/*.ipynb`) before it starts JupyterLab;
this test does the same step, then opens every chapter as stored, runs nothing, and looks at what a learner sees:
widgets, not their repr, each with a note that it responds once the chapter has run (the issue found only a
"disconnected" icon), figures at 90 % of their own size or more (their text stays at 12 px or more), and printed
outputs that wrap at a space rather than inside a word (the course's custom.css, which `make lab` loads).

Last, on the same server and page: chapter 00 run in JupyterLab (all cells, none raising), its widget's "init scale"
slider moved with the keyboard, and the widget's printed output checked to change to the value the package computes
for the new setting.

Uses tests/test_browser.py's fixtures (Chromium, a JupyterLab server on a copy of the notebooks); skipped, saying why,
when Chromium or playwright is missing.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_browser import CHAPTERS, FIGURES_PENDING, ROOT, SCREENSHOTS, _screenshot, _why_skip
from test_browser import lab_url  # noqa: F401  (a fixture, used by name)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(_why_skip() is not None, reason=_why_skip() or "")]

REPR = "interactive(children="


def _trust_as_make_lab_does(paths: list[Path]) -> None:
    # the same command as the Makefile's `lab` target (signatures are per content, so the server's copies match)
    subprocess.run([str(Path(sys.executable).with_name("jupyter")), "trust", *map(str, paths)], check=True,
                   capture_output=True)


@pytest.fixture(scope="module")
def trusted_lab(lab_url):
    _trust_as_make_lab_does([ROOT / "notebooks" / c.file for c in CHAPTERS])
    return lab_url


@pytest.fixture(scope="module")
def lab_page(browser, trusted_lab):
    """One JupyterLab page for every chapter: the app loads once (≈ 5 s), and each test opens its chapter in it."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{trusted_lab}/lab?reset")
    page.wait_for_function("() => window.jupyterapp?.commands.hasCommand('docmanager:open')", timeout=120_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    yield page
    context.close()


def _has_widget(chapter) -> bool:
    """Whether the stored chapter holds a widget (chapter 09 reads results and has none)."""
    return "application/vnd.jupyter.widget-view+json" in (ROOT / "notebooks" / chapter.file).read_text()


WIDGET_CHAPTERS = [c for c in CHAPTERS if _has_widget(c)]
WIDGET_OR_ERROR = (".jp-OutputArea-output .widget-interact, "
                   ".jp-OutputArea-output:has-text('Error displaying widget')")


def _open_as_stored(page, file: str) -> None:
    """Open ``file`` alone (the page's selectors then see its outputs only), running nothing, and wait until its
    kernel is idle (on its own clock: under load a kernel took over 120 s to start) and its first widget is drawn,
    either as the widget or as ipywidgets' error."""
    page.evaluate("() => { for (const w of [...window.jupyterapp.shell.widgets('main')]) w.dispose(); }")
    page.evaluate("async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }", file)
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=120_000)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'",
        timeout=300_000)
    page.wait_for_selector(WIDGET_OR_ERROR, state="attached", timeout=120_000)


@pytest.mark.parametrize("chapter", WIDGET_CHAPTERS, ids=[c.file.removesuffix(".ipynb") for c in WIDGET_CHAPTERS])
def test_unexecuted_chapter_shows_its_widget_and_figure_not_a_repr(lab_page, chapter):
    from playwright.sync_api import expect

    page = lab_page
    try:
        _open_as_stored(page, chapter.file)
        widget = page.locator(".jp-OutputArea-output .widget-interact").first
        if not widget.count():
            # ipywidgets renders a stored widget once its manager has restored the notebook's state; under CI's load
            # (2 cores, the other pytest worker executing a chapter) that restore lost a race with the new kernel's
            # start twice in 3 runs (stop 48 chapter 03, stop 49 chapter 04), leaving "Error displaying widget: model
            # not found" until the notebook is reopened, as a learner would. Reopened once; a second miss fails.
            page.evaluate("async () => { await window.jupyterapp.serviceManager.sessions.shutdownAll(); }")
            _open_as_stored(page, chapter.file)
        expect(widget).to_be_attached(timeout=10_000)
        widget.scroll_into_view_if_needed()
        expect(widget.locator(".widget-slider, .widget-dropdown, .widget-hslider").first).to_be_visible()
        expect(widget.locator(".widget-output img").first).to_be_visible(timeout=60_000)   # the stored figure
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        widget.screenshot(path=str(SCREENSHOTS / f"lab_unexecuted_{chapter.file.removesuffix('.ipynb')}.png"))
        # the stored widget says that it responds only once the chapter has run (custom.css, on ipywidgets'
        # jupyter-widgets-disconnected class, which goes when the kernel runs the chapter)
        note = widget.evaluate("w => getComputedStyle(w, '::before').content")
        assert "Run All Cells" in note, f"{chapter.file}: the stored widget shows no note, only {note!r}"
        # figures are shown at 90 % of their own size or more: their 13.3-px text stays at 12 px or more (the known
        # gaps, chapters whose figures are still drawn for the old page width: test_browser_layout.FIGURES_PENDING)
        shrunk = [] if chapter.number in FIGURES_PENDING else page.evaluate(
            "() => [...document.querySelectorAll('.jp-OutputArea-output img')]"
            ".map(i => [i.naturalWidth, i.getBoundingClientRect().width])"
            ".filter(([n, s]) => s > 0 && s < 0.9 * n)")
        assert not shrunk, f"{chapter.file}: figures shrunk below 90 % in JupyterLab at 1280 px: {shrunk}"
        texts = page.locator(".jp-OutputArea-output").all_inner_texts()
        assert not [t for t in texts if REPR in t], f"a widget shown as its text repr in {chapter.file}"
        # printed outputs wrap at a space, not inside a word (JupyterLab's own rule is word-break: break-all; the
        # course's custom.css, loaded by `make lab` and by the lab_url fixture, overrides it)
        breaks = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output pre')]"
                               ".map(p => getComputedStyle(p).wordBreak)")
        assert breaks and set(breaks) == {"normal"}, f"printed outputs' word-break in {chapter.file}: {set(breaks)}"
    finally:   # its kernel is not needed by the next chapter (nothing is asked: no dialog to answer)
        page.evaluate("async () => { await window.jupyterapp.serviceManager.sessions.shutdownAll(); }")


# ------------------------------------------------------------------------------- chapter 00 run, last of this file

def _ratio_for(init_scale: float) -> str:
    """What the widget prints for a setting, computed here by the package function behind it."""
    from vrs_edu.chapters.ch00_orientation.readout import untrained_stream_norms

    norms = untrained_stream_norms(n_layers=6, init_scale=init_scale)
    return f"final/embedding norm ratio: {norms[-1] / norms[0]:.2f}"


# Last in this file, on its JupyterLab server and page (starting a server and loading the app again is seconds of
# CPU): running the chapter changes the notebook, and JupyterLab autosaves it to the server's copy of the notebooks
# (the lab_url fixture's, in a temporary folder: notebooks/ is never written), which the tests above must see as
# stored. pytest keeps a file's order (tests/conftest.py sorts files, not the tests in them).
def test_jupyterlab_runs_chapter_00_and_its_widget_follows_the_keyboard(lab_page):
    from playwright.sync_api import expect

    page = lab_page
    errors = []

    def record(e):
        errors.append(str(e))

    page.on("pageerror", record)   # this test's script errors only (removed at its end)
    try:
        # opened alone, as the tests above open a chapter: its stored widget is drawn before the outputs are cleared
        _open_as_stored(page, "00_orientation.ipynb")
        # clear the committed outputs and execution counts, so that what follows can only come from this kernel;
        # then run all cells (not awaited here: the wait below has the timeout)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
        assert page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets"
                             ".every(c => c.model.type !== 'code' || c.model.executionCount === null)")
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        # done when every code cell has an execution count and the kernel is idle again
        page.wait_for_function(
            "() => { const nb = window.jupyterapp.shell.currentWidget.content;"
            " return nb.widgets.filter(c => c.model.type === 'code').every(c => c.model.executionCount !== null)"
            " && nb.widgets.some(c => c.model.type === 'code')"
            " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'; }",
            timeout=600_000, polling=1000)
        failed = page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.widgets"
            ".map((c, i) => [i, c.model.type === 'code' ? c.model.outputs.toJSON() : []])"
            ".filter(([i, outs]) => outs.some(o => o.output_type === 'error'))"
            ".map(([i, outs]) => [i, outs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)])")
        assert not failed, f"cells that raised: {failed}"

        widget = page.locator(".widget-interact").first
        slider = widget.locator(".widget-slider").filter(has_text="init scale")
        readout = slider.locator(".widget-readout")
        output = widget.locator(".widget-output")
        expect(readout).to_have_text("1.00", timeout=60_000)
        expect(output).to_contain_text(_ratio_for(1.0), timeout=60_000)
        image_before = output.locator("img").first.get_attribute("src")
        widget.scroll_into_view_if_needed()
        _screenshot(page, "lab_00_before")

        handle = slider.locator(".noUi-handle")
        handle.focus()
        handle.press("ArrowRight")  # one step of 0.25
        expect(readout).to_have_text("1.25", timeout=30_000)
        expect(output).to_contain_text(_ratio_for(1.25), timeout=60_000)
        assert _ratio_for(1.25) != _ratio_for(1.0), "the test needs two settings that print differently"
        expect(output.locator("img").first).not_to_have_attribute("src", image_before, timeout=30_000)
        _screenshot(page, "lab_00_after")
        assert not errors, errors
    finally:
        page.remove_listener("pageerror", record)
        page.evaluate("async () => { await window.jupyterapp.serviceManager.sessions.shutdownAll(); }")
