"""Chapter 02's plots and widgets: attention patterns, swap / frozen-routing effects, QK and OV circuits, the
value-blend / temperature widget (a thin ``ipywidgets.interactive`` over
:func:`vrs_edu.chapters.ch02_qk_routes_v_carries.readout.blend_and_temperature`), and the weight-or-norm widget over
:func:`vrs_edu.chapters.ch02_qk_routes_v_carries.readout.attention_views` (Kobayashi et al., arXiv 2004.10102).

Every figure and widget takes ``lang`` (None: the running notebook's edition) and labels itself in that edition's
language; a Korean label that mixes Hangul with mathtext is set in NanumGothic
(:func:`vrs_edu.viz.plots.set_mixed_korean_text`)."""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from vrs_edu.chapters.ch01_two_axes.figures import _show_token
from vrs_edu.chapters.ch02_qk_routes_v_carries.prose import condition_label, head_label
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import attention_views, blend_and_temperature, map_distance
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.viz.controls import change_from_default, label_style
from vrs_edu.viz.plots import set_mixed_korean_text
from vrs_edu.viz.schematics import V


def plot_patterns(patterns: dict[int, object], tokens: list[str], lang: str | None = None):
    """Attention patterns of every head of the given layers: ``patterns[layer]`` is an (H, T, T) array. One row of
    heatmaps per layer; row = query position, column = key position. Labels in ``lang`` (None: the running
    edition)."""
    lang = resolve_language(lang)
    layers = list(patterns)
    H = patterns[layers[0]].shape[0]
    fig, axes = plt.subplots(len(layers), H, figsize=(2.35 * H + 0.9, 2.6 * len(layers)), squeeze=False)
    labels = [_show_token(t) for t in tokens]
    for r, l in enumerate(layers):
        for h in range(H):
            ax = axes[r][h]
            sns.heatmap(patterns[l][h], ax=ax, cmap="rocket_r", vmin=0, vmax=1, cbar=False, square=True,
                        xticklabels=labels, yticklabels=labels if h == 0 else False)
            ax.set_title(head_label(l, h, lang))
            ax.tick_params(labelrotation=0)
            ax.set_xlabel(in_language("key (read)", "키 (읽히는 위치)", lang))
        axes[r][0].set_ylabel(in_language("query (reading)", "쿼리 (읽는 위치)", lang))
    fig.tight_layout(rect=(0, 0, 0.93, 1))
    cax = fig.add_axes((0.945, 0.15, 0.015, 0.7))
    fig.colorbar(axes[0][0].collections[0], cax=cax, label=in_language("attention weight", "어텐션 가중치", lang))
    return fig


def plot_head_writes(norms, title: str | None = None, lang: str | None = None):
    """Heatmap (L, H) of the mean norm of each head's write into the residual stream; ``title`` (None: "mean ‖what
    each head writes‖") and the labels in ``lang`` (None: the running edition)."""
    lang = resolve_language(lang)
    fig, ax = plt.subplots(figsize=(4.8, 3.2))
    sns.heatmap(norms, ax=ax, annot=True, fmt=".2f", cmap="crest",
                cbar_kws={"label": in_language("mean ‖write‖", "평균 ‖쓰기‖", lang)})
    ax.set_xlabel(in_language("head", "헤드", lang))
    ax.set_ylabel(in_language("layer", "층", lang))
    ax.set_title(title if title is not None else
                 in_language("mean ‖what each head writes‖", "평균 ‖각 헤드가 쓰는 것‖", lang))
    fig.tight_layout()
    return fig


def plot_layer_effects(result: dict, names: list[str], title: str = "", lang: str | None = None):
    """Grouped bars of paired loss changes per layer (a
    :func:`~vrs_edu.chapters.ch02_qk_routes_v_carries.readout.layer_interventions` result), with ±1 standard error;
    conditions that do not apply at a layer are left out. The legend names the conditions and the axes are labelled
    in ``lang`` (None: the running edition; :func:`~vrs_edu.chapters.ch02_qk_routes_v_carries.prose.condition_label`).
    """
    lang = resolve_language(lang)
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
        ax.bar(xs, ms, width=width, yerr=es, capsize=2, label=condition_label(name, lang))
    ax.set_xticks(result["layers"], [in_language(f"layer {l}", f"층 {l}", lang) for l in result["layers"]])
    ax.set_ylabel(in_language("Δ loss (nats)", "Δ 손실 (nats)", lang))
    ax.axhline(0, color="black", lw=0.8)
    if title:
        ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return fig


def plot_circuits(qk, ov, tokens: list[str], title: str = "", lang: str | None = None):
    """The QK circuit (query token × key token) and OV circuit (attended token × output token) of one head on a
    subset of tokens, side by side. ``qk`` and ``ov`` are (n, n) arrays over the same ``tokens``.

    Each QK row is drawn minus its mean: the softmax over keys ignores a constant added to one query's scores, so
    only the differences within a row decide where that query attends. Labels in ``lang`` (None: the running
    edition)."""
    lang = resolve_language(lang)

    def t(en: str, ko: str) -> str:
        return in_language(en, ko, lang)
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.6))
    labels = [_show_token(t) for t in tokens]
    qk = np.asarray(qk)
    qk = qk - qk.mean(-1, keepdims=True)
    panels = ((axes[0], qk, t("QK circuit (row mean removed): where a token attends",
                              "QK 회로 (행 평균을 뺌): 토큰이 어텐션하는 곳"),
               t("key token", "키 토큰"), t("query token", "쿼리 토큰"), t("score − row mean", "점수 − 행 평균")),
              (axes[1], ov, t("OV circuit: what it writes", "OV 회로: 헤드가 쓰는 것"),
               t("output token (logit raised)", "출력 토큰 (올라가는 로짓)"), t("attended token", "어텐션받는 토큰"),
               t("logit raised", "올라가는 로짓")))
    for ax, m, name, xl, yl, cbar in panels:
        sns.heatmap(m, ax=ax, cmap="vlag", center=0, xticklabels=labels, yticklabels=labels,
                    cbar_kws={"label": cbar})
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
                 tokens: list[str] | None = None, n_show: int = 16, batch: int = 0, lang: str | None = None):
    """The widget's figure. Left: one head's pattern on the first ``n_show`` positions of sequence ``batch`` at
    ``temperature`` (the blend does not move the pattern of its own layer: values are not read by Q·K). Right: the
    loss against the weight w of V_1 in the values layer ``layer`` moves, ``(1-w)·V_l + w·V_1``, at this
    temperature, with this setting marked (red) and the default (w = 0, temperature 1) as a larger hollow grey ring around
    it, visible where the two coincide.
    Returns ``(figure, result dict of blend_and_temperature with "default_loss" and "default_entropy" added)``.
    Labels in ``lang`` (None: the running edition)."""
    lang = resolve_language(lang)

    def t(en: str, ko: str) -> str:
        return in_language(en, ko, lang)
    r = blend_and_temperature(model, x, y, layer, weight, temperature, head, batch)
    d = blend_and_temperature(model, x, y, layer, 0.0, 1.0, head, batch)
    r = dict(r, default_loss=d["loss"], default_entropy=d["entropy"])
    ws = np.linspace(0.0, 1.0, round(1 / W_STEP) + 1)
    curve = [blend_and_temperature(model, x, y, layer, float(w), temperature, head, batch)["loss"] for w in ws]
    n = min(n_show, x.size(1))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.5, 4.6), gridspec_kw={"width_ratios": [1.25, 1]})
    labels = [_show_token(t) for t in tokens[:n]] if tokens else "auto"
    sns.heatmap(r["pattern"][:n, :n], ax=ax, cmap="rocket_r", vmin=0, vmax=1, square=True,
                xticklabels=labels, yticklabels=labels,
                cbar_kws={"label": t("attention weight", "어텐션 가중치")})
    ax.tick_params(labelrotation=0)
    ax.set_xlabel(t("key position (character read)", "키 위치 (읽히는 문자)"))
    ax.set_ylabel(t("query position (character reading)", "쿼리 위치 (읽는 문자)"))
    entropy = change_from_default(r['entropy'], r['default_entropy'], '.2f', ' nats', lang)
    ax.set_title(t(f"layer {layer} head {head}, w(V_1) {weight:.2f}, temperature {temperature:.2f}: "
                   f"loss {r['loss']:.3f}\npattern entropy {entropy}",
                   f"층 {layer} 헤드 {head}, w(V_1) {weight:.2f}, 온도 {temperature:.2f}: "
                   f"손실 {r['loss']:.3f}\n패턴 엔트로피 {entropy}"))
    ax2.plot(ws, curve, marker="o", color="C0", label=t(f"temperature {temperature:.2f}", f"온도 {temperature:.2f}"))
    # A large hollow grey ring under the red dot: at the default setting the two sit on the same point, and the
    # ring keeps the default visible around it.
    ax2.scatter([0.0], [d["loss"]], s=260, facecolors="none", edgecolors="0.45", linewidths=2, zorder=3,
                label=t("default (w 0, temperature 1)", "기본값 (w 0, 온도 1)"))
    ax2.scatter([weight], [r["loss"]], s=60, color="red", zorder=4, label=t("this setting", "이 설정"))
    ax2.set_xlabel(t(f"w(V_1): weight of V_1 in layer {layer}'s values", f"w(V_1): 층 {layer}의 값에서 V_1의 가중치"))
    ax2.set_ylabel(t("loss on the sentence (nats)", "문장에서의 손실 (nats)"))
    ax2.set_title(t("loss ", "손실 ") + change_from_default(r['loss'], d['loss'], '.3f', ' nats', lang))
    ax2.legend()
    fig.tight_layout()
    return fig, r


def blend_widget(model, x, y, layer: int, tokens: list[str] | None = None, head: int = 0, lang: str | None = None):
    """Two sliders for one layer: the weight of V_1 in the values it moves (0 = its own V, 1 = V_1 only; step 0.25)
    and the attention temperature (×2^0.25 a step), and one for the head; redraws :func:`blend_figure`. Labels in
    ``lang`` (None: the running edition, read when the widget is built).

    Steps from the measured sensitivity of chapter 02's model (last layer, head 0): w 0 → 0.05 moved the loss by
    0.0004 nats and 0 → 0.10 by 0.0003 (invisible), 0 → 0.25 by 0.009 and 0 → 1 by 0.214; one temperature step
    moves the pattern's entropy by 0.16–0.18 nats and single attention weights by up to 0.10."""
    lang = resolve_language(lang)

    def show(weight=0.0, temperature=1.0, head=head):
        blend_figure(model, x, y, layer, weight, temperature, head, tokens, lang=lang)
        plt.show()

    return W.interactive(
        show,
        weight=W.FloatSlider(value=0.0, min=0.0, max=1.0, step=W_STEP, description="w(V_1)", readout_format=".2f",
                             continuous_update=False, style=label_style()),
        temperature=W.FloatLogSlider(value=1.0, base=2, min=-2, max=2, step=0.25,
                                     description=in_language("temperature", "온도", lang),
                                     readout_format=".2f", continuous_update=False, style=label_style()),
        head=W.IntSlider(value=head, min=0, max=model.cfg.n_heads - 1, description=in_language("head", "헤드", lang),
                         continuous_update=False, style=label_style()))


# ---------------------------------------------------------------------------------------------------------------
# Attention is not only a weight: the weight map and the norm map of one head, and the widget that toggles them

VIEWS = {"weight": r"weight $\alpha_{ij}$ (QK)",                                  # the widget's toggle -> title
         "norm": r"norm $\Vert\alpha_{ij}\,f(x_j)\Vert$ (QK, V, O)"}
VIEWS_KO = {"weight": r"가중치 $\alpha_{ij}$ (QK)", "norm": r"노름 $\Vert\alpha_{ij}\,f(x_j)\Vert$ (QK, V, O)"}
VIEW_NAMES_KO = {"weight": "가중치", "norm": "노름"}                                 # the toggle's buttons


def _map_heatmap(ax, m, labels, title: str, cbar: bool = True, lang: str = "en"):
    """One (n, n) map on the chapter's pattern scale (0 to 1, rows = queries, columns = sources)."""
    sns.heatmap(np.asarray(m), ax=ax, cmap="rocket_r", vmin=0, vmax=1, square=True, cbar=cbar,
                xticklabels=labels, yticklabels=labels,
                cbar_kws={"label": in_language("share of the query's row", "쿼리 행에서 차지하는 몫", lang)})
    ax.tick_params(labelrotation=0)
    ax.set_xlabel(in_language("source j (character read)", "소스 j (읽히는 문자)", lang))
    ax.set_title(title)


def plot_weight_vs_norm(weight, norm, tokens: list[str], layer: int, head: int, lang: str | None = None):
    """One head's two maps of the same positions side by side: the weight map α_ij (QK alone) and the norm-based
    map ‖α_ij f(x_j)‖ normalised per query (QK, V and O; Kobayashi et al., arXiv 2004.10102), each an (n, n) array
    for the n ``tokens``, rows = queries i, columns = sources j, on one colour scale, so that a column whose vectors
    are short fades from the left panel to the right one.

    Labels in ``lang`` (None: the running edition). Raises ValueError when a map is not (n, n) for the n tokens."""
    lang = resolve_language(lang)
    n = len(tokens)
    if tuple(weight.shape) != (n, n) or tuple(norm.shape) != (n, n):
        raise ValueError(f"plot_weight_vs_norm: expected weight and norm of shape ({n}, {n}) for {n} tokens, got "
                         f"{tuple(weight.shape)} and {tuple(norm.shape)}")
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.8))
    labels = [_show_token(t) for t in tokens]
    name = head_label(layer, head, lang)
    _map_heatmap(axes[0], weight, labels, f"{name}: " + in_language("weight α", "가중치 α", lang), cbar=False,
                 lang=lang)
    _map_heatmap(axes[1], norm, labels, f"{name}: " + in_language("norm ‖α f(x)‖", "노름 ‖α f(x)‖", lang), lang=lang)
    axes[0].set_ylabel(in_language("query i (character reading)", "쿼리 i (읽는 문자)", lang))
    fig.tight_layout()
    return fig


def norm_view_figure(views: dict, layer: int, head: int, view: str = "weight", tokens: list[str] | None = None,
                     n_show: int = 16, batch: int = 0, lang: str | None = None):
    """The widget's figure, from an :func:`~vrs_edu.chapters.ch02_qk_routes_v_carries.readout.attention_views`
    result. Left: one head's map on the first ``n_show`` positions of sequence ``batch``, read by ``view``
    (``"weight"``: α; ``"norm"``: ‖α_ij f(x_j)‖ normalised per query); the figure's title gives how far the two
    maps are apart on the whole sequence (:func:`~vrs_edu.chapters.ch02_qk_routes_v_carries.readout.map_distance`).
    Right: ‖f(x_j)‖ of each of those sources, the factor the norm view multiplies each column by before the rows
    are normalised. Returns ``(figure, {"map": (n, n) tensor shown, "f_norm": (n,) tensor, "distance": float})``.
    Labels in ``lang`` (None: the running edition).

    Raises ValueError for a ``view`` other than ``"weight"`` or ``"norm"`` or a layer or head out of range."""
    if view not in VIEWS:
        raise ValueError(f"norm_view_figure: expected view 'weight' or 'norm', got {view!r}")
    lang = resolve_language(lang)
    L, _, H, T, _ = views["weight"].shape
    if not (0 <= layer < L and 0 <= head < H):
        raise ValueError(f"norm_view_figure: expected layer in 0..{L - 1} and head in 0..{H - 1}, got layer {layer} "
                         f"and head {head}")
    n = min(n_show, T)
    shown = views[view][layer, batch, head, :n, :n]
    f_norm = views["f_norm"][layer, batch, head, :n]
    distance = float(map_distance(views["weight"][layer, batch, head], views["norm"][layer, batch, head]))
    labels = [_show_token(t) for t in tokens[:n]] if tokens else list(range(n))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.5, 5.0), gridspec_kw={"width_ratios": [1.25, 1]})
    ko = lang == "ko"
    _map_heatmap(ax, shown, labels, f"{head_label(layer, head, lang)}: {(VIEWS_KO if ko else VIEWS)[view]}",
                 lang=lang)
    fig.suptitle(f"이 헤드의 가중치 지도와 노름 지도의 차이: {distance:.2f} (0: 같은 지도, 1: 공통된 소스가 없음)" if ko else
                 f"the head's weight map and norm map differ by {distance:.2f} (0: the same map, 1: no source in "
                 "common)")
    ax.set_ylabel(in_language("query i (character reading)", "쿼리 i (읽는 문자)", lang))
    ax2.bar(range(n), f_norm.numpy(), color=V)
    ax2.set_xticks(range(n), labels)
    ax2.set_xlabel(in_language("source j", "소스 j", lang))
    ax2.set_ylabel(r"$\Vert f(x_j)\Vert$")
    ax2.set_title(in_language("what each source writes at weight 1", "각 소스가 가중치 1일 때 쓰는 것", lang))
    if ko:
        set_mixed_korean_text(fig)      # before tight_layout, whose drawing would log the missing glyphs
    fig.tight_layout()
    return fig, {"map": shown, "f_norm": f_norm, "distance": distance}


def norm_view_widget(model, x, tokens: list[str] | None = None, layer: int = 0, head: int = 0,
                     lang: str | None = None):
    """Choose a layer and a head (sliders) and read its attention by the weight or by the norm (toggle); redraws
    :func:`norm_view_figure`. The maps of every layer and head are computed once, when the widget is built (one
    forward pass of ``x``), so a move only redraws. Every step shows another map: each head of the chapter's model
    has its own pattern, and the two views of a head differ by 0.03 to 0.12 (total variation) on the chapter's
    sentence, besides the title, which names the view. Labels and the toggle's buttons in ``lang`` (None: the
    running edition, read when the widget is built); the callback's ``view`` stays ``"weight"`` or ``"norm"``."""
    lang = resolve_language(lang)
    views = attention_views(model, x)
    L, _, H = views["weight"].shape[:3]

    def show(layer=layer, head=head, view="weight"):
        norm_view_figure(views, layer, head, view, tokens, lang=lang)
        plt.show()

    def t(en: str, ko: str) -> str:
        return in_language(en, ko, lang)
    options = [(VIEW_NAMES_KO[v], v) for v in VIEWS] if lang == "ko" else list(VIEWS)
    return W.interactive(
        show,
        layer=W.IntSlider(value=layer, min=0, max=L - 1, description=t("layer", "층"), continuous_update=False,
                          style=label_style()),
        head=W.IntSlider(value=head, min=0, max=H - 1, description=t("head", "헤드"), continuous_update=False,
                         style=label_style()),
        view=W.ToggleButtons(options=options, value="weight", description=t("read by", "읽는 방식"),
                             style=label_style()))
