"""Chapter 05's plots and widget: learned depth weights as heatmaps (reading layer × source layer), one panel per
stream for the routers, and the window-K widget — a thin ``ipywidgets.interactive`` over :func:`~vrs_edu.lab.metrics.window_readout`
(a plain function, tested without a browser)."""
from __future__ import annotations

import math

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np
import torch

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import in_language
from vrs_edu.i18n.verdicts import verdict_word
from vrs_edu.lab.metrics import window_readout
from vrs_edu.viz.controls import label_style

# In which basis each mixer's weights are expressed: states X_j = the stream after block j, or outputs y_j = what
# block j wrote (y_0 = X_0 = the embedding). Source 0 is the embedding in both.
BASIS = {"denseformer": "states X_j", "elcbert": "outputs y_j", "attnres": "outputs y_j", "shortswa": "states X_j",
         "dca": "outputs y_j", "mudd": "states X_j", "vertical": "outputs y_j", "scalar_gain": "states X_j",
         "depth_attention": "values V_j"}
# (a figure's x label says "source j: X_j" or "source j: y_j"; j = 0 is the embedding in both)


def _basis(variant: str) -> str:
    return BASIS.get(variant.split("-")[0], "sources")


def plot_depth_weights(matrix: torch.Tensor, ax=None, title: str = "", basis: str = "sources", vmax: float | None = None,
                       cmap: str = "viridis", colorbar: bool = True, lang: str | None = None):
    """Heatmap of a (L+1, L+1) depth-weight matrix: row = the read for block l (last row: the final read-out),
    column = source layer j (0 = embedding). Entries above the diagonal (never readable) are blank.
    ``colorbar=False`` for a yes/no mask (its two colours are named in the title instead). Labels in ``lang``
    (None: the running edition)."""
    m = np.asarray(matrix, dtype=float)
    if ax is None:
        _, ax = plt.subplots(figsize=(3.6, 3.2))
    L1 = m.shape[0]
    im = ax.imshow(np.ma.masked_invalid(m), cmap=cmap, vmin=min(0.0, np.nanmin(m)), vmax=vmax)
    ax.set_xlabel(in_language(f"source j: {basis.split()[-1]} (0 = embedding)",
                              f"출처 j: {basis.split()[-1]} (0 = 임베딩)", lang))
    ax.set_ylabel(in_language("reading layer l", "읽는 층 l", lang))
    ax.grid(False)
    ax.set_xticks(range(L1))
    ax.set_yticks(range(L1))
    ax.set_yticklabels([str(l) if l < L1 - 1 else f"{l} ({in_language('out', '출력', lang)})" for l in range(L1)])
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=in_language("weight", "가중치", lang))
    return ax.figure


def grid_shape(n: int, max_cols: int = 3) -> tuple[int, int]:
    """(rows, columns) of the most even grid of at most ``max_cols`` columns that holds ``n`` panels: as few rows
    as ``max_cols`` allows, then as few columns as those rows need (4 panels: 2 × 2, not a 2 × 3 grid with two
    empty slots). Raises ValueError if ``n`` or ``max_cols`` is below 1."""
    if n < 1:
        raise ValueError(f"n (the number of panels) must be >= 1, got {n}")
    if max_cols < 1:
        raise ValueError(f"max_cols must be >= 1, got {max_cols}")
    nrows = math.ceil(n / max_cols)
    return nrows, math.ceil(n / nrows)


def plot_mixers(weights: dict[str, torch.Tensor], ncols: int = 3, lang: str | None = None):
    """One heatmap per single-stream mixer: ``weights`` maps a variant name to its (L+1, L+1) matrix. The panels
    fill a :func:`grid_shape` grid of at most ``ncols`` columns; a slot the grid has left over (5 panels in 2 × 3)
    is removed from the figure, not left as an empty frame. Raises ValueError if ``weights`` is empty."""
    if not weights:
        raise ValueError("weights must name at least one mixer")
    n = len(weights)
    nrows, ncols = grid_shape(n, ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.3 * nrows), squeeze=False)
    for ax, (name, m) in zip(axes.flat, weights.items()):
        plot_depth_weights(m, ax=ax, title=name, basis=_basis(name), lang=lang)
    for ax in list(axes.flat)[n:]:
        ax.remove()
    fig.tight_layout()
    return fig


def plot_router_streams(routers: dict[str, dict[str, torch.Tensor]], streams=("q", "k", "v"),
                        lang: str | None = None):
    """Rows = routers, columns = streams: where Q, K and V of each layer read from. Each row shares one colour
    scale, so the streams of one router can be compared. Titles in ``lang`` (None: the running edition)."""
    fig, axes = plt.subplots(len(routers), len(streams), figsize=(3.4 * len(streams), 3.1 * len(routers)),
                             squeeze=False)
    for row, (name, mats) in zip(axes, routers.items()):
        vmax = max(float(np.nanmax(np.abs(np.asarray(mats[s], dtype=float)))) for s in streams)
        for ax, s in zip(row, streams):
            title = in_language(f"{name}: {s.upper()} input", f"{name}: {s.upper()} 입력", lang)
            plot_depth_weights(mats[s], ax=ax, title=title, basis=_basis(name), vmax=vmax, lang=lang)
    fig.tight_layout()
    return fig


STREAM_TITLES = {"q": "Q input", "k": "K input", "v": "V input", "r": "MLP input (and read-out)"}
STREAM_TITLES_KO = {"q": "Q 입력", "k": "K 입력", "v": "V 입력", "r": "MLP 입력 (및 출력 읽기)"}


def plot_sublayer_streams(mats: dict[str, torch.Tensor], sources: list[str], streams=("q", "k", "v", "r"),
                          title: str = ""):
    """One heatmap per stream of a sub-layer mixer (Attention Residuals per stream): rows = reading block (last row:
    the final read-out, stream r only), columns = ``sources`` (embedding, attn 0, mlp 0, ...), one colour scale for
    all panels so that the streams compare. ``mats``: stream -> (L+1, 2L+1) matrix, NaN where a read has no
    source. Raises ValueError when a stream is missing or a matrix does not have ``len(sources)`` columns."""
    for s in streams:
        if s not in mats:
            raise ValueError(f"no weights for stream {s!r}; got {sorted(mats)}")
        if np.asarray(mats[s]).shape[1] != len(sources):
            raise ValueError(f"stream {s!r}: {np.asarray(mats[s]).shape[1]} columns, {len(sources)} sources")
    vmax = max(float(np.nanmax(np.asarray(mats[s], dtype=float))) for s in streams)
    fig, axes = plt.subplots(2, 2, figsize=(11.0, 7.0), squeeze=False)
    short = ["emb" if n == "embedding" else n.replace("attn ", "a").replace("mlp ", "m") for n in sources]
    for ax, s in zip(axes.flat, streams):
        m = np.asarray(mats[s], dtype=float)
        im = ax.imshow(np.ma.masked_invalid(m), cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto")
        ax.set_xticks(range(len(sources)))
        ax.set_xticklabels(short, rotation=90)
        ax.set_yticks(range(m.shape[0]))
        ax.set_yticklabels([str(l) if l < m.shape[0] - 1 else f"{l} ({in_language('out', '출력')})"
                            for l in range(m.shape[0])])
        ax.set(title=in_language(STREAM_TITLES.get(s, s), STREAM_TITLES_KO.get(s, s)),
               xlabel=in_language("source (a: attention output, m: MLP output)", "출처 (a: 어텐션 출력, m: MLP 출력)"),
               ylabel=in_language("reading block", "읽는 블록"))
        ax.grid(False)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=in_language("weight", "가중치"))
    for ax in list(axes.flat)[len(streams):]:
        ax.remove()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


# negligible (an interval inside ± the declared smallest effect) has its own colour: neither a win nor a loss
VERDICT_COLOURS = {"reproduced": "tab:green", "contradicted": "tab:red", "undecided": "tab:gray",
                   "negligible": "tab:blue", "out of regime": "tab:purple"}


def _verdict_ko(verdict: str) -> str:
    """A verdict row label's words in Korean (:mod:`vrs_edu.i18n.verdicts`): ``"check: undecided"`` -> ``"점검: 미정"``."""
    return ": ".join("점검" if part == "check" else verdict_word(part, "ko") for part in verdict.split(": "))


def plot_loss_effects(effects: list[dict], title: str = ""):
    """Chapter 05's first figure: each depth read's final validation loss − the residual's (nats, paired by seed)
    with its 95 % interval, one row per read, coloured by the verdict of its declared test (a check drawn hollow).
    ``effects``: :func:`vrs_edu.chapters.ch05_depth_as_sequence.v_over_depth.loss_effects`. Below 0 = a lower loss than the residual
    sum. Raises ValueError on an empty list."""
    if not effects:
        raise ValueError("effects: expected at least one {'name', 'mean', 'ci', 'verdict'} row, got none")
    fig, ax = plt.subplots(figsize=(8.0, 0.42 * len(effects) + 1.6))
    for y, e in enumerate(effects):
        verdict = e["verdict"].removeprefix("check: ")
        colour = VERDICT_COLOURS.get(verdict, "tab:gray")
        lo, hi = e["ci"]
        ax.errorbar(e["mean"], y, xerr=[[e["mean"] - lo], [hi - e["mean"]]], fmt="o", capsize=3, color=colour,
                    mfc="white" if e["verdict"].startswith("check") else colour)
    ax.axvline(0.0, color="k", lw=1)
    ax.set_yticks(range(len(effects)))
    ax.set_yticklabels([f"{e['name']} ({in_language(e['verdict'], _verdict_ko(e['verdict']))})"
                        for e in effects])
    ax.invert_yaxis()
    ax.set(xlabel=in_language("final validation loss − the residual's (nats; < 0: better)",
                              "최종 검증 손실 − 잔차의 손실 (nats; < 0: 더 좋음)"), title=title)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# The window-K widget: which earlier layers each layer can read, and the learned weights for that K.


def window_figure(n_layers: int, window: int, learned: dict[int, torch.Tensor] | None = None):
    """Left: the window mask (which sources each read may use). Right: the learned weights for this K, if trained."""
    r = window_readout(n_layers, window, learned)
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4))
    plot_depth_weights(r["mask"].float(), ax=axes[0],
                       title=in_language(f"readable sources (black), K = {window}",
                                         f"읽을 수 있는 출처(검정), K = {window}"),
                       basis="states X_j", cmap="Greys", vmax=1.0, colorbar=False)
    if r["weights"] is not None:
        plot_depth_weights(r["weights"], ax=axes[1],
                           title=in_language(f"learned ShortSWA weights, K = {window}",
                                             f"학습된 ShortSWA 가중치, K = {window}"),
                           basis="states X_j")
    else:
        trained = ", ".join(str(k) for k in sorted(learned or {})) or in_language("none", "없음")
        axes[1].text(0.5, 0.5, in_language(f"no trained model with K = {window}\n(trained: K = {trained})",
                                           f"K = {attach(str(window), '으로/로')} 학습한 모델 없음\n(학습: K = {trained})"),
                     ha="center", va="center")
        axes[1].axis("off")
    fig.tight_layout()
    return fig, r


def window_widget(n_layers: int, learned: dict[int, torch.Tensor] | None = None, window: int = 2):
    """Slider K = 1..L+1; shows :func:`window_figure` and prints the deep reads' weight on their oldest source."""
    def show(window=window):
        fig, r = window_figure(n_layers, window, learned)
        plt.show()
        line = in_language(f"K = {window}: reads use {r['n_sources'][-1]} of {n_layers + 1} sources at the "
                           "read-out",
                           f"K = {window}: 출력 읽기는 출처 {n_layers + 1}개 중 {r['n_sources'][-1]}개를 씁니다")
        if r["oldest_weight"] is not None:
            line += in_language(f"; deep reads put {r['oldest_weight']:.3f} on their oldest source",
                                "; 깊은 층의 읽기는 가장 오래된 출처에 "
                                + attach(f"{r['oldest_weight']:.3f}", "을/를") + " 둡니다")
        print(line)

    # One step of K adds (or removes) one readable source in every row with that many predecessors: the mask
    # changes visibly at every step.
    return W.interactive(show, window=W.IntSlider(value=window, min=1, max=n_layers + 1, step=1,
                                                  description=in_language("window K", "윈도 K"),
                                                  style=label_style()))


def plot_input_r2(r2: dict[str, dict[str, list[float]]], ceiling: float | None = None,
                  baseline: str = "residual", lang: str | None = None):
    """The routers' common basis: x0-R² of each projection's input against the layer, one panel per router, the
    ``baseline``'s single stream (Q = K = V) dashed in every panel. ``r2``: variant -> stream ("q", "k", "v") ->
    one value per layer. ``ceiling``: a dotted horizontal line at the declared premise threshold, inside the axes
    (the y-axis is widened to hold it). Labels in ``lang`` (None: the running edition). Raises ValueError when
    ``baseline`` or a router's stream is missing."""
    if baseline not in r2:
        raise ValueError(f"r2: expected the baseline {baseline!r} among {sorted(r2)}")
    routers = [n for n in r2 if n != baseline]
    for n in routers:
        if set("qkv") - set(r2[n]):
            raise ValueError(f"r2[{n!r}]: expected streams q, k, v, got {sorted(r2[n])}")
    fig, axes = plt.subplots(1, len(routers), figsize=(3.6 * len(routers) + 0.6, 4.0), sharey=True,
                             squeeze=False)
    layers = range(len(r2[baseline]["v"]))
    for ax, name in zip(axes[0], routers):
        ax.plot(layers, r2[baseline]["v"], "k--", label=f"{baseline} (Q = K = V)")
        for s, colour in zip("qkv", ("tab:blue", "tab:orange", "tab:green")):
            ax.plot(layers, r2[name][s], marker="o", color=colour,
                    label=in_language(f"{s.upper()} input", f"{s.upper()} 입력", lang))
        if ceiling is not None:
            ax.axhline(ceiling, color="tab:red", ls=":", lw=1.5,
                       label=in_language(f"premise ceiling {ceiling:g}", f"전제의 상한 {ceiling:g}", lang))
        ax.set(title=name, xlabel=in_language("layer", "층", lang))
    values = [v for d in r2.values() for s in d.values() for v in s] + ([ceiling] if ceiling is not None else [])
    lo = min(values)
    axes[0][0].set_ylim(lo - 0.05 * (1.0 - lo) - 0.01, 1.02)
    axes[0][0].set_ylabel(in_language("x0-R² of the input", "입력의 x0-R²", lang))
    handles, labels = axes[0][0].get_legend_handles_labels()   # below the panels: no line hides behind it
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig
