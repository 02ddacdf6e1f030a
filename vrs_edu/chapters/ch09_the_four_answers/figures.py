"""Chapter 09's effect figure: for each of the article's four questions, its key loss changes (nats, 95 % interval)
from the toy models and from the real decoder, one panel per question, each on its own scale."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter

COLOURS = {"toy": "#4c72b0", "decoder": "#c44e52"}


def plot_four_answers(answers: list[dict]):
    """A 2 × 2 grid, one panel per answer (:func:`~vrs_edu.chapters.ch09_the_four_answers.answers.course_answers`), each bar one entry of
    its ``bars``:
    the loss change in nats with its 95 % interval, blue for the toys, red for the real decoder; a panel without
    bars says "not measured yet". Returns the figure.

    Raises:
        ValueError: ``answers`` does not hold the four questions.
    """
    if [a.get("n") for a in answers] != [1, 2, 3, 4]:
        raise ValueError(f"answers must be the four questions in order, got {[a.get('n') for a in answers]}")
    fig, axes = plt.subplots(2, 2, figsize=(11.0, 6.6))
    for a, ax in zip(answers, axes.flat):
        bars = a["bars"]
        ax.axvline(0, color="0.3", lw=1)
        ax.set_title(f"Q{a['n']}", loc="left")
        if not bars:
            ax.text(0.5, 0.5, "not measured yet", ha="center", va="center", transform=ax.transAxes)
            ax.set_yticks([])
            continue
        y = list(range(len(bars)))[::-1]
        for yi, b in zip(y, bars):
            ax.barh(yi, b["mean"], color=COLOURS[b["model"]], height=0.6)
            ax.errorbar(b["mean"], yi, xerr=[[b["mean"] - b["lo"]], [b["hi"] - b["mean"]]], color="black",
                        capsize=4, lw=1.4)
        ax.set_yticks(y, [b["label"] for b in bars])
        sizes = [abs(x) for b in bars for x in (b["lo"], b["hi"]) if x]
        if sizes and max(sizes) > 20 * min(abs(b["mean"]) or max(sizes) for b in bars):
            ax.set_xscale("symlog", linthresh=0.05)   # a 0.02-nat bar beside a 6-nat one stays visible
            lo, hi = min(0.0, *(b["lo"] for b in bars)), max(0.0, *(b["hi"] for b in bars))
            ax.set_xlim(lo * 1.6 - 0.01, hi * 1.6 + 0.01)
            ticks = [t for t in (-1.0, -0.1, 0.0, 0.1, 1.0, 10.0) if lo * 1.6 - 0.01 <= t <= hi * 1.6 + 0.01]
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])   # few plain labels: symlog's crowd around 0
            ax.xaxis.set_minor_formatter(NullFormatter())      # symlog's minor labels overlapped the major ones
        ax.set_xlabel("loss change (nats)")
    fig.tight_layout()
    return fig
