"""Chapter 01's plots and widget: the residual stream along depth. Each plot takes numbers and returns its Figure;
the widget is a thin ``ipywidgets.interactive`` over :func:`vrs_edu.chapters.ch01_two_axes.readout.scaled_blocks_prediction`."""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt
import seaborn as sns

from vrs_edu.chapters.ch01_two_axes.readout import Attribution, scaled_blocks_prediction
from vrs_edu.chapters.ch01_two_axes.prose import component_label
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.viz.controls import change_from_default, label_style
from vrs_edu.viz.plots import depth_axis_label


def _show_token(s: str) -> str:
    return {" ": "␣", "\n": "⏎", "\t": "⇥"}.get(s, s)


def plot_two_axes(norms, cosines, tokens: list[str], lang: str | None = None):
    """The depth stack of one sequence as two heatmaps over (depth l, position t), one above the other: the state's
    norm, and its cosine to the token's own x0. Inputs are (L+1, T) arrays; ``tokens`` labels the T positions.
    Stacked rather than side by side, each heatmap gets the page's width: a character per column stays readable.
    Labels in ``lang`` (default: the running edition)."""
    fig, axes = plt.subplots(2, 1, figsize=(10.5, 6.2), sharex=True)
    labels = [_show_token(t) for t in tokens]
    titles = (in_language("‖h_l‖ (norm of the state)", "‖h_l‖ (상태의 노름)", lang),
              in_language("cos(h_l, x0) (token identity left)", "cos(h_l, x0) (남은 토큰 정체성)", lang))
    for ax, data, title, cmap in ((axes[0], norms, titles[0], "viridis"), (axes[1], cosines, titles[1], "mako")):
        sns.heatmap(data, ax=ax, cmap=cmap, xticklabels=labels, cbar=True, cbar_kws={"label": title.split(" (")[0]})
        ax.set_title(title)
        ax.set_ylabel(in_language("depth l", "깊이 l", lang))
        ax.tick_params(axis="x", labelrotation=0)
        ax.tick_params(axis="y", labelrotation=0)
    axes[1].set_xlabel(in_language(
        "sequence position t: attention mixes along this axis; the residual adds along depth",
        "시퀀스 위치 t: 어텐션은 이 축을 따라 섞고, 잔차는 깊이를 따라 더합니다", lang))
    fig.tight_layout()
    return fig


def plot_depth_profile(norms: list[float], cosines: list[float], lens_loss: list[float] | None = None,
                       lang: str | None = None):
    """Per depth l = 0..L: mean stream norm, mean cosine to x0 and (optionally) the logit-lens loss; labels in
    ``lang`` (default: the running edition)."""
    n = 3 if lens_loss is not None else 2
    fig, axes = plt.subplots(1, n, figsize=(3.5 * n, 3.2))
    depth = range(len(norms))
    series = [(norms, in_language("mean ‖h_l‖", "평균 ‖h_l‖", lang)),
              (cosines, in_language("mean cos(h_l, x0)", "평균 cos(h_l, x0)", lang))]
    if lens_loss is not None:
        series.append((lens_loss, in_language("logit-lens loss (nats)", "로짓 렌즈 손실 (nats)", lang)))
    for ax, (ys, label) in zip(axes, series):
        ax.plot(depth, ys, marker="o")
        ax.set_xlabel(depth_axis_label(lang))
        ax.set_ylabel(label)
    fig.tight_layout()
    return fig


def plot_attribution(att: Attribution, token_str: str, context: str = "", lang: str | None = None):
    """Direct logit attribution as bars, one per component, with the total logit in the title; labels in ``lang``
    (default: the running edition)."""
    fig, ax = plt.subplots(figsize=(8, 3.2))
    colors = ["#888888" if lab == "embed" else ("#4C72B0" if lab.startswith("attn") else "#DD8452")
              for lab in att.labels]
    ax.bar(range(len(att.values)), att.values, color=colors)
    ax.set_xticks(range(len(att.labels)), [component_label(lab, lang) for lab in att.labels], rotation=45,
                  ha="right")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel(in_language("component writing into the stream (embedding; attention and MLP of each block)",
                              "스트림에 쓰는 성분 (임베딩; 각 블록의 어텐션과 MLP)", lang))
    ax.set_ylabel(in_language("contribution to the logit", "로짓에 대한 기여", lang))
    if resolve_language(lang) == "ko":
        ax.set_title(f"{context!r} 뒤 {_show_token(token_str)!r}의 로짓: {att.logit:.2f} = 막대의 합")
    else:
        ax.set_title(f"logit of {_show_token(token_str)!r} after {context!r}: {att.logit:.2f} = sum of the bars")
    fig.tight_layout()
    return fig


def plot_effects(effects: dict, lang: str | None = None):
    """Loss change when one block's write is removed: directly (from the final sum only) vs in total (later blocks
    recompute). ``effects`` is :func:`~vrs_edu.chapters.ch01_two_axes.readout.direct_and_total_effects`' result.
    Labels in ``lang`` (default: the running edition)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    L = len(effects["direct"])
    xs = range(L)
    ax.bar([x - 0.2 for x in xs], effects["direct"], width=0.4,
           label=in_language("direct (final sum only)", "직접 (최종 합에서만)", lang))
    ax.bar([x + 0.2 for x in xs], effects["total"], width=0.4,
           label=in_language("total (later blocks recompute)", "총 (뒤쪽 블록이 다시 계산)", lang))
    ax.set_xticks(list(xs), [in_language(f"block {l}", f"블록 {l}", lang) for l in xs])
    ax.set_ylabel(in_language("Δ loss (nats)", "Δ 손실 (nats)", lang))
    ax.legend()
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# The widget: multiply each block's write by a slider


def block_scale_figure(model, x, y, scales, position: int, decode, batch: int = 0, k: int = 8,
                       lang: str | None = None):
    """The widget's figure: top-``k`` next-token probabilities at ``position`` with every block's write multiplied
    by ``scales`` (bars), the same tokens' probabilities in the model as trained (black ticks: the default, all
    scales 1), and the mean loss over ``x`` with its change from the default in the title. ``decode(id) -> str``
    names tokens; labels in ``lang`` (default: the running edition). Returns ``(figure, result dict of
    scaled_blocks_prediction)``."""
    ko = resolve_language(lang) == "ko"
    r = scaled_blocks_prediction(model, x, y, scales, position, batch, k)
    d = scaled_blocks_prediction(model, x, y, [1.0] * len(scales), position, batch, model.cfg.vocab_size)
    default_prob = dict(zip(d["top_ids"], d["top_probs"]))
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    target = int(y[batch, position])
    labels = [_show_token(decode(i)) for i in r["top_ids"]]
    colors = ["#55A868" if i == target else "#4C72B0" for i in r["top_ids"]]
    ax.bar(range(k), r["top_probs"], color=colors, label="현재 설정" if ko else "this setting")
    ax.scatter(range(k), [default_prob.get(i, 0.0) for i in r["top_ids"]], marker="_", s=400, color="black",
               linewidths=2, label="학습된 그대로 (모두 1)" if ko else "as trained (all 1)", zorder=3)
    ax.set_xticks(range(k), labels)
    ax.set_ylim(0, 1)
    ax.set_xlabel("다음 문자 (초록: 실제 문자)" if ko else "next character (green: the true one)")
    ax.set_ylabel("확률" if ko else "probability")
    ax.legend(loc="upper right")
    ax.set_title(block_scale_title(scales, r["loss"], d["loss"], _show_token(decode(target)), r["target_prob"],
                                   d["target_prob"], lang))
    fig.tight_layout()
    return fig, r


def block_scale_title(scales, loss: float, default_loss: float, target: str, prob: float, default_prob: float,
                      lang: str | None = None) -> str:
    """The widget figure's title: the scales, the loss with its change from the default, and p(true next) with its
    change, in ``lang`` (default: the running edition)."""
    listed = ", ".join(f"{s:.2f}" for s in scales)
    change = change_from_default(loss, default_loss, lang=lang)
    if resolve_language(lang) == "en":
        return f"scales {listed}\nloss {change}; p(true {target!r}) = {prob:.2f} ({prob - default_prob:+.2f})"
    return f"배수 {listed}\n손실 {change}; p(실제 {target!r}) = {prob:.2f} ({prob - default_prob:+.2f})"


def block_scale_widget(model, x, y, position: int, decode, batch: int = 0):
    """Sliders (0–2, step 0.25) multiplying each block's write; redraws :func:`block_scale_figure`.

    Step from the measured sensitivity of chapter 01's model: one step of 0.1 moved p(true next) by 0.003–0.034
    and the loss by ≤ 0.016 nats (invisible on the bars); one step of 0.25 moves p(true next) by 0.005–0.12 and the
    top bars by up to 0.12 (block 4: −0.12, block 0: +0.08)."""
    L = model.cfg.n_layers

    def show(**scales):
        block_scale_figure(model, x, y, [scales[f"block_{l}"] for l in range(L)], position, decode, batch)
        plt.show()

    sliders = {f"block_{l}": W.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.25,
                                           description=in_language(f"block {l}", f"블록 {l}"),
                                           readout_format=".2f", continuous_update=False, style=label_style())
               for l in range(L)}
    return W.interactive(show, **sliders)
