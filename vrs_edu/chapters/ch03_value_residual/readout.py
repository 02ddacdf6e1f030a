"""Chapter 03's measurement on a trained value-residual model: set λ1 (the weight on V_1) and λ2 (on V_n) of every
``resformer`` / ``learnable`` layer at inference (restored afterwards) and measure the validation loss (nats) and
each layer's attention entropy (nats). Chapter 03's λ widget (:func:`vrs_edu.chapters.ch03_value_residual.figures.lambda_widget`)
shows these numbers. Source of the rule: ResFormer, ``V_n' = λ1·V_1 + λ2·V_n`` (arXiv 2410.17897).
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import torch

from vrs_edu.lab.metrics import attention_entropy, mean_loss
from vrs_edu.nn.model import TinyGPT
from vrs_edu.nn.value_residual import ValueResidual


def _value_residuals(model: TinyGPT) -> list[ValueResidual]:
    mods = [b.value_residual for b in model.blocks
            if b.value_residual is not None and b.value_residual.mode in ("resformer", "learnable")]
    if not mods:
        raise ValueError(f"the model has no ResFormer value residual to change (value_residual="
                         f"{model.cfg.value_residual!r}; need 'resformer' or 'learnable')")
    return mods


@contextmanager
def lambdas_set_to(model: TinyGPT, lambda_1: float, lambda_2: float):
    """Temporarily set λ1 (weight on V_1) and λ2 (weight on V_n) of every value-residual layer; restored on exit.

    Raises:
        ValueError: the model has no ``resformer`` / ``learnable`` value residual, or a λ is not a finite number.
    """
    for name, value in (("lambda_1", lambda_1), ("lambda_2", lambda_2)):
        if not math.isfinite(float(value)):
            raise ValueError(f"{name} must be a finite number (the sliders span 0 to 1), got {value}")
    mods = _value_residuals(model)
    saved = [(m.lambda_1.detach().clone(), m.lambda_2.detach().clone()) for m in mods]
    try:
        with torch.no_grad():
            for m in mods:
                m.lambda_1.fill_(float(lambda_1))
                m.lambda_2.fill_(float(lambda_2))
        yield model
    finally:
        with torch.no_grad():
            for m, (a, b) in zip(mods, saved):
                m.lambda_1.copy_(a)
                m.lambda_2.copy_(b)


@torch.no_grad()
def lambda_readout(model: TinyGPT, batches, lambda_1: float, lambda_2: float) -> dict:
    """Loss (nats) and per-layer attention entropy (nats, token-importance entropy) of a trained value-residual
    model whose every λ1, λ2 is set to the given values at inference. ``batches`` are (x, y) validation batches.

    λ1 = 0, λ2 = 1 removes V_1 (the values a plain Transformer would use); λ1 = 1, λ2 = 0 is SVFormer-like.
    Returns ``{"loss": float, "entropy": [per layer]}``. Raises ValueError on a model without value residual.
    """
    batches = list(batches)
    with lambdas_set_to(model, lambda_1, lambda_2):
        loss = mean_loss(model, batches)
        ent = [0.0] * model.cfg.n_layers
        for x, *_ in batches:
            tr = model(x, trace=True).trace
            for l, p in enumerate(tr.layers("attn.pattern")):
                ent[l] += float(attention_entropy(p).mean()) / len(batches)
    return {"loss": loss, "entropy": ent}


def trained_lambdas(model: TinyGPT) -> tuple[float, float]:
    """``(λ1, λ2)`` as trained, read from the first value-residual layer. Raises ValueError as
    :func:`lambdas_set_to`."""
    m = _value_residuals(model)[0]
    return m.lambda_1.item(), m.lambda_2.item()
