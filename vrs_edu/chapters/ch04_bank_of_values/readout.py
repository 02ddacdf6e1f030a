"""Chapter 04's measurements on a trained ``x0_mode="qkv"`` model: change the learned x0 coefficients β_q, β_k, β_v
at inference (set, shift or scale them; restored afterwards) and measure what changes: each path's x0 share
``|β| / (|α| + |β|)``, how much attention mass moved, and the validation loss (nats). Also the loss cost of removing
one path's x0, and the substitution ablation's table over seeds. Chapter 04's β widget
(:func:`vrs_edu.chapters.ch04_bank_of_values.figures.beta_widget`) shows these numbers.

Factors, not added constants: under QK-norm (the official code, and chapter 04's runs) only the direction of
``α·x + β·x0`` reaches attention, and the learned |β_q|, |β_k| are several times |α|, so an added constant barely
turns that direction; multiplying β by 2 or 1/2 does.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from vrs_edu.lab.analysis import mean, mean_sd
from vrs_edu.lab.x0_need import betas_set, x0_blocks
from vrs_edu.nn.model import TinyGPT

# The factors on a learned β that the sweep measures (and the widget's sliders offer): β × 2**e, ×1/16 … ×4.
FACTOR_EXPONENTS = (-4, -3, -2, -1, 0, 1, 2)
FACTORS = tuple(2.0 ** e for e in FACTOR_EXPONENTS)


# ---------------------------------------------------------------------------------------------------------------
# Set, shift or scale the learned β of the x0 layers (context managers: the model is restored on exit).


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
    blocks = x0_blocks(model)
    return betas_set(model, {s: [getattr(b.x0, f"beta_{s}").item() + d for b in blocks] for s, d in shifts.items()})


def betas_scaled(model: TinyGPT, f_q: float = 1.0, f_k: float = 1.0, f_v: float = 1.0):
    """Temporarily multiply the learned beta_q / beta_k / beta_v of every x0 layer by ``f_q`` / ``f_k`` / ``f_v``
    (×1: the trained model; ×0: that path reads no x0); restored on exit (a context manager, like
    :func:`betas_set`).

    Raises:
        ValueError: the model was not trained with ``x0_mode="qkv"``, or a factor is not a finite number >= 0.
    """
    factors = _check_factors({"q": f_q, "k": f_k, "v": f_v})
    blocks = x0_blocks(model)
    return betas_set(model, {s: [getattr(b.x0, f"beta_{s}").item() * f for b in blocks] for s, f in factors.items()})


def x0_shares(model: TinyGPT) -> dict[str, list[float]]:
    """Each path's x0 share ``|β| / (|α| + |β|)`` per x0 layer, as the model is now: ``{"q": [...], "k", "v"}``.
    Scale-free (under QK-norm only the direction of ``α·x + β·x0`` reaches attention), 0 = the projection reads
    only the stream, 1 = only x0. Raises ValueError unless ``x0_mode="qkv"``."""
    blocks = x0_blocks(model)
    out = {}
    for s in "qkv":
        ab = [(abs(getattr(b.x0, f"alpha_{s}").item()), abs(getattr(b.x0, f"beta_{s}").item())) for b in blocks]
        out[s] = [bb / (a + bb) if a + bb > 0 else 0.0 for a, bb in ab]
    return out


# ---------------------------------------------------------------------------------------------------------------
# What a setting changes: the loss, the attention mass moved, each path's x0 share.


@torch.no_grad()
def loss_and_patterns(model: TinyGPT, batches) -> tuple[float, list[list[torch.Tensor]]]:
    """One traced pass over ``(x, y[, mask])`` batches: the mean cross-entropy (nats, over every scored token, as
    :func:`~vrs_edu.lab.metrics.mean_loss`) and, per batch, the attention pattern ``(B, H, T, T)`` of every x0
    layer. Raises ValueError on an empty ``batches`` or a model without ``x0_mode="qkv"``."""
    layers = [i for i, b in enumerate(model.blocks) if b in x0_blocks(model)]
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
    blocks = x0_blocks(model)
    return {"loss": loss, "patterns": patterns, "shares": x0_shares(model),
            "betas": {s: [getattr(b.x0, f"beta_{s}").item() for b in blocks] for s in "qkv"},
            "layers": [i for i, b in enumerate(model.blocks) if b in blocks]}


def _readout_under(setting, model: TinyGPT, batches, ref: dict) -> dict:
    with setting:
        loss, patterns = loss_and_patterns(model, batches)
        shares = x0_shares(model)
        betas = {s: [getattr(b.x0, f"beta_{s}").item() for b in x0_blocks(model)] for s in "qkv"}
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



def beta_sweep(model: TinyGPT, batches, factors=FACTORS, reference: dict | None = None) -> dict:
    """Each path's β alone multiplied by each factor: ``{"factors", "reference", "delta": {path: [Δ loss]},
    "moved": {path: [attention moved, mean over x0 layers]}, "share": {path: [x0 share, mean over x0 layers]}}``."""
    batches = list(batches)
    ref = reference or beta_reference(model, batches)
    out = {"factors": list(factors), "reference": ref, "delta": {}, "moved": {}, "share": {}}
    for s in "qkv":
        rows = [beta_readout(model, batches, reference=ref, **{f"f_{s}": f}) for f in factors]
        out["delta"][s] = [r["delta"] for r in rows]
        out["moved"][s] = [mean(r["moved"]) for r in rows]
        out["share"][s] = [mean(r["shares"][s]) for r in rows]
    return out


def step_changes(sweep: dict) -> dict[str, dict[str, float]]:
    """What one slider step from the default (×1 to ×1/2 and to ×2) changes, per path: ``{path: {"share_down",
    "share_up" (change of the mean x0 share), "moved_down", "moved_up" (attention mass moved), "delta_down",
    "delta_up" (nats)}}``, read from a :func:`beta_sweep` that contains the factors 1/2, 1 and 2."""
    fs = sweep["factors"]
    i0, lo, hi = fs.index(1.0), fs.index(0.5), fs.index(2.0)
    return {s: {f"{k}_{d}": sweep[key][s][j] - (sweep[key][s][i0] if key == "share" else 0.0)
                for key, k in (("share", "share"), ("moved", "moved"), ("delta", "delta"))
                for d, j in (("down", lo), ("up", hi))} for s in "qkv"}


# ---------------------------------------------------------------------------------------------------------------
# Saved results.


def ablation_table(runs: list[dict]) -> dict:
    """Mean ± sd across seeds of the substitution ablation's loss change per layer and path:
    ``{"layers": [...], "q": [(mean, sd)], "k": [...], "v": [...]}``."""
    abl = [r["ablation"] for r in runs]
    out = {"layers": abl[0]["layers"]}
    for s in "qkv":
        out[s] = [mean_sd([a[s][i] for a in abl]) for i in range(len(out["layers"]))]
    return out
