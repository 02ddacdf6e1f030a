"""Chapter 02's plots and widget: attention patterns, swap / frozen-routing effects, QK and OV circuits, and the
value-blend / temperature widget (a thin ``ipywidgets.interactive`` over
:func:`vrs_edu.lab.routing.blend_and_temperature`)."""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ..lab.routing import blend_and_temperature
from .residual import _show_token


def plot_patterns(patterns: dict[int, object], tokens: list[str]):
    """Attention patterns of every head of the given layers: ``patterns[layer]`` is an (H, T, T) array. One row of
    heatmaps per layer; row = query position, column = key position."""
    layers = list(patterns)
    H = patterns[layers[0]].shape[0]
    fig, axes = plt.subplots(len(layers), H, figsize=(2.9 * H, 2.7 * len(layers)), squeeze=False)
    labels = [_show_token(t) for t in tokens]
    for r, l in enumerate(layers):
        for h in range(H):
            ax = axes[r][h]
            sns.heatmap(patterns[l][h], ax=ax, cmap="rocket_r", vmin=0, vmax=1, cbar=False, square=True,
                        xticklabels=labels, yticklabels=labels)
            ax.set_title(f"layer {l}, head {h}", fontsize=9)
            ax.tick_params(labelsize=6, labelrotation=0)
    fig.tight_layout()
    return fig


def plot_head_writes(norms, title: str = "mean ‖what each head writes‖"):
    """Heatmap (L, H) of the mean norm of each head's write into the residual stream."""
    fig, ax = plt.subplots(figsize=(4.8, 3.2))
    sns.heatmap(norms, ax=ax, annot=True, fmt=".2f", cmap="crest")
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def plot_layer_effects(result: dict, names: list[str], title: str = ""):
    """Grouped bars of paired loss changes per layer (a :func:`~vrs_edu.lab.routing.layer_interventions` result),
    with ±1 standard error; conditions that do not apply at a layer are left out."""
    fig, ax = plt.subplots(figsize=(6.8, 3.2))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        xs, ms, es = [], [], []
        for j, l in enumerate(result["layers"]):
            e = result[name][j]
            if e is not None:
                xs.append(l - 0.4 + width * (i + 0.5))
                ms.append(e.mean)
                es.append(e.se)
        ax.bar(xs, ms, width=width, yerr=es, capsize=2, label=name)
    ax.set_xticks(result["layers"], [f"layer {l}" for l in result["layers"]])
    ax.set_ylabel("Δ loss (nats)")
    ax.axhline(0, color="black", lw=0.8)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_circuits(qk, ov, tokens: list[str], title: str = ""):
    """The QK circuit (query token × key token) and OV circuit (attended token × output token) of one head on a
    subset of tokens, side by side. ``qk`` and ``ov`` are (n, n) arrays over the same ``tokens``.

    Each QK row is drawn minus its mean: the softmax over keys ignores a constant added to one query's scores, so
    only the differences within a row decide where that query attends."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    labels = [_show_token(t) for t in tokens]
    qk = np.asarray(qk)
    qk = qk - qk.mean(-1, keepdims=True)
    for ax, m, name, xl, yl in ((axes[0], qk, "QK circuit (row mean removed): where a token attends", "key token",
                                 "query token"),
                                (axes[1], ov, "OV circuit: what it writes", "output token (logit raised)",
                                 "attended token")):
        sns.heatmap(m, ax=ax, cmap="vlag", center=0, xticklabels=labels, yticklabels=labels)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.tick_params(labelsize=7, labelrotation=0)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# The widget: blend a layer's values toward V_1, and change its attention temperature


def blend_figure(model, x, y, layer: int, weight: float = 0.0, temperature: float = 1.0, head: int = 0,
                 tokens: list[str] | None = None, n_show: int = 24, batch: int = 0):
    """The widget's figure: one head's pattern on the first ``n_show`` positions of sequence ``batch`` while layer
    ``layer`` moves ``(1-w)·V_l + w·V_1`` at ``temperature``; loss and entropy in the title.
    Returns ``(figure, result dict of blend_and_temperature)``."""
    r = blend_and_temperature(model, x, y, layer, weight, temperature, head, batch)
    n = min(n_show, x.size(1))
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    labels = [_show_token(t) for t in tokens[:n]] if tokens else "auto"
    sns.heatmap(r["pattern"][:n, :n], ax=ax, cmap="rocket_r", vmin=0, vmax=1, square=True,
                xticklabels=labels, yticklabels=labels)
    ax.tick_params(labelsize=7, labelrotation=0)
    ax.set_title(f"layer {layer} head {head}: w(V_1) = {weight:.2f}, temperature {temperature:.2f}\n"
                 f"loss {r['loss']:.3f} nats, pattern entropy {r['entropy']:.2f} nats", fontsize=9)
    fig.tight_layout()
    return fig, r


def blend_widget(model, x, y, layer: int, tokens: list[str] | None = None, head: int = 0):
    """Two sliders for one layer: the weight of V_1 in the values it moves (0 = its own V, 1 = V_1 only) and the
    attention temperature; redraws :func:`blend_figure`."""
    def show(weight=0.0, temperature=1.0, head=head):
        blend_figure(model, x, y, layer, weight, temperature, head, tokens)
        plt.show()

    return W.interactive(
        show,
        weight=W.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.05, description="w(V_1)", readout_format=".2f",
                             continuous_update=False),
        temperature=W.FloatLogSlider(value=1.0, base=2, min=-2, max=2, step=0.25, description="temperature",
                                     readout_format=".2f", continuous_update=False),
        head=W.IntSlider(value=head, min=0, max=model.cfg.n_heads - 1, description="head",
                         continuous_update=False))
