"""Chapter 09's figure, read at a glance: one row per question of the article, the strongest number that speaks for
its conclusion in the left column and the strongest against it in the right
(:mod:`~vrs_edu.chapters.ch09_the_four_answers.argument`). Each number has a panel of its own, so each axis holds one
quantity at its own scale (a −0.03-nat gain is not lost beside a +5.9-nat cost), and the side of the axis that
would speak for the conclusion is shaded: "for" is above 0 in question 1 and below 0 in question 3."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import offset_copy

from vrs_edu.chapters.ch09_the_four_answers.argument import SHORT_QUESTIONS, SHORT_QUESTIONS_KO, Evidence, firm, words
from vrs_edu.i18n.language import resolve_language
from vrs_edu.viz.plots import KOREAN_FONT, register_korean_font

COLOURS = {"for": "#4c72b0", "against": "#c44e52"}
FOR_SHADE = "#dde6f3"
# The figure's words in each edition: the column titles, the key, the axis, an empty side, the row heading's "Q".
WORDS = {"en": {"columns": ("FOR the conclusion", "AGAINST it"), "filled": "filled: decided",
                "hollow": "hollow: not decided (noise could explain it)",
                "shaded": "shaded: the side that speaks for the conclusion", "axis": "loss change (nats)",
                "nothing": "nothing measured", "q": "Q"},
         "ko": {"columns": ("결론에 찬성", "결론에 반대"), "filled": "속이 찬 점: 결정됨",
                "hollow": "빈 점: 결정되지 않음 (잡음으로 설명될 수 있음)",
                "shaded": "음영: 결론에 찬성하는 쪽", "axis": "손실 변화 (nats)",
                "nothing": {"for": "뒷받침하는 수치 없음", "against": "반하는 수치 없음"}, "q": "질문 "}}


def _for_region(e: Evidence, lo: float, hi: float) -> tuple[float, float]:
    """The stretch of the axis ``[lo, hi]`` where the number would speak for the conclusion: above 0 ("positive"),
    below 0 ("negative"), below its margin (a cost read as "cheap")."""
    if e.favours == "positive":
        return 0.0, hi
    if e.favours == "negative":
        return lo, 0.0
    return lo, e.margin


def _panel(ax, e: Evidence | None, which: str, lang: str = "en") -> None:
    """One number on its own linear axis: its mark and 95 % interval (hollow when it does not decide its side), its
    value, 0 (and the tolerance for a cost read as cheap), and the side that speaks for the conclusion shaded."""
    ax.set_yticks([])
    if e is None:
        ax.set_xticks([])
        nothing = WORDS[lang]["nothing"]           # Korean: one per side
        nothing = nothing[which] if isinstance(nothing, dict) else nothing
        ax.text(0.5, 0.5, nothing, transform=ax.transAxes, ha="center", va="center", color="0.4")
        return
    lines = [0.0] + ([e.margin] if e.favours == "cheap" else [])
    lo, hi = min(e.lo, *lines), max(e.hi, *lines)
    pad = 0.15 * (hi - lo or 1.0)
    lo, hi = lo - pad, hi + pad
    ax.axvspan(*_for_region(e, lo, hi), color=FOR_SHADE, zorder=0)
    ax.axvline(0, color="0.3", lw=1)
    if e.favours == "cheap":
        ax.axvline(e.margin, color="0.3", lw=1, ls="--")
    colour = COLOURS[which]
    ax.errorbar(e.mean, 0, xerr=[[e.mean - e.lo], [e.hi - e.mean]], fmt="o", ms=9, capsize=5,
                color=colour, mfc=colour if firm(e) else "white", mew=2, lw=1.6)
    ax.annotate(f"{e.mean:+.3f}" if abs(e.mean) < 1 else f"{e.mean:+.2f}", (e.mean, 0), xytext=(0, 10),
                textcoords="offset points", ha="center", va="bottom", color=colour)
    ax.set_xlim(lo, hi)
    ax.set_ylim(-1, 1.6)
    ax.set_title(words(e, "label", lang), fontsize=12, loc="left")
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))   # few tick labels: none overlaps another


def plot_for_against(rows: list[dict], lang: str | None = None):
    """Four rows, one per question (``rows``: :func:`~vrs_edu.chapters.ch09_the_four_answers.argument
    .argument_rows`), two panels each: the side's strongest number "for" (blue) and "against" (red) with its 95 %
    interval, in nats, on its own linear axis that includes 0; a filled mark decides its side, a
    hollow one does not; the shaded stretch is where a number would speak for the conclusion; a side with no
    number says "nothing measured". A row's heading names its question and, for question 1, its measure (what
    stand-in patterns cost). A key under the panels says what filled, hollow and shaded mean. Words in ``lang``
    (default: the running edition). Returns the figure.

    Raises:
        ValueError: ``rows`` does not hold the four questions in order.
    """
    if [r.get("n") for r in rows] != [1, 2, 3, 4]:
        raise ValueError(f"rows must be the four questions in order, got {[r.get('n') for r in rows]}")
    lang = resolve_language(lang)
    if lang == "ko":
        register_korean_font()   # regular and bold (the bold face registered at weight 700: vrs_edu.viz.plots)
    w = WORDS[lang]
    bold = dict(family=KOREAN_FONT, weight="bold") if lang == "ko" else dict(weight="bold")
    short = SHORT_QUESTIONS_KO if lang == "ko" else SHORT_QUESTIONS
    fig, axes = plt.subplots(4, 2, figsize=(12.0, 10.5))
    for r, pair in zip(rows, axes):
        for ax, which in zip(pair, ("for", "against")):
            _panel(ax, r[which], which, lang)
    for ax in axes[-1]:
        ax.set_xlabel(w["axis"])
    fig.legend(handles=_key(lang), loc="lower center", ncol=3, frameon=False, bbox_to_anchor=(0.5, 0.0))
    # the bottom strip is the key's, the top one the column titles'
    fig.tight_layout(h_pad=3.6, w_pad=6.0, rect=(0, 0.06, 1, 0.94))
    # Headings are figure texts placed after the layout: a row's heading spans both columns, and as an axes text
    # it would make the layout narrow the left panel to fit it.
    for r, pair in zip(rows, axes):
        m = r.get("measure")
        how_much = f" — {words(m, 'point', lang)['cost']} {m.mean:+.2f} nats" if m is not None else ""
        box = pair[0].get_position()
        fig.text(box.x0, box.y1, f"{w['q']}{r['n']} · {short[r['n']]}{how_much}", fontsize=13, **bold,
                 transform=offset_copy(fig.transFigure, fig=fig, y=30, units="points"))
    for ax, which, title in zip(axes[0], ("for", "against"), w["columns"]):
        box = ax.get_position()
        fig.text((box.x0 + box.x1) / 2, box.y1, title, ha="center", color=COLOURS[which], **bold,
                 transform=offset_copy(fig.transFigure, fig=fig, y=58, units="points"))
    return fig


def _key(lang: str = "en") -> list:
    """The figure's key, so a reader needs no caption: what filled and hollow marks and the shading mean."""
    mark = dict(ls="none", ms=9, mew=2, color="0.3")
    w = WORDS[lang]
    return [Line2D([], [], marker="o", mfc="0.3", label=w["filled"], **mark),
            Line2D([], [], marker="o", mfc="white", label=w["hollow"], **mark),
            Patch(facecolor=FOR_SHADE, label=w["shaded"])]
