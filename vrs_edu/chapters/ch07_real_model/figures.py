"""Chapter 07's figures and its widget: how much of each token's q, k and v its identity explains, in a real model.

The numbers come from :func:`vrs_edu.chapters.ch07_real_model.probes.token_identity_scores` (tested without a browser); the widget is a
thin ``ipywidgets.interactive`` over :func:`identity_figure`.
"""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np

from vrs_edu.chapters.ch07_real_model.probes import PATHS, identity_summary, sentence_low, token_identity_scores
from vrs_edu.i18n.language import in_language
from vrs_edu.viz.controls import label_style

COLORS = {"q": "tab:blue", "k": "tab:orange", "v": "tab:green", "resid": "tab:gray"}


def plot_probe_table(table: dict, ax=None, title: str | None = None):
    """Held-out R² against layer for q, k, v (one curve each) and the stream entering each layer (dashed)."""
    if ax is None:
        fig, ax = plt.subplots()
    L = len(table["q"])
    for s in PATHS:
        ax.plot(range(L), table[s], marker="o", color=COLORS[s], label=s)
    ax.plot(range(L), table["resid"][:L], ls="--", marker=".", color=COLORS["resid"],
            label=in_language("stream (layer input)", "스트림 (층 입력)"))
    ax.set_xlabel(in_language("layer", "층"))
    ax.set_ylabel(in_language("held-out R² from token identity", "토큰 정체성으로 얻은 홀드아웃 R²"))
    ax.set_xticks(range(L))
    ax.set_ylim(min(0.0, min(min(table[k]) for k in (*PATHS, "resid"))) - 0.02, 1.02)
    ax.legend(loc="lower left", ncols=2)
    if title:
        ax.set_title(title)
    ax.figure.tight_layout()
    return ax.figure


def plot_identity_scores(tokens: list[str], scores: dict[str, list[float]], layer: int, ax=None,
                         y_low: float | None = None):
    """Grouped bars: per token, the per-token R² of its q, k and v from its identity (1 = all explained).
    ``y_low``: the lower end of the y-axis (the widget passes the lowest score of the sentence over every layer, so
    the axis stays fixed while the layer moves); it must not cut any bar."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(min(10.5, max(6.4, 0.32 * len(tokens) + 1.5)), 3.6))   # JupyterLab: 10.5 in
    x = np.arange(len(tokens))
    width = 0.8 / len(scores)
    for i, (s, vals) in enumerate(scores.items()):
        ax.bar(x + (i - (len(scores) - 1) / 2) * width, vals, width, color=COLORS.get(s), label=s)
    ax.set_xticks(x, tokens, rotation=60, ha="right")
    ax.axhline(0, color="black", lw=0.6)
    low = min(min(v) for v in scores.values())
    if y_low is not None and y_low > low:
        raise ValueError(f"y_low = {y_low} would cut bars that go down to {low}")
    ax.set_ylim(min(0.0, low if y_low is None else y_low) - 0.05, 1.05)   # the whole range of the data is shown
    ax.set_ylabel(in_language("per-token R² from identity", "정체성으로 얻은 토큰별 R²"))
    ax.set_title(in_language(f"layer {layer}: how much of each token's q, k, v is its identity",
                             f"층 {layer}: 각 토큰의 q, k, v 가운데 정체성이 설명하는 몫"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))   # outside: bars reach every corner
    ax.figure.tight_layout()
    return ax.figure


def identity_figure(real, probes: dict, sentence: str, layer: int, y_low: float | None = None):
    """The widget's figure for one sentence and layer; returns ``(fig, tokens, scores)``."""
    tokens, scores = token_identity_scores(real, probes, sentence, layer)
    return plot_identity_scores(tokens, scores, layer, y_low=y_low), tokens, scores


def identity_widget(real, probes: dict, sentences: list[str], layer: int = 3):
    """Choose a sentence (held-out: the probes never saw it) and a layer; see per token how much of q, k and v its
    identity explains."""
    L = real.model.cfg.n_layers
    if not 0 <= layer < L:
        raise ValueError(f"layer must be in 0..{L - 1}, got {layer}")
    if not sentences:
        raise ValueError("sentences is empty")

    lows: dict[str, float] = {}    # per sentence, computed on first use: the y-axis does not move with the layer

    def show(sentence=sentences[0], layer=layer):
        if sentence not in lows:
            lows[sentence] = sentence_low(real, probes, sentence)
        fig, tokens, scores = identity_figure(real, probes, sentence, layer, y_low=lows[sentence])
        plt.show()
        print(identity_summary(scores))

    options = [(s if len(s) <= 70 else s[:67] + "...", s) for s in sentences]
    return W.interactive(show, sentence=W.Dropdown(options=options, value=sentences[0],
                                                   description=in_language("sentence", "문장"),
                                                   layout=W.Layout(width="95%"), style=label_style()),
                         layer=W.IntSlider(value=layer, min=0, max=L - 1, step=1, description=in_language("layer", "층"),
                                           style=label_style()))


def plot_weight_and_norm(tokens: list[str], weight, norm, layer: int):
    """Two readings of one layer's attention on one sentence, side by side: the weight map mean_h α_ij and the norm
    map ‖Σ_h α_ij f_h(x_j)‖ normalised per query (Kobayashi et al., arXiv 2004.10102), each (T, T), rows = queries
    i, columns = sources j, on one colour scale so that a column's fading reads at once."""
    T = len(tokens)
    if tuple(weight.shape) != (T, T) or tuple(norm.shape) != (T, T):
        raise ValueError(f"weight and norm must be ({T}, {T}) for {T} tokens, got {tuple(weight.shape)} and "
                         f"{tuple(norm.shape)}")
    size = min(5.2, 1.6 + 0.17 * T)
    fig, axes = plt.subplots(1, 2, figsize=(2 * size + 1.0, size), sharey=True)
    top = float(max(weight.max(), norm.max()))
    titles = (in_language("weight  α (QK)", "가중치  α (QK)"),
              in_language("norm  ‖α f(x)‖ (QK, V and O)", "노름  ‖α f(x)‖ (QK, V, O)"))
    for ax, m, title in zip(axes, (weight, norm), titles):
        im = ax.imshow(np.asarray(m), cmap="viridis", vmin=0.0, vmax=top)
        ax.set_xticks(range(T), tokens, rotation=90)
        ax.set_title(in_language(f"layer {layer}: {title}", f"층 {layer}: {title}"))
        ax.set_xlabel(in_language("source j", "원천 j"))
    axes[0].set_yticks(range(T), tokens)
    axes[0].set_ylabel(in_language("query i", "쿼리 i"))
    fig.colorbar(im, ax=axes, shrink=0.8, label=in_language("share of the query's row", "쿼리 행에서의 몫"))
    return fig
