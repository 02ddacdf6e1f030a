"""Chapter 04's plots and widget: the learned x0 coefficients of Q, K and V per layer and seed, their trajectories,
the substitution-ablation table, and the beta_q / beta_k / beta_v inference widget — a thin
``ipywidgets.interactive`` over :func:`beta_readout` (a plain function, tested without a browser)."""
from __future__ import annotations

import math
from contextlib import contextmanager

import ipywidgets as W
import matplotlib.pyplot as plt
import torch

from ..lab.analysis import band, mean_sd
from ..lab.metrics import mean_loss
from ..nn.model import TinyGPT
from .controls import change_from_default, label_style

PATH_COLORS = {"q": "C0", "k": "C1", "v": "C3"}


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


def betas_shifted(model: TinyGPT, d_beta_q: float = 0.0, d_beta_k: float = 0.0, d_beta_v: float = 0.0):
    """Temporarily add ``d_beta_*`` to the learned beta_q / beta_k / beta_v of every x0 layer; restored on exit
    (a context manager, like :func:`betas_set`).

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``, or a shift is not a finite number.
    """
    shifts = {"q": float(d_beta_q), "k": float(d_beta_k), "v": float(d_beta_v)}
    for s, d in shifts.items():
        if not math.isfinite(d):
            raise ValueError(f"d_beta_{s} must be a finite number (the sliders span -1 to 2), got {d}")
    blocks = _x0_blocks(model)
    return betas_set(model, {s: [getattr(b.x0, f"beta_{s}").item() + d for b in blocks] for s, d in shifts.items()})


def beta_readout(model: TinyGPT, batches, d_beta_q: float = 0.0, d_beta_k: float = 0.0,
                 d_beta_v: float = 0.0) -> dict:
    """Validation loss (nats) of a trained ``qkv`` model after adding ``d_beta_*`` times x0 to the input of Q, K
    and V in every x0 layer, and the change from the trained model.
    Returns ``{"loss", "trained_loss", "delta", "betas": {"q": [per layer], "k": ..., "v": ...}}``."""
    batches = list(batches)
    trained = mean_loss(model, batches)
    with betas_shifted(model, d_beta_q, d_beta_k, d_beta_v):
        loss = mean_loss(model, batches)
        betas = {s: [getattr(b.x0, f"beta_{s}").item() for b in _x0_blocks(model)] for s in "qkv"}
    return {"loss": loss, "trained_loss": trained, "delta": loss - trained, "betas": betas}


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


BETA_STEP = 0.5   # the sliders' step (see beta_widget)


def beta_sweep(model: TinyGPT, batches, shifts=(-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0)) -> dict:
    """Loss change when only one path's beta is shifted, for every shift: ``{"shifts", "q", "k", "v"}``."""
    batches = list(batches)
    out = {"shifts": list(shifts)}
    for s in "qkv":
        out[s] = [beta_readout(model, batches, **{f"d_beta_{s}": d})["delta"] for d in shifts]
    return out


def beta_figure(model: TinyGPT, batches, d_beta_q: float = 0.0, d_beta_k: float = 0.0, d_beta_v: float = 0.0,
                sweep: dict | None = None):
    """The widget's figure: loss change against a shift of each path's beta alone (lines), each path's current
    shift marked on its line (large dots), and the combined setting's loss change in the title.
    Returns ``(fig, readout, sweep)``."""
    batches = list(batches)
    sweep = sweep or beta_sweep(model, batches)
    now = beta_readout(model, batches, d_beta_q, d_beta_k, d_beta_v)
    fig, ax = plt.subplots(figsize=(7.2, 3.6))
    current = {"q": d_beta_q, "k": d_beta_k, "v": d_beta_v}
    for s in "qkv":
        ax.plot(sweep["shifts"], sweep[s], marker="o", ms=4, color=PATH_COLORS[s], label=f"only β_{s} shifted")
        if current[s] in sweep["shifts"]:   # this path's setting, on its own curve
            ax.scatter([current[s]], [sweep[s][sweep["shifts"].index(current[s])]], s=110, color=PATH_COLORS[s],
                       edgecolor="black", zorder=4)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("extra x0 weight added to the learned β (large dots: this setting)")
    ax.set_ylabel("Δ validation loss (nats)")
    ax.set_title(f"this setting (+β_q {d_beta_q:.2f}, +β_k {d_beta_k:.2f}, +β_v {d_beta_v:.2f}): "
                 f"Δ {now['delta']:+.4f} nats", fontsize=10)
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig, now, sweep


def beta_widget(model: TinyGPT, batches):
    """beta_q / beta_k / beta_v sliders (extra x0 on top of the learned values) with a loss readout."""
    batches = list(batches)
    sweep = beta_sweep(model, batches)

    def show(d_beta_q=0.0, d_beta_k=0.0, d_beta_v=0.0):
        fig, now, _ = beta_figure(model, batches, d_beta_q, d_beta_k, d_beta_v, sweep)
        plt.show()
        print(f"loss {change_from_default(now['loss'], now['trained_loss'], '.4f', ' nats')} "
              "(the default: the trained model)")
        return now

    # Step 0.5 from the measured sensitivity of chapter 04's checkpoint (2 validation batches). On the QK-norm,
    # official-lr checkpoint (learned β_q ≈ −7/−12, β_k ≈ +4/+3, β_v ≈ +3/+4.4) one step of +0.5 moves the loss by
    # +0.0001 (q), −0.0002 (k), +0.0090 (v) nats: under QK-norm an additive shift turns a large β_q or β_k's
    # direction only a little, so Q's and K's curves stay near zero over −1..2 (≤ 0.0007) while V's spans 0.06;
    # removing a path's β (x0_removal_cost) costs q +0.157, k +0.014, v +0.094.
    slider = dict(min=-1.0, max=2.0, step=BETA_STEP, readout_format=".2f", continuous_update=False,
                  style=label_style())
    return W.interactive(show, d_beta_q=W.FloatSlider(value=0.0, description="+β_q", **slider),
                         d_beta_k=W.FloatSlider(value=0.0, description="+β_k", **slider),
                         d_beta_v=W.FloatSlider(value=0.0, description="+β_v", **slider))


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
