"""Chapter 02's plots and widget: attention patterns, swap / frozen-routing effects, QK and OV circuits, and the
value-blend / temperature widget (a thin ``ipywidgets.interactive`` over
:func:`vrs_edu.chapters.ch02_qk_routes_v_carries.readout.blend_and_temperature`)."""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from vrs_edu.chapters.ch01_two_axes.figures import _show_token
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import blend_and_temperature
from vrs_edu.viz.controls import change_from_default, label_style


def plot_patterns(patterns: dict[int, object], tokens: list[str]):
    """Attention patterns of every head of the given layers: ``patterns[layer]`` is an (H, T, T) array. One row of
    heatmaps per layer; row = query position, column = key position."""
    layers = list(patterns)
    H = patterns[layers[0]].shape[0]
    fig, axes = plt.subplots(len(layers), H, figsize=(2.35 * H + 0.9, 2.6 * len(layers)), squeeze=False)
    labels = [_show_token(t) for t in tokens]
    for r, l in enumerate(layers):
        for h in range(H):
            ax = axes[r][h]
            sns.heatmap(patterns[l][h], ax=ax, cmap="rocket_r", vmin=0, vmax=1, cbar=False, square=True,
                        xticklabels=labels, yticklabels=labels if h == 0 else False)
            ax.set_title(f"layer {l}, head {h}")
            ax.tick_params(labelrotation=0)
            ax.set_xlabel("key (read)")
        axes[r][0].set_ylabel("query (reading)")
    fig.tight_layout(rect=(0, 0, 0.93, 1))
    cax = fig.add_axes((0.945, 0.15, 0.015, 0.7))
    fig.colorbar(axes[0][0].collections[0], cax=cax, label="attention weight")
    return fig


def plot_head_writes(norms, title: str = "mean ‖what each head writes‖"):
    """Heatmap (L, H) of the mean norm of each head's write into the residual stream."""
    fig, ax = plt.subplots(figsize=(4.8, 3.2))
    sns.heatmap(norms, ax=ax, annot=True, fmt=".2f", cmap="crest", cbar_kws={"label": "mean ‖write‖"})
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def plot_layer_effects(result: dict, names: list[str], title: str = ""):
    """Grouped bars of paired loss changes per layer (a :func:`~vrs_edu.chapters.ch02_qk_routes_v_carries.readout.layer_interventions` result),
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
    ax.legend()
    fig.tight_layout()
    return fig


def plot_circuits(qk, ov, tokens: list[str], title: str = ""):
    """The QK circuit (query token × key token) and OV circuit (attended token × output token) of one head on a
    subset of tokens, side by side. ``qk`` and ``ov`` are (n, n) arrays over the same ``tokens``.

    Each QK row is drawn minus its mean: the softmax over keys ignores a constant added to one query's scores, so
    only the differences within a row decide where that query attends."""
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.6))
    labels = [_show_token(t) for t in tokens]
    qk = np.asarray(qk)
    qk = qk - qk.mean(-1, keepdims=True)
    for ax, m, name, xl, yl in ((axes[0], qk, "QK circuit (row mean removed): where a token attends", "key token",
                                 "query token"),
                                (axes[1], ov, "OV circuit: what it writes", "output token (logit raised)",
                                 "attended token")):
        sns.heatmap(m, ax=ax, cmap="vlag", center=0, xticklabels=labels, yticklabels=labels,
                    cbar_kws={"label": "score − row mean" if m is qk else "logit raised"})
        ax.set_title(name)
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.tick_params(labelrotation=0)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# The widget: blend a layer's values toward V_1, and change its attention temperature


W_STEP = 0.25   # the w(V_1) slider's step (see blend_widget)


def blend_figure(model, x, y, layer: int, weight: float = 0.0, temperature: float = 1.0, head: int = 0,
                 tokens: list[str] | None = None, n_show: int = 16, batch: int = 0):
    """The widget's figure. Left: one head's pattern on the first ``n_show`` positions of sequence ``batch`` at
    ``temperature`` (the blend does not move the pattern of its own layer: values are not read by Q·K). Right: the
    loss against the weight w of V_1 in the values layer ``layer`` moves, ``(1-w)·V_l + w·V_1``, at this
    temperature, with this setting marked (red) and the default (w = 0, temperature 1) as a larger hollow grey ring around
    it, visible where the two coincide.
    Returns ``(figure, result dict of blend_and_temperature with "default_loss" and "default_entropy" added)``."""
    r = blend_and_temperature(model, x, y, layer, weight, temperature, head, batch)
    d = blend_and_temperature(model, x, y, layer, 0.0, 1.0, head, batch)
    r = dict(r, default_loss=d["loss"], default_entropy=d["entropy"])
    ws = np.linspace(0.0, 1.0, round(1 / W_STEP) + 1)
    curve = [blend_and_temperature(model, x, y, layer, float(w), temperature, head, batch)["loss"] for w in ws]
    n = min(n_show, x.size(1))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.5, 4.6), gridspec_kw={"width_ratios": [1.25, 1]})
    labels = [_show_token(t) for t in tokens[:n]] if tokens else "auto"
    sns.heatmap(r["pattern"][:n, :n], ax=ax, cmap="rocket_r", vmin=0, vmax=1, square=True,
                xticklabels=labels, yticklabels=labels, cbar_kws={"label": "attention weight"})
    ax.tick_params(labelrotation=0)
    ax.set_xlabel("key position (character read)")
    ax.set_ylabel("query position (character reading)")
    ax.set_title(f"layer {layer} head {head}, w(V_1) {weight:.2f}, temperature {temperature:.2f}: "
                 f"loss {r['loss']:.3f}\npattern entropy "
                 f"{change_from_default(r['entropy'], r['default_entropy'], '.2f', ' nats')}")
    ax2.plot(ws, curve, marker="o", color="C0", label=f"temperature {temperature:.2f}")
    # A large hollow grey ring under the red dot: at the default setting the two sit on the same point, and the
    # ring keeps the default visible around it.
    ax2.scatter([0.0], [d["loss"]], s=260, facecolors="none", edgecolors="0.45", linewidths=2, zorder=3,
                label="default (w 0, temperature 1)")
    ax2.scatter([weight], [r["loss"]], s=60, color="red", zorder=4, label="this setting")
    ax2.set_xlabel(f"w(V_1): weight of V_1 in layer {layer}'s values")
    ax2.set_ylabel("loss on the sentence (nats)")
    ax2.set_title(f"loss {change_from_default(r['loss'], d['loss'], '.3f', ' nats')}")
    ax2.legend()
    fig.tight_layout()
    return fig, r


def blend_widget(model, x, y, layer: int, tokens: list[str] | None = None, head: int = 0):
    """Two sliders for one layer: the weight of V_1 in the values it moves (0 = its own V, 1 = V_1 only; step 0.25)
    and the attention temperature (×2^0.25 a step); redraws :func:`blend_figure`.

    Steps from the measured sensitivity of chapter 02's model (last layer, head 0): w 0 → 0.05 moved the loss by
    0.0004 nats and 0 → 0.10 by 0.0003 (invisible), 0 → 0.25 by 0.009 and 0 → 1 by 0.214; one temperature step
    moves the pattern's entropy by 0.16–0.18 nats and single attention weights by up to 0.10."""
    def show(weight=0.0, temperature=1.0, head=head):
        blend_figure(model, x, y, layer, weight, temperature, head, tokens)
        plt.show()

    return W.interactive(
        show,
        weight=W.FloatSlider(value=0.0, min=0.0, max=1.0, step=W_STEP, description="w(V_1)", readout_format=".2f",
                             continuous_update=False, style=label_style()),
        temperature=W.FloatLogSlider(value=1.0, base=2, min=-2, max=2, step=0.25, description="temperature",
                                     readout_format=".2f", continuous_update=False, style=label_style()),
        head=W.IntSlider(value=head, min=0, max=model.cfg.n_heads - 1, description="head",
                         continuous_update=False, style=label_style()))
