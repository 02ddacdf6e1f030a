"""Chapter 09's figure, read at a glance: one row per question of the article, each with the strongest number that
speaks for its conclusion and the strongest against it (:mod:`~vrs_edu.chapters.ch09_the_four_answers.argument`),
two marks with their 95 % intervals on the row's own linear axis of loss change in nats."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from vrs_edu.chapters.ch09_the_four_answers.argument import SHORT_QUESTIONS, firm

COLOURS = {"for": "#4c72b0", "against": "#c44e52"}
MARKERS = {"for": "o", "against": "s"}


def plot_for_against(rows: list[dict]):
    """Four rows, one per question (``rows``: :func:`~vrs_edu.chapters.ch09_the_four_answers.argument
    .argument_rows`): a "for" lane (blue circle) and an "against" lane (red square), each the side's strongest
    number with its 95 % interval and its value written beside it (hollow when the number does not decide its
    side), on a linear axis that includes 0; a side with no number says "nothing measured". Returns the figure.

    Raises:
        ValueError: ``rows`` does not hold the four questions in order.
    """
    if [r.get("n") for r in rows] != [1, 2, 3, 4]:
        raise ValueError(f"rows must be the four questions in order, got {[r.get('n') for r in rows]}")
    fig, axes = plt.subplots(4, 1, figsize=(11.0, 9.2))
    for r, ax in zip(rows, axes):
        ax.axvline(0, color="0.3", lw=1)
        ax.set_title(f"Q{r['n']} · {SHORT_QUESTIONS[r['n']]}", loc="left")
        labels, xs = [], [0.0]
        for y, which in ((1, "for"), (0, "against")):
            e = r[which]
            if e is None:
                labels.append(f"{which}: nothing measured")
                continue
            labels.append(f"{which}: {e.label}")
            colour = COLOURS[which]
            ax.errorbar(e.mean, y, xerr=[[e.mean - e.lo], [e.hi - e.mean]], fmt=MARKERS[which], ms=9, capsize=5,
                        color=colour, mfc=colour if firm(e) else "white", mew=2, lw=1.6)
            ax.annotate(f"{e.mean:+.3f}" if abs(e.mean) < 1 else f"{e.mean:+.2f}", (e.mean, y),
                        xytext=(0, 9), textcoords="offset points", ha="center", va="bottom", color=colour)
            xs += [e.lo, e.hi]
        lo, hi = min(xs), max(xs)
        pad = 0.12 * (hi - lo or 1.0)
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(-0.7, 1.9)
        ax.set_yticks([1, 0], labels)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6))   # few tick labels: none overlaps another
        ax.set_xlabel("loss change (nats)")
    fig.tight_layout()
    return fig
