"""Chapter 04's plots and widget: the learned x0 coefficients of Q, K and V per layer and seed, their trajectories,
the substitution-ablation table, and the beta_q / beta_k / beta_v inference widget — a thin
``ipywidgets.interactive`` over :func:`beta_readout` (a plain function, tested without a browser).

The widget multiplies each path's learned β by a factor (one step doubles or halves it) rather than adding to it:
under QK-norm (the official code, and chapter 04's runs) only the direction of ``α·x + β·x0`` reaches attention,
and the learned |β_q|, |β_k| are several times |α|, so an added constant barely turns that direction. The readout
shows what a step changes: each path's x0 share ``|β| / (|α| + |β|)``, how much attention mass moved, and the loss."""
from __future__ import annotations

import math
from contextlib import contextmanager

import ipywidgets as W
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from ..lab.analysis import band, mean_sd
from ..lab.metrics import mean_loss
from ..nn.model import TinyGPT
from .controls import change_from_default, label_style

PATH_COLORS = {"q": "C0", "k": "C1", "v": "C3"}
FACTOR_EXPONENTS = (-4, -3, -2, -1, 0, 1, 2)          # the sliders' positions: the learned β × 2**e, ×1/16 … ×4
FACTORS = tuple(2.0 ** e for e in FACTOR_EXPONENTS)
# What one slider step must change to count as visible (tests/test_widget_callbacks.py checks it): the moved path's
# x0 share (mean over the x0 layers, printed to 3 decimals) by at least VISIBLE_SHARE, and for Q and K the attention
# pattern of the x0 layers by at least VISIBLE_ATTENTION of its mass (printed to 0.1 %). Measured on chapter 04's
# checkpoint: 0.045-0.15 and 1.5-4.4 % (see beta_widget).
VISIBLE_SHARE = 0.02
VISIBLE_ATTENTION = 0.01


# ---------------------------------------------------------------------------------------------------------------
# The widget's logic: add extra x0 to the Q, K or V input of the trained model's x0 layers, measure the loss.


def _x0_blocks(model: TinyGPT):
    blocks = [b for b in model.blocks if b.x0 is not None and b.x0.mode == "qkv"]
    if not blocks:
        raise ValueError(f"the model has no per-projection x0 coefficients (x0_mode={model.cfg.x0_mode!r}; "
                         "need 'qkv')")
    return blocks


@contextmanager
def betas_set(model: TinyGPT, values: dict[str, list[float]]):
    """Temporarily set the learned ``beta_q`` / ``beta_k`` / ``beta_v`` of the x0 layers to ``values`` (a dict from
    path ``"q"``, ``"k"``, ``"v"`` to one value per x0 layer; paths not named keep theirs); restored on exit.

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``, or a list has the wrong length.
    """
    blocks = _x0_blocks(model)
    for s, vals in values.items():
        if len(vals) != len(blocks):
            raise ValueError(f"values[{s!r}] needs one value per x0 layer ({len(blocks)}), got {len(vals)}")
    saved = [{s: getattr(b.x0, f"beta_{s}").detach().clone() for s in values} for b in blocks]
    try:
        with torch.no_grad():
            for i, b in enumerate(blocks):
                for s, vals in values.items():
                    getattr(b.x0, f"beta_{s}").fill_(float(vals[i]))
        yield model
    finally:
        with torch.no_grad():
            for b, old in zip(blocks, saved):
                for s, t in old.items():
                    getattr(b.x0, f"beta_{s}").copy_(t)


def _check_factors(factors: dict[str, float]) -> dict[str, float]:
    out = {}
    for s, f in factors.items():
        f = float(f)
        if not math.isfinite(f) or f < 0:
            raise ValueError(f"f_{s} (the factor on the learned beta_{s}) must be a finite number >= 0, got {f}")
        out[s] = f
    return out


def betas_shifted(model: TinyGPT, d_beta_q: float = 0.0, d_beta_k: float = 0.0, d_beta_v: float = 0.0):
    """Temporarily add ``d_beta_*`` to the learned beta_q / beta_k / beta_v of every x0 layer; restored on exit
    (a context manager, like :func:`betas_set`). The chapter compares this additive step with the widget's
    multiplicative one.

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``, or a shift is not a finite number.
    """
    shifts = {"q": float(d_beta_q), "k": float(d_beta_k), "v": float(d_beta_v)}
    for s, d in shifts.items():
        if not math.isfinite(d):
            raise ValueError(f"d_beta_{s} must be a finite number, got {d}")
    blocks = _x0_blocks(model)
    return betas_set(model, {s: [getattr(b.x0, f"beta_{s}").item() + d for b in blocks] for s, d in shifts.items()})


def betas_scaled(model: TinyGPT, f_q: float = 1.0, f_k: float = 1.0, f_v: float = 1.0):
    """Temporarily multiply the learned beta_q / beta_k / beta_v of every x0 layer by ``f_q`` / ``f_k`` / ``f_v``
    (×1: the trained model; ×0: that path reads no x0); restored on exit (a context manager, like
    :func:`betas_set`).

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``, or a factor is not a finite number >= 0.
    """
    factors = _check_factors({"q": f_q, "k": f_k, "v": f_v})
    blocks = _x0_blocks(model)
    return betas_set(model, {s: [getattr(b.x0, f"beta_{s}").item() * f for b in blocks] for s, f in factors.items()})


def x0_shares(model: TinyGPT) -> dict[str, list[float]]:
    """Each path's x0 share ``|β| / (|α| + |β|)`` per x0 layer, as the model is now: ``{"q": [...], "k", "v"}``.
    Scale-free (under QK-norm only the direction of ``α·x + β·x0`` reaches attention), 0 = the projection reads
    only the stream, 1 = only x0. Raises ValueError unless ``x0_mode="qkv"``."""
    blocks = _x0_blocks(model)
    out = {}
    for s in "qkv":
        ab = [(abs(getattr(b.x0, f"alpha_{s}").item()), abs(getattr(b.x0, f"beta_{s}").item())) for b in blocks]
        out[s] = [bb / (a + bb) if a + bb > 0 else 0.0 for a, bb in ab]
    return out


@torch.no_grad()
def loss_and_patterns(model: TinyGPT, batches) -> tuple[float, list[list[torch.Tensor]]]:
    """One traced pass over ``(x, y[, mask])`` batches: the mean cross-entropy (nats, over every scored token, as
    :func:`~vrs_edu.lab.metrics.mean_loss`) and, per batch, the attention pattern ``(B, H, T, T)`` of every x0
    layer. Raises ValueError on an empty ``batches`` or a model without ``x0_mode="qkv"``."""
    layers = [i for i, b in enumerate(model.blocks) if b in _x0_blocks(model)]
    total, count, patterns = 0.0, 0, []
    for b in batches:
        x, y, *rest = b
        out = model(x, trace=True)
        loss = F.cross_entropy(out.logits.flatten(0, 1), y.flatten(), reduction="none")
        if rest and rest[0] is not None:
            loss = loss[rest[0].flatten()]
        total, count = total + loss.sum().item(), count + loss.numel()
        patterns.append([out.trace[f"blocks.{l}.attn.pattern"] for l in layers])
    if not count:
        raise ValueError("batches is empty")
    return total / count, patterns


def attention_moved(patterns, reference) -> list[float]:
    """How much attention moved, per x0 layer: the total-variation distance ``½ Σ_j |p_ij − p⁰_ij|`` between each
    query's pattern and the reference's, averaged over batches, heads and queries. 0 = the same pattern, 1 = every
    query looks somewhere else entirely; 0.05 = 5 % of the attention mass went to other keys. Both arguments as
    returned by :func:`loss_and_patterns`."""
    n = len(reference[0])
    return [sum(0.5 * (p[i] - r[i]).abs().sum(-1).mean().item() for p, r in zip(patterns, reference)) / len(reference)
            for i in range(n)]


def beta_reference(model: TinyGPT, batches) -> dict:
    """The trained model, once, for the readouts to compare with: ``{"loss", "patterns", "shares", "betas",
    "layers"}`` (``layers``: the x0 layers, 0-based)."""
    batches = list(batches)
    loss, patterns = loss_and_patterns(model, batches)
    blocks = _x0_blocks(model)
    return {"loss": loss, "patterns": patterns, "shares": x0_shares(model),
            "betas": {s: [getattr(b.x0, f"beta_{s}").item() for b in blocks] for s in "qkv"},
            "layers": [i for i, b in enumerate(model.blocks) if b in blocks]}


def _readout_under(setting, model: TinyGPT, batches, ref: dict) -> dict:
    with setting:
        loss, patterns = loss_and_patterns(model, batches)
        shares = x0_shares(model)
        betas = {s: [getattr(b.x0, f"beta_{s}").item() for b in _x0_blocks(model)] for s in "qkv"}
    return {"loss": loss, "trained_loss": ref["loss"], "delta": loss - ref["loss"], "betas": betas, "shares": shares,
            "trained_shares": ref["shares"], "moved": attention_moved(patterns, ref["patterns"]),
            "layers": ref["layers"]}


def beta_readout(model: TinyGPT, batches, f_q: float = 1.0, f_k: float = 1.0, f_v: float = 1.0,
                 reference: dict | None = None) -> dict:
    """What the widget shows for one setting: the learned β of each path multiplied by its factor in every x0 layer.

    Returns ``{"factors", "loss", "trained_loss", "delta" (nats), "betas", "shares", "trained_shares" (per path,
    one value per x0 layer), "moved" (attention mass moved per x0 layer, :func:`attention_moved`), "layers"}``.
    ``reference``: :func:`beta_reference` of the same model and batches (computed when not given).

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``, or a factor is not a finite number >= 0.
    """
    factors = _check_factors({"q": f_q, "k": f_k, "v": f_v})
    batches = list(batches)
    ref = reference or beta_reference(model, batches)
    setting = betas_scaled(model, **{f"f_{s}": f for s, f in factors.items()})
    return {"factors": factors, **_readout_under(setting, model, batches, ref)}


def beta_shift_readout(model: TinyGPT, batches, d_beta_q: float = 0.0, d_beta_k: float = 0.0,
                       d_beta_v: float = 0.0, reference: dict | None = None) -> dict:
    """As :func:`beta_readout`, for ``d_beta_*`` *added* to the learned β (the chapter compares this additive step
    with the widget's factor). Returns the same keys, with ``"shifts"`` instead of ``"factors"``.

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``, or a shift is not a finite number.
    """
    batches = list(batches)
    ref = reference or beta_reference(model, batches)
    setting = betas_shifted(model, d_beta_q, d_beta_k, d_beta_v)
    return {"shifts": {"q": d_beta_q, "k": d_beta_k, "v": d_beta_v}, **_readout_under(setting, model, batches, ref)}


def _mean(xs) -> float:
    return sum(xs) / len(xs)


def beta_sweep(model: TinyGPT, batches, factors=FACTORS, reference: dict | None = None) -> dict:
    """Each path's β alone multiplied by each factor: ``{"factors", "reference", "delta": {path: [Δ loss]},
    "moved": {path: [attention moved, mean over x0 layers]}, "share": {path: [x0 share, mean over x0 layers]}}``."""
    batches = list(batches)
    ref = reference or beta_reference(model, batches)
    out = {"factors": list(factors), "reference": ref, "delta": {}, "moved": {}, "share": {}}
    for s in "qkv":
        rows = [beta_readout(model, batches, reference=ref, **{f"f_{s}": f}) for f in factors]
        out["delta"][s] = [r["delta"] for r in rows]
        out["moved"][s] = [_mean(r["moved"]) for r in rows]
        out["share"][s] = [_mean(r["shares"][s]) for r in rows]
    return out


def factor_label(f: float) -> str:
    """``×1/4``, ``×1``, ``×2``: a power-of-two factor as the sliders' positions are read."""
    if f > 0 and f < 1 and float(1 / f).is_integer():
        return f"×1/{int(1 / f)}"
    return f"×{f:g}"


def beta_text(now: dict) -> str:
    """The widget's printed readout (lines <= 100 columns): the loss and its change from the default (the trained
    model), how much attention moved in each x0 layer, and each path's factor and x0 share per x0 layer with the
    change from the default."""
    layers = ", ".join(map(str, now["layers"]))
    lines = [f"loss {change_from_default(now['loss'], now['trained_loss'], '.4f', ' nats')}",
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
    moved (mean over the x0 layers). Each path's current factor is the large dot on its own line; the dotted line is
    the trained model (×1). Returns ``(fig, readout, sweep)``."""
    batches = list(batches)
    sweep = sweep or beta_sweep(model, batches)
    now = beta_readout(model, batches, f_q, f_k, f_v, reference=sweep["reference"])
    fs = sweep["factors"]
    fig, (ax_loss, ax_move) = plt.subplots(1, 2, figsize=(9.6, 3.6))
    for ax, key, scale in ((ax_loss, "delta", 1.0), (ax_move, "moved", 100.0)):
        for s in "qkv":
            ys = [y * scale for y in sweep[key][s]]
            ax.plot(fs, ys, marker="o", ms=4, color=PATH_COLORS[s], label=f"β_{s} alone")
            f = now["factors"][s]
            if f in fs:                                # this path's setting, on its own line
                ax.scatter([f], [ys[fs.index(f)]], s=110, color=PATH_COLORS[s], edgecolor="black", zorder=4)
        ax.axvline(1.0, color="gray", lw=1, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xticks(fs, [factor_label(f).removeprefix("×") for f in fs])
        ax.set_xlabel("factor on the learned β (dotted: trained)")
    ax_loss.axhline(0, color="black", lw=0.8)
    ax_loss.set_yscale("symlog", linthresh=1e-3, linscale=0.5)
    ax_loss.set_ylabel("Δ validation loss (nats)")
    ax_loss.set_title("loss change (symmetric log scale)", fontsize=10)
    ax_move.set_ylabel("attention mass moved (%)")
    ax_move.set_title("attention moved, mean of the x0 layers", fontsize=10)
    ax_loss.legend(fontsize=9)
    setting = ", ".join(f"β_{s} {factor_label(now['factors'][s])}" for s in "qkv")
    fig.suptitle(f"this setting ({setting}): Δ loss {now['delta']:+.4f} nats, attention moved "
                 f"{_mean(now['moved']):.1%}", fontsize=10)
    fig.tight_layout()
    return fig, now, sweep


def step_changes(sweep: dict) -> dict[str, dict[str, float]]:
    """What one slider step from the default (×1 to ×1/2 and to ×2) changes, per path: ``{path: {"share_down",
    "share_up" (change of the mean x0 share), "moved_down", "moved_up" (attention mass moved), "delta_down",
    "delta_up" (nats)}}``, read from a :func:`beta_sweep` that contains the factors 1/2, 1 and 2."""
    fs = sweep["factors"]
    i0, lo, hi = fs.index(1.0), fs.index(0.5), fs.index(2.0)
    return {s: {f"{k}_{d}": sweep[key][s][j] - (sweep[key][s][i0] if key == "share" else 0.0)
                for key, k in (("share", "share"), ("moved", "moved"), ("delta", "delta"))
                for d, j in (("down", lo), ("up", hi))} for s in "qkv"}


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


def x0_removal_cost(model: TinyGPT, batches) -> dict[str, float]:
    """Which path *uses* the x0 it learned: the validation loss change (nats) when one path's learned β is set to 0
    in every x0 layer (that path then reads only the residual stream), ``{"q": Δ, "k": Δ, "v": Δ}``.

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``.
    """
    batches = list(batches)
    n = len(_x0_blocks(model))
    trained = mean_loss(model, batches)
    out = {}
    for s in "qkv":
        with betas_set(model, {s: [0.0] * n}):
            out[s] = mean_loss(model, batches) - trained
    return out


# ---------------------------------------------------------------------------------------------------------------
# Plots of saved results.


def plot_betas(tables: dict[str, dict]):
    """Final beta_q, beta_k, beta_v (top row) and alpha (bottom row) per x0 layer, one marker per seed, for each
    data set in ``tables`` (``{"corpus": coefficient_table, ...}``)."""
    fig, axes = plt.subplots(2, len(tables), figsize=(5.2 * len(tables), 5.4), squeeze=False)
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
            ax.set_xlabel("layer")
            ax.set_ylabel(f"learned {coef}")
            ax.set_title(f"{name}: {coef} (init {0 if coef == 'beta' else 1})", fontsize=10)
            ax.legend(fontsize=9)
    fig.tight_layout()
    return fig


def plot_beta_trajectories(runs: list[dict], title: str = ""):
    """beta_q, beta_k, beta_v of every x0 layer during training (mean across seeds); one panel per path."""
    keys = sorted({k.split(".")[1] for k in runs[0]["history"]["coefficients"] if ".x0.beta_" in k}, key=int)
    steps = runs[0]["history"]["eval_steps"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.0), sharey=True)
    cmap = plt.get_cmap("viridis")
    for ax, s in zip(axes, "qkv"):
        for j, l in enumerate(keys):
            traj = band([r["history"]["coefficients"][f"blocks.{l}.x0.beta_{s}"] for r in runs])[0]
            ax.plot(steps, traj, color=cmap(j / max(1, len(keys) - 1)), label=f"layer {l}")
        ax.axhline(0, color="gray", lw=0.8, ls=":")
        ax.set_title(f"β_{s}", fontsize=10)
        ax.set_xlabel("step")
    axes[0].set_ylabel("β (mean across seeds)")
    axes[0].legend(fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def ablation_table(runs: list[dict]) -> dict:
    """Mean ± sd across seeds of the substitution ablation's loss change per layer and path:
    ``{"layers": [...], "q": [(mean, sd)], "k": [...], "v": [...]}``."""
    abl = [r["ablation"] for r in runs]
    out = {"layers": abl[0]["layers"]}
    for s in "qkv":
        out[s] = [mean_sd([a[s][i] for a in abl]) for i in range(len(out["layers"]))]
    return out


def plot_ablation(tables: dict[str, dict], deep_layers: list[int] | None = None):
    """Grouped bars: loss change when the input of Q, K or V is replaced by x0, per layer (mean ± sd across
    seeds), one panel per data set. The x0 layers of the coefficient experiment are shaded."""
    fig, axes = plt.subplots(1, len(tables), figsize=(5.6 * len(tables), 3.3), squeeze=False)
    for ax, (name, t) in zip(axes[0], tables.items()):
        for j, s in enumerate("qkv"):
            xs = [l + (j - 1) * 0.27 for l in t["layers"]]
            ax.bar(xs, [m for m, _ in t[s]], width=0.27, yerr=[sd for _, sd in t[s]], capsize=2,
                   color=PATH_COLORS[s], label=f"{s} input := x0")
        for l in deep_layers or []:
            ax.axvspan(l - 0.5, l + 0.5, color="gray", alpha=0.1)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xticks(t["layers"])
        ax.set_xlabel("layer")
        ax.set_ylabel("Δ loss (nats)")
        ax.set_title(f"{name}: substitution ablation on trained baselines", fontsize=10)
        ax.legend(fontsize=9)
    fig.tight_layout()
    return fig
