"""Chapter 04's plots and widget: the learned x0 coefficients of Q, K and V per layer and seed, their trajectories,
the substitution ablation, and the beta_q / beta_k / beta_v inference widget — a thin ``ipywidgets.interactive``
over :func:`vrs_edu.chapters.ch04_bank_of_values.readout.beta_readout` (a plain function, tested without a browser).

The widget multiplies each path's learned β by a factor (one step doubles or halves it) rather than adding to it:
under QK-norm (the official code, and chapter 04's runs) only the direction of ``α·x + β·x0`` reaches attention,
and the learned |β_q|, |β_k| are several times |α|, so an added constant barely turns that direction. The readout
shows what a step changes: each path's x0 share ``|β| / (|α| + |β|)``, how much attention mass moved, and the loss."""
from __future__ import annotations

import math

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np

from vrs_edu.chapters.ch04_bank_of_values.prose import part_name
from vrs_edu.chapters.ch04_bank_of_values.readout import FACTOR_EXPONENTS, beta_readout, beta_sweep
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.lab.analysis import band
from vrs_edu.nn.model import TinyGPT
from vrs_edu.viz.controls import change_from_default, label_style

PATH_COLORS = {"q": "C0", "k": "C1", "v": "C3"}
# What one slider step must change to count as visible (tests/test_widget_callbacks.py checks it): the moved path's
# x0 share (mean over the x0 layers, printed to 3 decimals) by at least VISIBLE_SHARE, and for Q and K the attention
# pattern of the x0 layers by at least VISIBLE_ATTENTION of its mass (printed to 0.1 %). Measured on chapter 04's
# checkpoint: 0.045-0.15 and 1.5-4.4 % (see beta_widget).
VISIBLE_SHARE = 0.02
VISIBLE_ATTENTION = 0.01


# ---------------------------------------------------------------------------------------------------------------
# The widget: its printed readout, its figure, the sliders.


def factor_label(f: float) -> str:
    """``×1/4``, ``×1``, ``×2``: a power-of-two factor as the sliders' positions are read."""
    if f > 0 and f < 1 and float(1 / f).is_integer():
        return f"×1/{int(1 / f)}"
    return f"×{f:g}"


def beta_text(now: dict, lang: str | None = None) -> str:
    """The widget's printed readout (lines <= 100 columns): the loss and its change from the default (the trained
    model), how much attention moved in each x0 layer, and each path's factor and x0 share per x0 layer with the
    change from the default. ``lang``: "en" or "ko" (None: the running notebook's edition)."""
    layers = ", ".join(map(str, now["layers"]))
    if resolve_language(lang) == "ko":
        lines = [f"손실 {change_from_default(now['loss'], now['trained_loss'], '.4f', ' nats', 'ko')}",
                 "학습된 패턴에서 옮겨 간 어텐션 질량: "
                 + ", ".join(f"층 {l} {m:.1%}" for l, m in zip(now["layers"], now["moved"])),
                 f"층 {layers}의 x0 비중 |β| / (|α| + |β|):"]
        for s in "qkv":
            sh, tr = now["shares"][s], now["trained_shares"][s]
            same = all(f"{a:.3f}" == f"{b:.3f}" for a, b in zip(sh, tr))
            change = ("(기본값)" if same
                      else "(기본값에서 " + ", ".join(f"{a - b:+.3f}" for a, b in zip(sh, tr)) + ")")
            lines.append(f"  β_{s} {factor_label(now['factors'][s]):>6s}   " + ", ".join(f"{a:.3f}" for a in sh)
                         + f"   {change}")
        return "\n".join(lines)
    lines = [f"loss {change_from_default(now['loss'], now['trained_loss'], '.4f', ' nats', 'en')}",
             "attention mass moved from the trained pattern: "
             + ", ".join(f"layer {l} {m:.1%}" for l, m in zip(now["layers"], now["moved"])),
             f"x0 share |β| / (|α| + |β|) in layers {layers}:"]
    for s in "qkv":
        sh, tr = now["shares"][s], now["trained_shares"][s]
        same = all(f"{a:.3f}" == f"{b:.3f}" for a, b in zip(sh, tr))
        change = ("(the default)" if same
                  else "(" + ", ".join(f"{a - b:+.3f}" for a, b in zip(sh, tr)) + " from the default)")
        lines.append(f"  β_{s} {factor_label(now['factors'][s]):>6s}   " + ", ".join(f"{a:.3f}" for a in sh)
                     + f"   {change}")
    return "\n".join(lines)


def beta_figure(model: TinyGPT, batches, f_q: float = 1.0, f_k: float = 1.0, f_v: float = 1.0,
                sweep: dict | None = None):
    """The widget's figure, two panels against the factor on one path's learned β (the other paths at ×1): the loss
    change (symmetric-log scale, so a change of 0.001 nats is as visible as one of 0.1) and the attention mass
    moved (mean over the x0 layers). Each path's current factor is the large dot on its own line, and a path moved
    from ×1 also gets a dashed line of its colour at its factor; the dotted line is the trained model (×1). Returns
    ``(fig, readout, sweep)``."""
    batches = list(batches)
    sweep = sweep or beta_sweep(model, batches)
    now = beta_readout(model, batches, f_q, f_k, f_v, reference=sweep["reference"])
    fs = sweep["factors"]
    fig, (ax_loss, ax_move) = plt.subplots(1, 2, figsize=(10.0, 4.0))
    for ax, key, scale in ((ax_loss, "delta", 1.0), (ax_move, "moved", 100.0)):
        for s in "qkv":
            ys = [y * scale for y in sweep[key][s]]
            ax.plot(fs, ys, marker="o", ms=4, color=PATH_COLORS[s],
                    label=in_language(f"β_{s} alone", f"β_{s}만"))
            f = now["factors"][s]
            # this path's setting, on its own line: placed at the slider's value (a browser's log slider may give
            # 1.9999999999999998 for ×2, which an exact lookup in the sweep's factors missed: no dot was drawn),
            # its height read off the line in log2(factor)
            y = float(np.interp(math.log2(f), [math.log2(x) for x in fs], ys)) if f > 0 else ys[0]
            ax.scatter([f if f > 0 else fs[0]], [y], s=130, color=PATH_COLORS[s], edgecolor="black", zorder=4)
            if not math.isclose(f, 1.0):               # a moved path: its setting as a line across the panel
                ax.axvline(f, color=PATH_COLORS[s], lw=2, ls="--", alpha=0.8)
        ax.axvline(1.0, color="gray", lw=1, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xticks(fs, [factor_label(f).removeprefix("×") for f in fs])
        ax.set_xlabel(in_language("factor on the learned β (dotted: trained)",
                                  "학습된 β에 곱한 배율(점선: 학습된 값)"))
    ax_loss.axhline(0, color="black", lw=0.8)
    ax_loss.set_yscale("symlog", linthresh=1e-3, linscale=0.5)
    ax_loss.set_ylabel(in_language("Δ validation loss (nats)", "Δ 검증 손실 (nats)"))
    ax_loss.set_title(in_language("loss change (symmetric log scale)", "손실 변화 (대칭 로그 척도)"))
    ax_move.set_ylabel(in_language("attention mass moved (%)", "옮겨 간 어텐션 질량 (%)"))
    ax_move.set_title(in_language("attention moved, mean of the x0 layers", "옮겨 간 어텐션, x0 층 평균"))
    ax_loss.legend()
    setting = ", ".join(f"β_{s} {factor_label(now['factors'][s])}" for s in "qkv")
    moved = sum(now["moved"]) / len(now["moved"])
    fig.suptitle(in_language(f"this setting ({setting}): Δ loss {now['delta']:+.4f} nats, attention moved {moved:.1%}",
                             f"이 설정({setting}): Δ 손실 {now['delta']:+.4f} nats, 옮겨 간 어텐션 {moved:.1%}"))
    fig.tight_layout()
    return fig, now, sweep



def beta_widget(model: TinyGPT, batches, sweep: dict | None = None):
    """beta_q / beta_k / beta_v sliders: a factor on each path's learned β in every x0 layer (×1/16 … ×4, one step
    doubles or halves it), with the readout of :func:`beta_text` and the figure of :func:`beta_figure`.
    ``sweep``: a :func:`beta_sweep` of the same model and batches (computed when not given)."""
    batches = list(batches)
    sweep = sweep or beta_sweep(model, batches)

    def show(f_q=1.0, f_k=1.0, f_v=1.0):
        fig, now, _ = beta_figure(model, batches, f_q, f_k, f_v, sweep)
        plt.show()
        print(beta_text(now))
        return now

    # One step doubles or halves β, from the measured sensitivity of chapter 04's checkpoint (seed-0 qkv, QK-norm,
    # 2 validation batches): an additive step of +0.5 (the old slider) moved the loss by +0.0001 (q), -0.0002 (k),
    # +0.0090 (v) nats and 0.1-0.9 % of the attention mass, because |β_q| and |β_k| are already 3-12× |α| and an
    # added 0.5 barely turns the direction QK-norm keeps. Halving β instead moves q's x0 share by -0.08, k's by
    # -0.15, v's by -0.12 (mean of the two x0 layers), 2-5 % of the attention mass for q and k, and the loss by
    # +0.0017 (q), +0.0014 (k), +0.0028 (v) nats; ×1/16 costs q +0.117 and v +0.076, ×4 costs v +0.48.
    slider = dict(value=1.0, base=2, min=FACTOR_EXPONENTS[0], max=FACTOR_EXPONENTS[-1], step=1,
                  readout_format=".4g", continuous_update=False, style=label_style())
    return W.interactive(show, f_q=W.FloatLogSlider(description="β_q ×", **slider),
                         f_k=W.FloatLogSlider(description="β_k ×", **slider),
                         f_v=W.FloatLogSlider(description="β_v ×", **slider))



# ---------------------------------------------------------------------------------------------------------------
# Plots of saved results.


def plot_betas(tables: dict[str, dict], lang: str | None = None):
    """Final beta_q, beta_k, beta_v (top row) and alpha (bottom row) per x0 layer, one marker per seed, for each
    data set in ``tables`` (``{"corpus": coefficient_table, ...}``). Labels in ``lang`` (None: the running
    edition)."""
    fig, axes = plt.subplots(2, len(tables), figsize=(min(10.0, 5.0 * len(tables)), 5.4), squeeze=False)
    for c, (name, t) in enumerate(tables.items()):
        for r, coef in enumerate(("beta", "alpha")):
            ax = axes[r][c]
            for j, s in enumerate("qkv"):
                rows = t[f"{coef}_{s}"]
                for i, row in enumerate(rows):
                    xs = [l + (j - 1) * 0.15 for l in t["layers"]]
                    ax.scatter(xs, row, color=PATH_COLORS[s], s=18, alpha=0.8,
                               label=f"{coef}_{s}" if i == 0 else None)
                m = band(rows)[0]
                ax.plot([l + (j - 1) * 0.15 for l in t["layers"]], m, color=PATH_COLORS[s], lw=1)
            ax.axhline(0 if coef == "beta" else 1, color="gray", lw=0.8, ls=":")
            ax.set_xticks(t["layers"])
            ax.set_xlabel(in_language("layer", "층", lang))
            ax.set_ylabel(in_language(f"learned {coef}", f"학습된 {coef}", lang))
            init = 0 if coef == 'beta' else 1
            ax.set_title(in_language(f"{name}: {coef} (init {init})",
                                     f"{part_name(name, lang)}: {coef} (초깃값 {init})", lang))
            ax.legend()
    fig.tight_layout()
    return fig


def plot_beta_trajectories(runs: list[dict], title: str = "", window: tuple[float, float] | None = None,
                           lang: str | None = None):
    """beta_q, beta_k, beta_v of every x0 layer during training (mean across seeds); one panel per path.
    ``window`` (start, end steps; e.g. :func:`~vrs_edu.lab.x0_need.beta_plateau_window`) is shaded: the
    stretch over which the plateau criterion asks whether β_v still moves. Labels in ``lang`` (None: the running
    edition)."""
    keys = sorted({k.split(".")[1] for k in runs[0]["history"]["coefficients"] if ".x0.beta_" in k}, key=int)
    steps = runs[0]["history"]["eval_steps"]
    # each path on its own scale: β_q can reach tens while β_v moves by a few units, and a shared axis flattens it
    fig, axes = plt.subplots(1, 3, figsize=(10.0, 3.2))
    cmap = plt.get_cmap("viridis")
    for ax, s in zip(axes, "qkv"):
        for j, l in enumerate(keys):
            traj = band([r["history"]["coefficients"][f"blocks.{l}.x0.beta_{s}"] for r in runs])[0]
            ax.plot(steps, traj, color=cmap(j / max(1, len(keys) - 1)),
                    label=in_language(f"layer {l}", f"층 {l}", lang))
        ax.axhline(0, color="gray", lw=0.8, ls=":")
        if window is not None:
            ax.axvspan(*window, color="gray", alpha=0.15, lw=0, label=in_language("plateau window", "정체 창", lang))
        ax.set_title(f"β_{s}")
        ax.set_xlabel(in_language("step", "스텝", lang))
    axes[0].set_ylabel(in_language("β (mean across seeds)", "β (시드 평균)", lang))
    axes[0].legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig



def plot_ablation(tables: dict[str, dict], deep_layers: list[int] | None = None, lang: str | None = None):
    """Grouped bars: loss change when the input of Q, K or V is replaced by x0, per layer (mean ± sd across
    seeds), one panel per data set. The x0 layers of the coefficient experiment are shaded. Labels in ``lang``
    (None: the running edition)."""
    fig, axes = plt.subplots(1, len(tables), figsize=(min(10.0, 5.6 * len(tables)), 3.3), squeeze=False)
    for ax, (name, t) in zip(axes[0], tables.items()):
        for j, s in enumerate("qkv"):
            xs = [l + (j - 1) * 0.27 for l in t["layers"]]
            ax.bar(xs, [m for m, _ in t[s]], width=0.27, yerr=[sd for _, sd in t[s]], capsize=2,
                   color=PATH_COLORS[s], label=in_language(f"{s} input := x0", f"{s} 입력 := x0", lang))
        for l in deep_layers or []:
            ax.axvspan(l - 0.5, l + 0.5, color="gray", alpha=0.1)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xticks(t["layers"])
        ax.set_xlabel(in_language("layer", "층", lang))
        ax.set_ylabel(in_language("Δ loss (nats)", "Δ 손실 (nats)", lang))
        ax.set_title(in_language(f"{name}: substitution ablation on trained baselines",
                                 f"{name}: 학습된 기준선에 대한 대체 절제", lang))
        ax.legend()
    fig.tight_layout()
    return fig


def plot_rate_sweep(sweep: dict[str, dict], title: str = ""):
    """Chapter 04's first figure: at each coefficient learning rate of the sweep (x axis), left the x0 share
    |β| / (|α| + |β|) of Q, K and V (one small dot per seed, a large one for the mean over seeds; the dashed line is
    the paper's additive criterion for V, 0.5), right the loss cost of removing that path's x0 from the trained
    model (nats, same marks). ``sweep``: :func:`vrs_edu.chapters.ch04_bank_of_values.prose.rate_sweep`. Raises ValueError on an empty
    sweep."""
    if not sweep:
        raise ValueError("sweep: expected at least one rate arm, got none")
    arms = list(sweep)
    fig, (ax_share, ax_cost) = plt.subplots(1, 2, figsize=(10.0, 4.0))
    for ax, key in ((ax_share, "shares"), (ax_cost, "cost")):
        for j, s in enumerate("qkv"):
            xs = [i + (j - 1) * 0.22 for i in range(len(arms))]
            per_seed = [sweep[a][key][s] for a in arms]
            for x, vals in zip(xs, per_seed):
                ax.scatter([x] * len(vals), vals, s=16, color=PATH_COLORS[s], alpha=0.5, lw=0)
            ax.plot(xs, [sum(v) / len(v) for v in per_seed], marker="o", ms=9, color=PATH_COLORS[s],
                    label=s.upper())
        ax.set_xticks(range(len(arms)), arms)
        ax.set_xlabel(in_language("coefficient learning rate (× official)", "계수 학습률 (× 공식값)"))
    ax_share.axhline(0.5, color="black", lw=1, ls="--")
    ax_share.text(-0.35, 0.52, in_language("0.5: the criterion for V", "0.5: V의 기준"), ha="left", va="bottom")
    ax_share.set_ylim(0, 1)
    ax_share.set_ylabel(in_language("x0 share", "x0 비중"))
    ax_share.set_title(in_language("what training chose", "학습이 고른 것"))
    ax_cost.axhline(0, color="black", lw=0.8)
    ax_cost.set_ylabel(in_language("loss rise when x0 removed (nats)", "x0을 제거할 때 손실 증가 (nats)"))
    ax_cost.set_title(in_language("what the model needs", "모델에 필요한 것"))
    ax_share.legend(loc="upper left")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
