"""Chapter 09's figure, read at a glance: one row per question of the article, the strongest number that speaks for
its conclusion in the left column and the strongest against it in the right
(:mod:`~vrs_edu.chapters.ch09_the_four_answers.argument`). Each number has a panel of its own, so each axis holds one
quantity at its own scale (a −0.03-nat gain is not lost beside a +5.9-nat cost), and the side of the axis that
would speak for the conclusion is shaded: "for" is above 0 in question 1 and below 0 in question 3."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from vrs_edu.chapters.ch09_the_four_answers.argument import SHORT_QUESTIONS, Evidence, firm

COLOURS = {"for": "#4c72b0", "against": "#c44e52"}
MARKERS = {"for": "o", "against": "s"}
FOR_SHADE = "#dde6f3"


def _for_region(e: Evidence, lo: float, hi: float) -> tuple[float, float]:
    """The stretch of the axis ``[lo, hi]`` where the number would speak for the conclusion: above 0 ("positive"),
    below 0 ("negative"), below its margin (a cost read as "cheap")."""
    if e.favours == "positive":
        return 0.0, hi
    if e.favours == "negative":
        return lo, 0.0
    return lo, e.margin


def _panel(ax, e: Evidence | None, which: str) -> None:
    """One number on its own linear axis: its mark and 95 % interval (hollow when it does not decide its side), its
    value, 0 (and the tolerance for a cost read as cheap), and the side that speaks for the conclusion shaded."""
    ax.set_yticks([])
    if e is None:
        ax.set_xticks([])
        ax.text(0.5, 0.5, "nothing measured", transform=ax.transAxes, ha="center", va="center", color="0.4")
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
    ax.errorbar(e.mean, 0, xerr=[[e.mean - e.lo], [e.hi - e.mean]], fmt=MARKERS[which], ms=9, capsize=5,
                color=colour, mfc=colour if firm(e) else "white", mew=2, lw=1.6)
    ax.annotate(f"{e.mean:+.3f}" if abs(e.mean) < 1 else f"{e.mean:+.2f}", (e.mean, 0), xytext=(0, 10),
                textcoords="offset points", ha="center", va="bottom", color=colour)
    ax.set_xlim(lo, hi)
    ax.set_ylim(-1, 1.6)
    ax.set_title(e.label, fontsize=12, loc="left")
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))   # few tick labels: none overlaps another


def plot_for_against(rows: list[dict]):
    """Four rows, one per question (``rows``: :func:`~vrs_edu.chapters.ch09_the_four_answers.argument
    .argument_rows`), two panels each: the side's strongest number "for" (blue circle) and "against" (red square)
    with its 95 % interval, in nats, on its own linear axis that includes 0; a filled mark decides its side, a
    hollow one does not; the shaded stretch is where a number would speak for the conclusion; a side with no
    number says "nothing measured". A row's heading names its question and, for question 1, its measure (what
    stand-in patterns cost). Returns the figure.

    Raises:
        ValueError: ``rows`` does not hold the four questions in order.
    """
    if [r.get("n") for r in rows] != [1, 2, 3, 4]:
        raise ValueError(f"rows must be the four questions in order, got {[r.get('n') for r in rows]}")
    fig, axes = plt.subplots(4, 2, figsize=(12.0, 10.5))
    for r, pair in zip(rows, axes):
        for ax, which in zip(pair, ("for", "against")):
            _panel(ax, r[which], which)
        m = r.get("measure")
        how_much = f" — {m.point['cost']} {m.mean:+.2f} nats" if m is not None else ""
        pair[0].annotate(f"Q{r['n']} · {SHORT_QUESTIONS[r['n']]}{how_much}", (0, 1), xytext=(0, 30),
                         xycoords="axes fraction", textcoords="offset points", fontsize=13, weight="bold")
    axes[0][0].annotate("FOR the conclusion", (0.5, 1), xytext=(0, 58), xycoords="axes fraction",
                        textcoords="offset points", ha="center", color=COLOURS["for"], weight="bold")
    axes[0][1].annotate("AGAINST it", (0.5, 1), xytext=(0, 58), xycoords="axes fraction",
                        textcoords="offset points", ha="center", color=COLOURS["against"], weight="bold")
    for ax in axes[-1]:
        ax.set_xlabel("loss change (nats)")
    fig.tight_layout(h_pad=3.2)
    return fig
