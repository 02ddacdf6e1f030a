"""The course's figure style, and plots used across the chapters (matplotlib + seaborn).

Every figure is read at its own size: in the book at 1280 px (the column holds 960 px, a 12-inch figure at
:data:`FIGURE_DPI`), in JupyterLab, and on a 390-px phone, where a figure wider than the column scrolls inside its
own box instead of shrinking (``vrs_edu/course/sphinx/_static/course.css``). So the one number that decides whether
a figure is readable is the size of its smallest text at the figure's own size: :data:`MIN_FONT_PT` points at
:data:`FIGURE_DPI` dots per inch is ``12 × 80 / 72 = 13.3`` px, which stays at 12 px or more as long as the page
shrinks a figure by at most 10 % (tests/test_browser_layout.py measures that; tests/test_figure_style.py checks the
text of every figure function against :data:`MIN_FONT_PT`). :func:`apply_course_style` sets it once, for every
chapter (``setup_notebook`` calls it); the plotting functions never pass a smaller ``fontsize``.

In the Korean edition (:func:`vrs_edu.i18n.language.current_language`) it also makes Hangul drawable: matplotlib's
default DejaVu Sans has no Hangul, so a Korean title would be a row of empty boxes. DejaVu Sans stays the first font
(Latin letters, digits and symbols look as in the English figures) and NanumGothic, shipped by the PyPI package
``koreanize-matplotlib``, is matplotlib's fallback for the glyphs DejaVu lacks.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
from functools import cache
from pathlib import Path

import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib.text import Text
from matplotlib import font_manager
from matplotlib.ticker import FixedLocator, NullLocator, StrMethodFormatter

from vrs_edu.i18n.language import in_language, resolve_language

MIN_FONT_PT = 12.0       # the smallest text a course figure may carry, in points
FIGURE_DPI = 80          # dots per inch of the figures the notebooks store (a 12-inch figure: 960 px)
COURSE_RC = {
    "font.size": 12.0, "axes.labelsize": 12.0, "axes.titlesize": 13.0, "figure.titlesize": 14.0,
    "xtick.labelsize": 12.0, "ytick.labelsize": 12.0, "legend.fontsize": 12.0, "legend.title_fontsize": 12.0,
    "figure.figsize": (6.4, 3.6), "figure.dpi": FIGURE_DPI, "savefig.dpi": FIGURE_DPI,
}


KOREAN_FONT = "NanumGothic"
KOREAN_FONT_FAMILY = ["DejaVu Sans", KOREAN_FONT]     # DejaVu first: the English figures' glyphs; Hangul falls back


def korean_font_file() -> Path:
    """NanumGothic.ttf from the installed ``koreanize-matplotlib`` package, found without importing it (its import
    would set matplotlib's font for every figure, the English ones too). Raises FileNotFoundError saying how to
    install it."""
    spec = importlib.util.find_spec("koreanize_matplotlib")
    path = Path(spec.submodule_search_locations[0]) / "fonts" / "NanumGothic.ttf" if spec else None
    if path is None or not path.is_file():
        raise FileNotFoundError("the Korean edition's figure font NanumGothic comes with the PyPI package "
                                "koreanize-matplotlib: run `make setup` (or pip install koreanize-matplotlib)")
    return path


#: NanumGothic's bold face, shipped beside the regular one by koreanize-matplotlib: a bold title or label
#: (``fontweight="bold"``) in a Korean figure needs it, or matplotlib warns "findfont: Failed to find font weight bold
#: for NanumGothic" on stderr. Its file declares weight 600 (semibold), which matplotlib would still not take as an
#: exact "bold" (700): it is registered as the family's weight 700, the face Korean typesetting uses as bold.
KOREAN_BOLD_FILE = "NanumGothicBold.ttf"


@cache
def register_korean_font() -> str:
    """Add NanumGothic, regular and bold (:data:`KOREAN_BOLD_FILE`), to matplotlib's font list (once per process);
    returns its family name."""
    regular = korean_font_file()
    manager = font_manager.fontManager
    manager.addfont(str(regular))
    bold = regular.parent / KOREAN_BOLD_FILE
    if bold.is_file():
        manager.addfont(str(bold))
        manager.ttflist = [dataclasses.replace(f, weight=700) if Path(f.fname) == bold else f
                           for f in manager.ttflist]
        manager._findfont_cached.cache_clear()   # a lookup made before must see the bold weight
    return KOREAN_FONT


HANGUL = re.compile("[\uac00-\ud7a3]")
MATH = re.compile(r"(?<!\\)\$.+?(?<!\\)\$")


def set_mixed_korean_text(fig):
    """Set in NanumGothic each text of ``fig`` that mixes Hangul with mathtext (``"가중치 $\\alpha$"``): mathtext draws
    the plain part of a label with one font, and DejaVu Sans, the first of the Korean figures' fonts, has no Hangul
    (matplotlib only logs the empty boxes). NanumGothic has both the Hangul and the Latin letters. Returns ``fig``."""
    for text in fig.findobj(Text):
        if HANGUL.search(text.get_text()) and MATH.search(text.get_text()):
            register_korean_font()
            text.set_fontfamily([KOREAN_FONT])
            text.set_linespacing(1.4)        # mathtext sets NanumGothic's lines closer than DejaVu Sans's
    return fig


def apply_course_style(lang: str | None = None) -> None:
    """seaborn's ``whitegrid`` look with every text at :data:`MIN_FONT_PT` points or more (seaborn's ``notebook``
    context sets ticks and legends at 11 pt; the sizes and dots per inch are :data:`COURSE_RC`). In the Korean
    edition (``lang``, default: the running notebook's) the fonts are :data:`KOREAN_FONT_FAMILY`, so that Hangul is
    drawn; the English figures keep matplotlib's default font."""
    sns.set_theme(context="notebook", style="whitegrid", rc=COURSE_RC)
    if resolve_language(lang) == "ko":
        register_korean_font()
        plt.rcParams["font.family"] = KOREAN_FONT_FAMILY


def _texts(fig):
    """(text, its box in pixels) for every visible, non-empty text of ``fig``: tick labels, titles, legends,
    colour-bar labels and annotations are all :class:`matplotlib.text.Text` artists. Tick labels exist only once
    the figure is drawn, so it is drawn first."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [(t, t.get_window_extent(renderer)) for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip()]


def small_text(fig, min_pt: float = MIN_FONT_PT) -> list[str]:
    """Every visible text of ``fig`` smaller than ``min_pt`` points, as ``"'label' 9.0 pt"`` (empty when the
    figure is readable)."""
    return [f"{t.get_text()[:40]!r} {t.get_size():.1f} pt" for t, _ in _texts(fig) if t.get_size() < min_pt - 1e-9]


def overlapping_text(fig, tolerance_px: float = 1.0) -> list[str]:
    """Pairs of visible texts of ``fig`` that overlap (each as ``"'a' / 'b'"``), and texts that reach outside the
    figure (``"'a' outside"``): a drawn schematic must have neither. Overlaps of less than ``tolerance_px``
    pixels (rounding of the text boxes) are not counted."""
    texts = _texts(fig)
    width, height = fig.canvas.get_width_height()
    found = []
    for i, (a, ba) in enumerate(texts):
        if ba.x0 < -tolerance_px or ba.y0 < -tolerance_px or ba.x1 > width + tolerance_px \
                or ba.y1 > height + tolerance_px:
            found.append(f"{a.get_text()[:30]!r} outside")
        for b, bb in texts[i + 1:]:
            dx = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
            dy = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
            if dx > tolerance_px and dy > tolerance_px:
                found.append(f"{a.get_text()[:30]!r} / {b.get_text()[:30]!r}")
    return found


def depth_axis_label(lang: str | None = None) -> str:
    """The depth axis of the course's plots along depth (l = 0 is the embedding), in ``lang`` (None: the running
    edition)."""
    return in_language("depth l (0 = embedding)", "깊이 l (0 = 임베딩)", lang)


def stream_norm_axis_label(lang: str | None = None) -> str:
    """The axis of the residual stream's mean norm, in ``lang`` (None: the running edition)."""
    return in_language("mean ‖residual stream‖", "평균 ‖잔차 스트림‖", lang)


def plot_stream_norms(norms: dict[str, list[float]] | list[float], ax=None, title: str | None = None,
                      log: bool = False, lang: str | None = None):
    """Norm of the residual stream against depth l = 0..L; ``norms`` may map a label to one curve each. ``log``: a
    logarithmic y-axis, so that curves of very different size both show how they grow (chapter 00's untrained
    stream grows by half while the trained one grows 25-fold). Axis labels in ``lang`` (default: the running
    edition); the curves' labels and the title are the caller's."""
    curves = norms if isinstance(norms, dict) else {"": norms}
    if ax is None:
        fig, ax = plt.subplots()
    for label, ys in curves.items():
        ax.plot(range(len(ys)), ys, marker="o", label=label or None)
    ax.set_xlabel(depth_axis_label(lang))
    ax.set_ylabel(stream_norm_axis_label(lang) + (in_language(" (log)", " (로그 축)", lang) if log else ""))
    if log:   # labelled 1-2-5 ticks: a log axis with only its powers of ten labelled cannot be read off
        ax.set_yscale("log")
        values = [v for ys in curves.values() for v in ys if v > 0]
        lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
        ticks = [m * 10 ** e for e in range(lo, hi + 1) for m in (1, 2, 5) if min(values) / 1.5 <= m * 10 ** e
                 <= max(values) * 1.5]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
        ax.yaxis.set_minor_locator(NullLocator())
    if title:
        ax.set_title(title)
    if any(curves):
        ax.legend()
    ax.figure.tight_layout()
    return ax.figure
