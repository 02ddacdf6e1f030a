"""Does a trained model need the token embedding x0 in Q, K or V? Two measurements, run after training on every
run of a recipe that asks (:func:`vrs_edu.lab.experiments.compare_variants`, ``x0_need=True``):

* :func:`x0_removal_cost` on a model trained with per-projection x0 coefficients (``x0_mode="qkv"``, He et al.,
  arXiv 2606.02780): the loss change when one path's learned β is set to 0;
* :func:`x0_gradient_pressure` on a model trained without: how hard the loss would pull on each path's β at 0.

:func:`betas_set` sets the learned β for the length of a ``with`` block (chapter 04's β readouts build on it).

Shared by the two recipes that train x0 paths (chapter 04's ``bank-of-values`` and chapter 03's recall task,
``recall``): the x0 variants (:data:`VARIANTS_V2`) and the readouts of their stored runs — the coefficients per
layer, the shares ``|β| / (|α| + |β|)`` and their margins, the need margins, the gradient-pressure ratios and whether
β had stopped moving before the learning-rate decay.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import replace

import torch
import torch.nn.functional as F

from vrs_edu.lab.analysis import plateau_window as _window, trajectory_plateaus
from vrs_edu.lab.metrics import mean_loss
from vrs_edu.nn.model import TinyGPT

SETUP = {"qk_norm": True, "coef_opt": "official"}
RATE_FACTORS = {"×1": 1.0, "×0.25": 0.25, "×4": 4.0}          # the nominal arm first
RATE_SWEEP = {"×1": "qkv", "×0.25": "qkv_lr0.25", "×4": "qkv_lr4"}
VARIANTS_V2 = {
    "baseline": {**SETUP},
    "qkv": {**SETUP, "x0_mode": "qkv"},
    "scale_v": {**SETUP, "x0_mode": "scale_v"},
    "qkv_random": {**SETUP, "x0_mode": "qkv", "x0_source": "random"},
    "substitute_v": {**SETUP, "x0_mode": "substitute_v"},
    "bank": {**SETUP, "x0_mode": "bank"},
    "qkv_lr0.25": {**SETUP, "x0_mode": "qkv", "coef_lr_scale": RATE_FACTORS["×0.25"]},
    "qkv_lr4": {**SETUP, "x0_mode": "qkv", "coef_lr_scale": RATE_FACTORS["×4"]},
}


def x0_blocks(model: TinyGPT):
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
    blocks = x0_blocks(model)
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


def x0_removal_cost(model: TinyGPT, batches) -> dict[str, float]:
    """Which path *uses* the x0 it learned: the validation loss change (nats) when one path's learned β is set to 0
    in every x0 layer (that path then reads only the residual stream), ``{"q": Δ, "k": Δ, "v": Δ}``.

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``.
    """
    batches = list(batches)
    n = len(x0_blocks(model))
    trained = mean_loss(model, batches)
    out = {}
    for s in "qkv":
        with betas_set(model, {s: [0.0] * n}):
            out[s] = mean_loss(model, batches) - trained
    return out


def x0_gradient_pressure(model: TinyGPT, batches, layers=None) -> dict:
    """Gradient pressure: how hard a model trained *without* x0 paths (a baseline) would pull on each path's x0
    weight if it had one. The model's weights go into the same model with ``x0_mode="qkv"`` on ``layers`` (None: the
    last third), whose α = 1, β = 0 compute exactly the baseline's function; returned is ∂L/∂β at β = 0 per path
    and layer, L the mean loss (nats) over ``batches`` (``(x, y[, mask])``): ``{"layers", "loss", "q", "k", "v"}``.
    A negative derivative = the loss falls as β grows. Its size is in nats per unit β, and β multiplies x0 =
    RMSNorm(embedding), which has the RMS of the normalised stream it is added to, so the three paths share a unit.
    (Review finding 3: shares of learned coefficients measure how far an optimiser moved them; this asks what the
    loss wants before any moved.)

    Raises:
        ValueError: the model already has x0 paths, or its weights do not fit the probe.
    """
    if model.cfg.x0_mode != "none":
        raise ValueError(f"gradient pressure is read on a model without x0 paths, got x0_mode={model.cfg.x0_mode!r}")
    w = next(model.parameters())
    probe = TinyGPT(replace(model.cfg, x0_mode="qkv", x0_layers=None if layers is None else tuple(layers)))
    probe.to(device=w.device, dtype=w.dtype)      # the model's own precision: the probe must compute its function
    missing, unexpected = probe.load_state_dict(model.state_dict(), strict=False)
    if unexpected or not all(".x0." in k for k in missing):
        raise ValueError(f"the model's weights do not fit the probe: unexpected {unexpected[:3]}, missing "
                         f"{[k for k in missing if '.x0.' not in k][:3]}")
    probe.eval()
    blocks = x0_blocks(probe)
    total, count = 0.0, 0
    for b in batches:
        x, y, *rest = b
        mask = rest[0] if rest else None
        logits = probe(x).logits
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none")
        if mask is not None:
            loss = loss[mask.flatten()]
        loss.sum().backward()            # summed: divided by the count once at the end, a mean over all tokens
        total += loss.sum().item()
        count += loss.numel()
    if count == 0:
        raise ValueError("batches is empty")
    out = {"layers": [i for i, blk in enumerate(probe.blocks) if blk.x0 is not None], "loss": total / count}
    for s in "qkv":
        out[s] = [getattr(blk.x0, f"beta_{s}").grad.item() / count for blk in blocks]
    return out


# ---------------------------------------------------------------------------------------------------------------
# Readouts of stored runs (the result files' per-run dicts).


def x0_layers(run: dict, mode: str = "qkv") -> list[int]:
    """The layers that carry x0 coefficients in a run (read from its coefficient names)."""
    key = {"qkv": "x0.beta_v", "shared": "x0.beta", "substitute_v": "x0.gamma", "bank": "x0.gamma"}[mode]
    return sorted({int(k.split(".")[1]) for k in run["coefficients"] if k.endswith(key)})


def coefficient_table(runs: list[dict]) -> dict:
    """For ``qkv`` runs: ``{"layers": [...], "alpha_q": [[per layer] per seed], "beta_q": ..., ...}``."""
    layers = x0_layers(runs[0])
    table = {"layers": layers, "seeds": [r["seed"] for r in runs]}
    for name in ("alpha_q", "beta_q", "alpha_k", "beta_k", "alpha_v", "beta_v"):
        table[name] = [[r["coefficients"][f"blocks.{l}.x0.{name}"] for l in layers] for r in runs]
    return table


def x0_share(a: float, b: float) -> float:
    return abs(b) / (abs(a) + abs(b)) if abs(a) + abs(b) > 0 else 0.0


def share_margins(runs: list[dict]) -> dict[str, list[float]]:
    """Per qkv run (seed order), means over the x0 layers: ``share_v`` = |β_v| / (|α_v| + |β_v|); ``margin_q`` =
    share_v − share_q, ``margin_k`` = share_v − share_k (tested apart: on one-token recall Q may read x0 as much as V,
    and v − max(q, k) has a null centred below 0, review 2, finding 10); ``margin`` = share_v − max(share_q, share_k)
    (the earlier test, kept as a description); ``last_beta_v`` = |β_v| in the last x0 layer."""
    out = {"share_v": [], "margin_q": [], "margin_k": [], "margin": [], "last_beta_v": []}
    for r in sorted(runs, key=lambda r: r["seed"]):
        c, ls = r["coefficients"], x0_layers(r)
        sh = {s: [x0_share(c[f"blocks.{l}.x0.alpha_{s}"], c[f"blocks.{l}.x0.beta_{s}"]) for l in ls]
              for s in "qkv"}
        out["share_v"].append(sum(sh["v"]) / len(ls))
        out["margin_q"].append(sum(v - q for q, v in zip(sh["q"], sh["v"])) / len(ls))
        out["margin_k"].append(sum(v - k for k, v in zip(sh["k"], sh["v"])) / len(ls))
        out["margin"].append(sum(v - max(q, k) for q, k, v in zip(sh["q"], sh["k"], sh["v"])) / len(ls))
        out["last_beta_v"].append(abs(c[f"blocks.{ls[-1]}.x0.beta_v"]))
    return out


def need_margins(runs: list[dict]) -> dict[str, list[float]]:
    """Per qkv run (seed order), from its ``x0_removal_cost``: cost_v − cost_q and cost_v − cost_k (nats)."""
    rs = sorted(runs, key=lambda r: r["seed"])
    return {f"margin_{s}": [r["x0_removal_cost"]["v"] - r["x0_removal_cost"][s] for r in rs] for s in "qk"}


def pressure_ratios(runs: list[dict]) -> dict[str, list[float]]:
    """Per trained baseline (seed order), from its ``x0_pressure``: the mean over the x0 layers of ln(|∂L/∂β_v| /
    |∂L/∂β_s|) for s = q, k (``log_v_over_q``, ``log_v_over_k``): above 0 = the loss pulls harder on V's x0."""
    out = {"log_v_over_q": [], "log_v_over_k": []}
    for r in sorted(runs, key=lambda r: r["seed"]):
        p = r["x0_pressure"]
        for s in "qk":
            out[f"log_v_over_{s}"].append(sum(math.log(abs(v) / abs(o)) for v, o in zip(p["v"], p[s])) / len(p["v"]))
    return out


def beta_plateau_window(run: dict, decay_frac: float = 0.3) -> tuple[float, float]:
    """The steps (start, end) over which :func:`beta_plateau` judges a run (:func:`vrs_edu.lab.analysis.plateau_window`
    of its logged evaluations): a quarter of the run, ending where the learning-rate decay starts (1,200 steps →
    (540, 840)), so that the decay, which slows every update, cannot make a plateau by itself."""
    h = run["history"]
    return _window(h["eval_steps"], h["steps"][-1] + 1, decay_frac)


def beta_plateau(runs: list[dict], tol: float = 0.1, decay_frac: float = 0.3, paths: str = "v") -> dict:
    """Did β stop moving before the LR decay? For every qkv run, x0 layer and path in ``paths`` (``"v"``: β_v, as
    chapter 04 has shown since issue 16; ``"qkv"``: all three, the precondition ``x0_plateaued``),
    :func:`~vrs_edu.lab.analysis.plateau` on the logged trajectory from its initial 0 over :func:`beta_plateau_window`.
    Returns ``{"reached": n, "of": m, "fraction", "tol", "per_run": [[ratio per layer (and path)] per seed]}``."""
    return trajectory_plateaus(runs, lambda r: [f"blocks.{l}.x0.beta_{s}" for l in x0_layers(r) for s in paths], 0.0,
                               tol, decay_frac)
